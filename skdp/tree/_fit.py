"""Plan, charge and release the leaves of random trees (shared by the tree
and the forest): the estimators stay thin over these stages."""

from dataclasses import dataclass

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from skdp.accounting import PrivacyCost
from skdp.accounting._composition import budget_left
from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import check_random_source
from skdp.mechanisms._additive import additive_cost
from skdp.mechanisms._grid import FixedPoint
from skdp.mechanisms._labels import LabelPlan
from skdp.stats._mean import BoundsPlan, check_mechanism_delta
from skdp.tree._leaf_counts import (
    leaf_class_counts,
    leaf_count_problem,
    leaf_probabilities,
    release_leaf_counts,
    shrinkage_weight,
    weighted_leaf_class_counts,
)
from skdp.tree._random_tree import draw_random_splits, leaf_indices
from skdp.utils._cells import as_cells
from skdp.utils._dask import ChunkedRows, is_dask_collection
from skdp.utils._dask_xy import (
    feature_rows,
    public_dask_classes,
    validate_dask_xy,
    xy_statistic,
)
from skdp.utils._groups import group_blocks
from skdp.utils._sample_weight import check_row_weights, weights_of_kept_rows
from skdp.utils._validation import validate_private_data

#: Most leaf counts one fit may release (``n_estimators × 2**max_depth ×
#: n_classes``): each count takes some 40 bytes through the release (the
#: exact count, the noisy one, the probabilities of the leaf and of its
#: ancestors), so 2**26 of them about 2.7 GB. Checked before the charge, so
#: that a fit too large for memory is refused instead of failing after it.
MAX_LEAF_COUNTS = 2**26
#: Most rows of a weighted fit: a cell's weighted count, in units of
#: ``2**-32``, stays below ``2**63`` (int64) for fewer than ``2**31`` rows.
MAX_WEIGHTED_ROWS = 2**31

__all__ = [
    "MAX_LEAF_COUNTS",
    "MAX_WEIGHTED_ROWS",
    "ForestRelease",
    "fit_random_trees",
    "forest_counts",
    "forest_proba",
    "leaf_count_statistic",
    "random_trees_cost",
    "rows_of_trees",
]


@dataclass
class ForestRelease:
    """What one fit releases: the label set, the bounds, the random splits
    and the leaves' noisy counts and probabilities (all trees stacked)."""

    classes: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    features: np.ndarray
    thresholds: np.ndarray
    leaf_counts: np.ndarray
    leaf_proba: np.ndarray
    noise_std: float


def _budgets(estimator):
    """``(selection, model)`` budgets, from public parameters only."""
    model_delta = estimator.mechanism == "gaussian"
    return LabelPlan.split(
        estimator.classes, estimator.epsilon, estimator.delta, model_delta
    )


def random_trees_cost(estimator, n_features=None):
    """The whole cost of a fit (public parameters only): the very items
    :func:`fit_random_trees` charges, each with its mechanism, so that an
    accountant with a tight composition plans what it records. Private
    bounds with ``n_features=None`` (the search's split is per feature) give
    the ``(epsilon, delta)`` upper bound instead."""
    selection, (eps_model, delta_model) = _budgets(estimator)
    private_bounds, _ = BoundsPlan.chooses_privately(estimator.bounds)
    if private_bounds and n_features is None:
        cost = PrivacyCost(eps_model, delta_model)
        return cost if selection is None else PrivacyCost(*selection) + cost
    labels = [] if selection is None else LabelPlan(None, *selection, "").cost_items()
    if private_bounds:
        bounds = BoundsPlan.build(
            estimator.bounds,
            n_features,
            eps_model * estimator.bounds_share,
            estimator.upper_limit,
        )
    else:
        bounds = BoundsPlan(0.0, None, None, None)
    eps_counts = budget_left(eps_model, bounds.epsilon)
    items = _cost_items(labels, bounds, eps_counts, delta_model)
    return PrivateEstimatorMixin._cost_of_items(items)


def _cost_items(label_items, bounds, eps_counts, delta):
    """The ledger items of one fit: label selection, bounds, leaf counts."""
    return [
        *label_items,
        *bounds.cost_items(),
        ("leaf class counts", additive_cost(eps_counts, delta)),
    ]


def _trees_per_row(n_trees, tree_rows):
    return 1 if tree_rows == "disjoint" else n_trees


def _plan(estimator, X, y, n_trees, tree_rows, unit):
    """Every refusal happens here, before the charge."""
    name = type(estimator).__name__
    model_delta = estimator.mechanism == "gaussian"
    unit.refuse_private(
        estimator, "label set", "classes=[...]", estimator.classes is None
    )
    unit.refuse_private(
        estimator,
        "bounds",
        "bounds=(lower, upper)",
        BoundsPlan.chooses_privately(estimator.bounds)[0],
    )
    labels, (eps_model, delta_model) = LabelPlan.from_estimator(
        estimator.classes, estimator.epsilon, estimator.delta, y, name, model_delta
    )
    check_mechanism_delta(estimator.mechanism, delta_model)
    bounds = BoundsPlan.build(
        estimator.bounds,
        estimator.n_features_in_,  # X's (a Dask input's rows hold y too)
        eps_model * estimator.bounds_share,
        estimator.upper_limit,
    )
    eps_counts = budget_left(eps_model, bounds.epsilon)
    # a selected label set has at most one label per row (the shape of X
    # is public); the size only widens the noise grid's rounding slack
    n_classes = max(X.shape[0], 2) if labels.classes is None else labels.classes.size
    n_values = n_trees * 2**estimator.max_depth * n_classes
    _check_size(name, n_trees, estimator.max_depth, labels.classes)
    per_row = _trees_per_row(n_trees, tree_rows)
    problem = leaf_count_problem(
        n_values, per_row, eps_counts, delta_model, unit.unit_rows
    )
    if problem is not None:
        raise ValueError(
            f"{name} cannot release its leaf counts at epsilon={eps_counts!r}: "
            f"{problem} Raise epsilon. Nothing was charged."
        )
    return labels, bounds, (eps_counts, delta_model)


def _check_size(name, n_trees, max_depth, classes):
    """Refuse, before the charge, a release of more than ``MAX_LEAF_COUNTS``
    counts. A label set selected privately has at least 2 labels: the check
    uses 2 (the size it will release is not known before the charge)."""
    n_classes = 2 if classes is None else classes.size
    n_counts = n_trees * 2**max_depth * n_classes
    if n_counts > MAX_LEAF_COUNTS:
        raise ValueError(
            f"{name} would release {n_counts} leaf counts ({n_trees} tree(s) × "
            f"2**{max_depth} leaves × {n_classes} classes), more than "
            f"{MAX_LEAF_COUNTS} (2**26, some 2.7 GB of memory). Lower max_depth "
            "or the number of trees. Nothing was charged."
        )


def _validated(estimator, X, y, n_trees, tree_rows):
    """``(X, y)`` in memory, or, on Dask input, the joined rows
    (:func:`~skdp.utils._dask_xy.validate_dask_xy`, the class index last)
    and an empty ``y`` of the public classes' type; refusals before the
    charge."""
    if not (is_dask_collection(X) or is_dask_collection(y)):
        X, y = validate_private_data(estimator, X, as_cells(y))
        check_classification_targets(y)
        return X, y
    name = type(estimator).__name__
    classes = public_dask_classes(estimator.classes, name)
    if tree_rows == "disjoint" and n_trees > 1:
        raise ValueError(
            f"{name}(tree_rows='disjoint') draws each row's tree from the "
            "random source row by row, in memory; on Dask input use "
            "tree_rows='all', or fit on X.compute() and y.compute(). Nothing "
            "was charged."
        )
    return validate_dask_xy(estimator, X, y, classes=classes), classes[:0]


def _check_weighted_rows(estimator, X, weights):
    """Refuse, before the charge, a weighted fit whose int64 sums could
    overflow (:data:`MAX_WEIGHTED_ROWS`)."""
    if weights is not None and X.shape[0] >= MAX_WEIGHTED_ROWS:
        raise ValueError(
            f"{type(estimator).__name__} sums the weights exactly for fewer "
            f"than {MAX_WEIGHTED_ROWS} rows; got {X.shape[0]}. Fit on a "
            "sample, or without sample_weight. Nothing was charged."
        )


def fit_random_trees(
    estimator, X, y, n_trees, tree_rows, groups=None, sample_weight=None
):
    """Validate, charge, and release ``n_trees`` random trees' leaves.

    ``tree_rows`` is ``"disjoint"`` (each row counted in one tree drawn
    uniformly at random, independently of the data and of the other rows;
    with ``groups``, each whole group in the tree of its keyed hash) or
    ``"all"`` (every row in every tree). With ``groups`` each group keeps at
    most ``estimator.max_rows_per_group`` rows and the sensitivity is that
    many times the row's. ``sample_weight`` (in [0, 1], in memory) weights
    each row's count. On Dask input the leaf counts are summed block by
    block (:func:`leaf_count_statistic`), the same integers as in memory.

    Returns
    -------
    release : ForestRelease
    """
    X, y = _validated(estimator, X, y, n_trees, tree_rows)
    weights = check_row_weights(estimator, sample_weight, X)
    _check_weighted_rows(estimator, X, weights)
    unit = estimator._privacy_unit(groups, X)
    labels, bounds, (eps_counts, delta) = _plan(
        estimator, X, y, n_trees, tree_rows, unit
    )
    source = check_random_source(estimator.random_state)
    items = _cost_items(labels.cost_items(), bounds, eps_counts, delta)
    estimator._charge([(unit.label(what), *cost) for what, *cost in items], unit=unit)
    # after the charge: nothing below raises, warns or branches on the data
    # (LabelPlan.run's refusal is a function of the released label set)
    if isinstance(X, ChunkedRows):
        classes, codes = labels.classes, None
        lower, upper = bounds.run(feature_rows(X), source, estimator)
    else:
        classes, X, codes = labels.run(X, y, source)
        if weights is not None and labels.classes is None:  # the rows kept
            weights = weights_of_kept_rows(weights, y, classes)
        X, codes, weights, groups = _bounded_weighted(unit, source, X, codes, weights)
        lower, upper = bounds.run(X, source, estimator)
    features, thresholds = draw_random_splits(
        lower, upper, estimator.max_depth, source, n_trees
    )
    counts, per_row = forest_counts(
        X,
        codes,
        classes.size,
        features,
        thresholds,
        tree_rows,
        source,
        groups,
        weights,
    )
    noisy, noise_std = release_leaf_counts(
        counts, per_row, eps_counts, delta, source, unit.unit_rows
    )
    return ForestRelease(
        classes=classes,
        lower=lower,
        upper=upper,
        features=features,
        thresholds=thresholds,
        leaf_counts=noisy,
        leaf_proba=leaf_probabilities(noisy, shrinkage_weight(noise_std, n_trees)),
        noise_std=noise_std,
    )


def _bounded(unit, source, X, codes):
    """``X``, ``codes`` and the group labels of the kept rows (at most
    ``k`` per group, :func:`~skdp.utils._groups.kept_rows`); unchanged, with
    no labels, without groups."""
    X, codes, _, groups = _bounded_weighted(unit, source, X, codes, None)
    return X, codes, groups


def _bounded_weighted(unit, source, X, codes, weights):
    """As :func:`_bounded`, with the kept rows' weights (a row's weight is
    part of its content, which the keyed choice reads; None: unweighted,
    the choice of :func:`_bounded`)."""
    if unit.groups is None:
        return X, codes, weights, None
    kept = unit.kept(source, X, codes, weights)
    weights = None if weights is None else weights[kept]
    return X[kept], codes[kept], weights, unit.groups[kept]


def leaf_count_statistic(X, codes, features, thresholds, n_classes):
    """Exact leaf class counts of a block of rows in every tree (int64, of
    shape ``(n_trees, n_leaves, n_classes)``): additive over rows, for
    :func:`~skdp.utils._dask_xy.xy_statistic`. ``codes`` are the class
    indices as floats (the joined column of a Dask block)."""
    leaves = leaf_indices(X, features, thresholds)
    codes = codes.astype(np.intp)
    return leaf_class_counts(leaves, codes, features.shape[1] + 1, n_classes)


def forest_counts(
    X,
    codes,
    n_classes,
    features,
    thresholds,
    tree_rows,
    source,
    groups=None,
    weights=None,
):
    """The trees' exact leaf class counts, and in how many trees a row counts.

    Every row reaches one leaf per tree; with ``tree_rows="disjoint"`` (and
    more than one tree) each row is counted in one tree drawn uniformly from
    ``source``, independently of the data and of the other rows (with
    ``groups``: each whole group in the tree of its keyed hash,
    :func:`~skdp.utils._groups.group_blocks`, the same for any row order),
    else in every tree (:func:`~skdp.tree._leaf_counts.leaf_count_sensitivity`
    of the second value is the release's sensitivity, per row of the unit).
    """
    n_trees, n_nodes = features.shape
    if tree_rows == "disjoint" and n_trees > 1 and groups is not None:
        trees = group_blocks(groups, n_trees, int(source.uint64()), [X, codes])
    elif isinstance(X, ChunkedRows):  # every row in every tree (checked)
        args = (features, thresholds, n_classes)
        counts = xy_statistic(X, leaf_count_statistic, *args)
        return counts, _trees_per_row(n_trees, tree_rows)
    else:
        tree_of_row = None
        if tree_rows == "disjoint" and n_trees > 1:
            tree_of_row = source.integers(n_trees, size=X.shape[0]).astype(np.intp)
        trees = rows_of_trees(tree_of_row, n_trees)
    if weights is not None:
        return _weighted_counts(
            X, codes, n_classes, features, thresholds, trees, weights
        ), _trees_per_row(n_trees, tree_rows)
    counts = np.empty((n_trees, n_nodes + 1, n_classes), dtype=np.int64)
    # one tree at a time: memory of the rows, not of rows x trees
    for tree, rows in enumerate(trees):
        one = slice(tree, tree + 1)
        leaves = leaf_indices(X[rows], features[one], thresholds[one])
        counts[one] = leaf_class_counts(leaves, codes[rows], n_nodes + 1, n_classes)
    return counts, _trees_per_row(n_trees, tree_rows)


def _weighted_counts(X, codes, n_classes, features, thresholds, trees, weights):
    """The trees' exact weighted counts, one FixedPoint (one tree at a time,
    :func:`~skdp.tree._leaf_counts.weighted_leaf_class_counts`)."""
    n_leaves = features.shape[1] + 1
    numerators = []
    for tree, rows in enumerate(trees):
        one = slice(tree, tree + 1)
        leaves = leaf_indices(X[rows], features[one], thresholds[one])
        counts = weighted_leaf_class_counts(
            leaves, codes[rows], n_leaves, n_classes, weights[rows]
        )
        numerators.extend(counts.numerators)
    shape = (features.shape[0], n_leaves, n_classes)
    return FixedPoint(tuple(numerators), counts.exponent, shape)


def rows_of_trees(tree_of_row, n_trees):
    """The rows each tree counts: all of them (``tree_of_row`` None), or
    those assigned to it, in their order."""
    if tree_of_row is None:
        return [slice(None)] * n_trees
    order = np.argsort(tree_of_row, kind="stable")
    starts = np.searchsorted(tree_of_row[order], np.arange(n_trees + 1))
    return [order[starts[t] : starts[t + 1]] for t in range(n_trees)]


def forest_proba(X, features, thresholds, leaf_proba, weights):
    """Weighted mean over the trees (``weights``, summing to 1:
    :func:`~skdp.tree._leaf_counts.tree_weights`) of the leaf probabilities
    the rows reach (post-processing)."""
    leaves = leaf_indices(X, features, thresholds)
    trees = np.arange(features.shape[0])[:, None]
    return np.tensordot(weights, leaf_proba[trees, leaves], axes=1)
