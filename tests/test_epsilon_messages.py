"""Every invalid ε is refused in the same words, by estimators and functions.

Estimators raise scikit-learn's ``InvalidParameterError`` in its own form
("The 'epsilon' parameter of X must be ... Got ... instead.") and functions a
``ValueError``; both say ``> 0 and finite``, name the value and give the fix.
"""

import importlib
import inspect
import math
import re

import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from test_common import ESTIMATORS, _fit_data, public_callables

import skdp
from skdp import mechanisms as m
from skdp.audit import assert_dp
from skdp.model_selection import privacy_utility_curve
from skdp.utils import check_epsilon

BAD = [0, -1, math.nan, math.inf]
FIX = r"Pass a positive, finite privacy loss, e\.g\. epsilon=1\.0\."


def _value(bad):
    """The value as either message form prints it (``-1`` or ``-1.0``)."""
    return re.escape(repr(bad)) + (r"(\.0)?" if isinstance(bad, int) else "")


def estimator_message(name, bad):
    return (
        rf"^The 'epsilon' parameter of {name} must be > 0 and finite\. "
        rf"Got {_value(bad)} instead\. {FIX}$"
    )


def function_message(bad):
    return rf"^epsilon must be > 0 and finite; got {_value(bad)}\. {FIX}$"


def _one_per_class():
    seen = {}
    for est in ESTIMATORS:
        if "epsilon" in est.get_params(deep=False):
            seen.setdefault(type(est).__name__, est)
    return list(seen.values())


WITH_EPSILON = _one_per_class()


def test_every_public_estimator_with_epsilon_is_covered():
    expected = {
        name
        for name in skdp.__all__
        if inspect.isclass(getattr(skdp, name))
        and hasattr(getattr(skdp, name), "fit")
        and "epsilon" in inspect.signature(getattr(skdp, name)).parameters
    }
    assert expected == {type(est).__name__ for est in WITH_EPSILON}


@pytest.mark.filterwarnings("ignore::skdp.PTRRefusedWarning")
@pytest.mark.parametrize("bad", BAD, ids=repr)
@pytest.mark.parametrize("estimator", WITH_EPSILON, ids=lambda e: type(e).__name__)
def test_estimators_refuse_a_bad_epsilon_in_one_form(estimator, bad):
    X, y = _fit_data(estimator)
    acc = skdp.BudgetAccountant()
    est = clone(estimator).set_params(epsilon=bad, accountant=acc)
    with pytest.raises(ValueError) as info:
        est.fit(X, y)
    assert re.match(estimator_message(type(est).__name__, bad), str(info.value))
    assert len(acc.entries) == 0


# one valid call per public function with an ``epsilon`` parameter, with ε
# left to the test
FUNCTIONS = {
    "skdp.mechanisms.above_threshold": lambda e: m.above_threshold(
        [0.0, 1.0], 0.5, e, random_state=0
    ),
    "skdp.mechanisms.analytic_gaussian_sigma": lambda e: m.analytic_gaussian_sigma(
        1.0, e, 1e-6
    ),
    "skdp.mechanisms.exponential_mechanism": lambda e: m.exponential_mechanism(
        [0.0, 1.0], e, 1.0, random_state=0
    ),
    "skdp.mechanisms.gaussian_cost": lambda e: m.gaussian_cost(e, 1e-6),
    "skdp.mechanisms.gaussian_mechanism": lambda e: m.gaussian_mechanism(
        0.0, 1.0, e, 1e-6, random_state=0
    ),
    "skdp.mechanisms.gaussian_noise_multipliers": lambda e: (
        m.gaussian_noise_multipliers(e, 1e-6, [1.0])
    ),
    "skdp.mechanisms.laplace_cost": m.laplace_cost,
    "skdp.mechanisms.laplace_mechanism": lambda e: m.laplace_mechanism(
        0.0, 1.0, e, random_state=0
    ),
    "skdp.mechanisms.partition_noise_std": m.partition_noise_std,
    "skdp.mechanisms.partition_selection": lambda e: m.partition_selection(
        [5, 7], e, 1e-6, random_state=0
    ),
    "skdp.mechanisms.partition_threshold": lambda e: m.partition_threshold(e, 1e-6),
    "skdp.mechanisms.permute_and_flip": lambda e: m.permute_and_flip(
        [0.0, 1.0], e, 1.0, random_state=0
    ),
    "skdp.mechanisms.select_labels": lambda e: m.select_labels(
        [5, 7], e, 1e-6, random_state=0
    ),
    "skdp.mechanisms.report_noisy_max": lambda e: m.report_noisy_max(
        [0.0, 1.0], e, 1.0, random_state=0
    ),
    "skdp.mechanisms.selection_cost": m.selection_cost,
    "skdp.mechanisms.sparse": lambda e: m.sparse(
        [0.0, 1.0], 0.5, e, cutoff=1, random_state=0
    ),
    "skdp.mechanisms.svt_cost": m.svt_cost,
    "skdp.utils.check_epsilon": check_epsilon,
    **{
        f"skdp.metrics.{name}": (
            lambda e, name=name, kwargs=kwargs: getattr(skdp.metrics, name)(
                [0, 1], [0, 1], epsilon=e, random_state=0, **kwargs
            )
        )
        for name, kwargs in {
            "private_accuracy_score": {"labels": [0, 1]},
            "private_balanced_accuracy_score": {"labels": [0, 1]},
            "private_classification_report": {"labels": [0, 1]},
            "private_confusion_matrix": {"labels": [0, 1]},
            "private_f1_score": {"labels": [0, 1]},
            "private_precision_recall_fscore_support": {"labels": [0, 1]},
            "private_precision_score": {"labels": [0, 1]},
            "private_recall_score": {"labels": [0, 1]},
            "private_log_loss": {"labels": [0, 1]},
            "private_average_precision_score": {},
            "private_calibration_curve": {},
            "private_precision_recall_curve": {},
            "private_roc_auc_score": {},
            "private_roc_curve": {},
            "private_score_histograms": {},
            "private_explained_variance_score": {"target_bounds": (0, 1)},
            "private_mean_absolute_error": {"target_bounds": (0, 1)},
            "private_mean_squared_error": {"target_bounds": (0, 1)},
            "private_r2_score": {"target_bounds": (0, 1)},
            "private_regression_report": {"target_bounds": (0, 1)},
        }.items()
    },
    "skdp.metrics.PrivateScorer": lambda e: skdp.metrics.PrivateScorer(
        "accuracy", e, 0.0, {}
    ),
    "skdp.metrics.make_private_scorer": lambda e: skdp.metrics.make_private_scorer(
        "accuracy", epsilon=e
    ),
}
# Budgets and claims, where 0 (nothing) is valid: ">= 0" in the same form.
ZERO_ALLOWED = {
    "skdp.BudgetAccountant": lambda e: skdp.BudgetAccountant(e),
    "skdp.PrivacyCost": lambda e: skdp.PrivacyCost(e),
    "skdp.audit.assert_dp": lambda e: assert_dp(lambda d: 0, 0, 1, epsilon=e),
}
# Records of past releases, and the curve (``epsilons``, tested below).
NOT_AN_EPSILON_ARGUMENT = {
    "skdp.PrivacyUtilityDisplay",
    "skdp.accounting.LedgerEntry",
    "skdp.audit.AuditResult",
    "skdp.model_selection.PrivacyUtilityCurve",
    "skdp.privacy_utility_curve",
}


def _resolve(name):
    module, attr = name.rsplit(".", 1)
    return getattr(importlib.import_module(module), attr)


def test_every_public_function_taking_epsilon_is_covered():
    covered = {
        id(_resolve(name))
        for name in [*FUNCTIONS, *ZERO_ALLOWED, *NOT_AN_EPSILON_ARGUMENT]
    }
    missing = [
        name
        for name, obj in public_callables()
        if not (inspect.isclass(obj) and hasattr(obj, "fit"))
        and not (inspect.isclass(obj) and issubclass(obj, BaseException))
        and any("epsilon" in p for p in inspect.signature(obj).parameters)
        and id(obj) not in covered
    ]
    assert missing == []


@pytest.mark.parametrize("bad", BAD, ids=repr)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functions_refuse_a_bad_epsilon_in_one_form(name, bad):
    with pytest.raises(ValueError) as info:
        FUNCTIONS[name](bad)
    assert re.match(function_message(bad), str(info.value))


@pytest.mark.parametrize("bad", [-1, math.nan], ids=repr)
@pytest.mark.parametrize("name", sorted(ZERO_ALLOWED))
def test_budgets_and_claims_refuse_a_bad_epsilon_in_the_same_form(name, bad):
    with pytest.raises(ValueError) as info:
        ZERO_ALLOWED[name](bad)
    assert re.match(rf"^epsilon must be >= 0 .*; got {_value(bad)}\. ", str(info.value))
    assert "e.g. epsilon=1.0" in str(info.value)


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_curve_refuses_a_bad_epsilon_in_the_same_words(bad):
    with pytest.raises(ValueError, match=r"epsilons must each be > 0 and finite; got"):
        privacy_utility_curve(
            skdp.PrivateLogisticRegression(),
            [[0.0], [1.0]] * 10,
            [0, 1] * 10,
            epsilons=[1.0, bad],
            reference_estimator=LogisticRegression(),
        )
