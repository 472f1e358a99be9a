"""repeat_and_select: the best of K runs, K drawn first, one tie key a run."""

import math

from skdp.model_selection._random_stopping_cost import repeat_and_select


class Keys:
    """Hands out the given tie keys in order and records each draw."""

    def __init__(self, keys, log):
        self.keys, self.log = iter(keys), log

    def random(self):
        self.log.append("key")
        return next(self.keys)


def runs_of(outputs, log):
    outputs = iter(outputs)

    def run_once():
        log.append("run")
        return next(outputs)

    return run_once


def draw(k, log):
    def draw_k():
        log.append("K")
        return k

    return draw_k


def test_k_is_drawn_first_then_each_run_then_its_tie_key():
    log = []
    best = repeat_and_select(
        runs_of([(0.2, "a"), (0.9, "b"), (0.5, "c")], log),
        draw(3, log),
        Keys([0.1, 0.2, 0.3], log),
    )
    assert best == (0.9, "b")
    assert log == ["K", "run", "key", "run", "key", "run", "key"]


def test_no_run_releases_nothing_and_draws_nothing_more():
    log = []
    assert repeat_and_select(runs_of([], log), draw(0, log), Keys([], log)) is None
    assert log == ["K"]


def test_a_tie_in_the_score_goes_to_the_largest_key():
    log = []
    runs = [(0.5, "a"), (0.5, "b"), (0.5, "c"), (0.1, "d")]
    keys = [0.3, 0.7, 0.1, 0.99]
    best = repeat_and_select(runs_of(runs, log), draw(4, log), Keys(keys, log))
    assert best == (0.5, "b")


def test_a_nan_score_ranks_below_every_score_and_is_kept_unchanged():
    log = []
    runs = [(math.nan, "a"), (-1e308, "b")]
    best = repeat_and_select(runs_of(runs, log), draw(2, log), Keys([0.9, 0.1], log))
    assert best == (-1e308, "b")
    # NaN ranks as -inf: the key decides between them
    runs = [(math.nan, "a"), (-math.inf, "b")]
    best = repeat_and_select(runs_of(runs, log), draw(2, log), Keys([0.1, 0.9], log))
    assert best == (-math.inf, "b")
    ((score, name),) = [
        repeat_and_select(runs_of(runs, log), draw(1, log), Keys([0.5], log))
    ]
    assert math.isnan(score) and name == "a"
