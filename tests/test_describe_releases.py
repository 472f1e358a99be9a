"""``skdp describe`` releases what the estimators release, without scikit-learn.

describe calls the release functions of SVTClipSelector, PrivateMean and
PrivateQuantile directly (so that the command does not import scikit-learn);
these tests fit the estimators themselves with the same parameters and seeds
and ask for the same numbers.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skdp import BudgetAccountant, PrivateMean, PrivateQuantile, SVTClipSelector
from skdp._describe import QUANTILES, describe
from skdp.accounting._composition import split_budget

ROOT = Path(__file__).resolve().parents[1]


def column_seeds(random_state, n_seeds):
    """The first seeds of describe's documented stream for an int seed."""
    rng = np.random.RandomState(random_state)
    return [int(rng.randint(2**31 - 1)) for _ in range(n_seeds)]


def fitted(estimator, values):
    return estimator.set_params(accountant=BudgetAccountant()).fit(values[:, None])


def estimators_row(values, epsilon, bounds, random_state):
    """One column described by fitting the three estimators in turn."""
    if bounds is None:
        eps_bounds, eps_mean, eps_quantiles = split_budget(epsilon, [0.2, 0.4, 0.4])
        seed_bounds, seed_mean, seed_quantiles = column_seeds(random_state, 3)
        selector = fitted(SVTClipSelector(eps_bounds, random_state=seed_bounds), values)
        lower, upper = float(selector.lower_[0]), float(selector.upper_[0])
        if upper <= lower:
            upper = lower + max(1.0, abs(lower)) * 1e-9
        tail_rows = selector.n_above_ * (2 if lower < 0 else 1)
    else:
        eps_mean, eps_quantiles = split_budget(epsilon, [0.5, 0.5])
        seed_mean, seed_quantiles = column_seeds(random_state, 2)
        (lower, upper), tail_rows = bounds, None
    mean = fitted(
        PrivateMean(eps_mean, bounds=(lower, upper), random_state=seed_mean), values
    )
    quartiles = fitted(
        PrivateQuantile(
            QUANTILES,
            epsilon=eps_quantiles,
            bounds=(lower, upper),
            method="permute_and_flip",
            random_state=seed_quantiles,
        ),
        values,
    ).quantiles_[:, 0]
    return {
        "count": max(0, round(float(mean.count_))),
        "mean": float(mean.mean_[0]),
        "median": float(quartiles[1]),
        "iqr": float(max(quartiles[2] - quartiles[0], 0.0)),
        "lower": lower,
        "upper": upper,
        "tail_rows": tail_rows,
    }


def columns():
    rng = np.random.default_rng(3)
    return {
        "lognormal": rng.lognormal(3, 1, 2000),
        "both signs": rng.normal(-20, 50, 1500),
        "ties": rng.choice([0.0, 1.0, 2.0, 7.5], 800),
        "one row": np.array([4.0]),
        "large": rng.uniform(-1e12, 3e12, 500),
    }


@pytest.mark.parametrize("name", list(columns()))
@pytest.mark.parametrize("bounds", [None, (-10.0, 100.0)])
def test_describe_releases_what_the_estimators_fit(name, bounds):
    values = columns()[name]
    for seed, epsilon in ((0, 1.0), (1, 0.3), (2, 5.0)):
        row = describe(
            {name: values},
            epsilon=epsilon,
            bounds=None if bounds is None else {name: bounds},
            accountant=BudgetAccountant(),
            random_state=seed,
        )[name]
        expected = estimators_row(values, epsilon, bounds, seed)
        assert {key: row[key] for key in expected} == expected


def test_too_small_an_epsilon_for_the_bound_search_charges_nothing():
    accountant = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match=r"cannot search bounds.*Nothing was charged"):
        describe({"a": np.arange(10.0)}, epsilon=1e-30, accountant=accountant)
    assert accountant.total() == (0.0, 0.0)
    assert not accountant.entries


def test_describe_imports_neither_sklearn_nor_scipy_stats(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("x,y\n1,2\n3,\n-5,7.5\n")
    script = (
        "import sys\n"
        "import skdp._describe\n"
        "heavy = ('sklearn', 'scipy.stats', 'pandas')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "from skdp.__main__ import main\n"
        f"assert main(['describe', {str(path)!r}, '--seed', '0', '--quiet']) == 0\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        check=True,
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "[]"  # on import
    assert "count" in result.stdout and lines[-1] == "[]"  # after describing
