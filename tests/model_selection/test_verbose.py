"""``verbose`` progress of NoisyMaxSearchCV and privacy_utility_curve.

Progress lines may show public things only: counts, parameters, timings, the
cost computed from public parameters and released results. Every line is
matched against an allowlist, so a line that printed a score or a vote (what
the private selection protects) would fail these tests.
"""

import re

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdp import BudgetAccountant, SampleAggregateEstimator
from skdp.model_selection import (
    NoisyMaxSearchCV,
    _search_selection,
    privacy_utility_curve,
)

TIME = r"total time=\d+\.\ds"
SEARCH_LINES = [
    r"Fitting (1 fold|2 folds) for each of 2 candidates in each of 4 blocks, "
    r"totalling (8|16) fits, then 1 refit on all rows",
    r"Fitting 2 candidates on the training part \(each row held out with "
    r"probability 0\.3\), totalling 2 fits",
    r"charged epsilon=[\d.]+, delta=[\de.-]+ \(computed from public parameters\)",
    rf"END block [1-4]/4; {TIME}",
    rf"END candidate [12]/2 \((estimator__)?C=(0\.01|1\.0)\); {TIME}",
    r"selected candidate [12]/2 \(released by permute-and-flip\): "
    r"(estimator__)?C=(0\.01|1\.0)",
    rf"END refit of the selected candidate on all rows; {TIME}",
]


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=2000) > 0).astype(int)
    return X, y


def private_lr(params=None):
    # the public classes: a holdout candidate may train on a part with none
    return SampleAggregateEstimator(
        LogisticRegression(**(params or {})), classes=[0, 1]
    )


def search(method, verbose):
    plain = method == "subsample"
    return NoisyMaxSearchCV(
        LogisticRegression() if plain else private_lr(),
        {"C" if plain else "estimator__C": [0.01, 1.0]},
        method=method,
        n_blocks=4,
        refit=private_lr if plain else False,
        accountant=BudgetAccountant(),
        random_state=0,
        verbose=verbose,
    )


def lines_of(capsys):
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(line.startswith("[NoisyMaxSearchCV] ") for line in lines)
    return [line.removeprefix("[NoisyMaxSearchCV] ") for line in lines]


def assert_allowed(lines):
    for line in lines:
        assert any(re.fullmatch(p, line) for p in SEARCH_LINES), line


@pytest.mark.parametrize("method", ["subsample", "holdout"])
def test_verbose_zero_prints_nothing(data, capsys, method):
    search(method, 0).fit(*data)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("cv, folds", [(1, "1 fold"), (2, "2 folds")])
def test_subsample_progress_lines(data, capsys, cv, folds):
    fitted = search("subsample", 2).set_params(cv=cv).fit(*data)
    lines = lines_of(capsys)
    assert_allowed(lines)
    assert lines[0].startswith(f"Fitting {folds} for each of 2 candidates")
    assert lines[1].startswith("charged epsilon=2")  # selection 1 + refit 1
    blocks = [re.match(r"END block (\d)/4", line) for line in lines]
    assert sorted(int(m.group(1)) for m in blocks if m) == [1, 2, 3, 4]
    chosen = f"C={fitted.best_params_['C']!r}"
    assert lines[-2].endswith(chosen) and lines[-2].startswith("selected candidate")
    assert lines[-1].startswith("END refit")


def test_verbose_one_prints_the_plan_and_the_release_only(data, capsys):
    search("subsample", 1).fit(*data)
    lines = lines_of(capsys)
    assert_allowed(lines)
    assert len(lines) == 4  # plan, charge, selection, refit
    assert not any("END block" in line for line in lines)


def test_holdout_progress_prints_no_score(data, capsys, monkeypatch):
    # Make every held-out total a distinctive number, then look for it (and
    # the mean per row) in any format in the output.
    totals = []
    real = _search_selection.holdout_row_scores

    def distinctive(model, X, y, scoring, loss_bound):
        rows = real(model, X, y, scoring, loss_bound) * 0.987654321
        totals.append(rows.sum())
        totals.append(rows.mean())
        return rows

    monkeypatch.setattr(_search_selection, "holdout_row_scores", distinctive)
    search("holdout", 3).fit(*data)
    out = capsys.readouterr().out
    lines = [line.removeprefix("[NoisyMaxSearchCV] ") for line in out.splitlines()]
    assert totals
    assert "score" not in out.lower()
    for value in totals:
        for text in (repr(value), f"{value:.4g}", f"{value:.3g}", f"{value:.2f}"):
            assert text not in out, text
    assert_allowed(lines)
    assert sum("END candidate" in line for line in lines) == 2


def test_curve_verbose_levels(data, capsys):
    def run(verbose):
        privacy_utility_curve(
            private_lr(),
            *data,
            epsilons=[0.5, 1.0],
            n_repeats=3,
            accountant=BudgetAccountant(),
            random_state=0,
            verbose=verbose,
        )
        return capsys.readouterr().out.splitlines()

    assert run(0) == []
    one = run(1)
    assert one[0] == (
        "[privacy_utility_curve] Fitting 3 repeats for each of 2 epsilons, "
        "totalling 6 fits"
    )
    assert [line.split(":")[0] for line in one[1:]] == [
        "[privacy_utility_curve] epsilon=0.5",
        "[privacy_utility_curve] epsilon=1",
    ]
    two = run(2)
    ends = [line for line in two if " END " in line]
    assert len(ends) == 6
    assert all(re.search(rf"repeat [1-3]/3; {TIME}$", line) for line in ends)
    three = run(3)
    assert all("score=" in line for line in three if " END " in line)
