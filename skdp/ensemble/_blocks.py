"""Blocks of sample-and-aggregate: partition, block fits, votes and predictions.

Everything here runs after the charge on one block at a time (or on the
released models at predict time); nothing raises or warns on data (see
:class:`~skdp.ensemble.SampleAggregateEstimator`, Notes).
"""

import math
from numbers import Integral

import numpy as np
from sklearn.base import clone

from skdp.mechanisms._selection import _select_many
from skdp.utils._groups import group_blocks, group_codes, kept_rows
from skdp.utils._warnings import silenced

_TEMPLATE_ROWS_PER_CLASS = 2


# -- partition ---------------------------------------------------------------
def _block_labels(n_samples, n_blocks, source):
    """One independent, uniform block label per row (data-independent).

    Stored in the smallest unsigned integer type that holds them, so that the
    stable sort of :func:`_block_indices` is a radix sort.
    """
    labels = source.integers(n_blocks, size=n_samples)
    return labels.astype(np.min_scalar_type(max(n_blocks - 1, 0)))


def _group_block_labels(groups, n_blocks, source):
    """One block label per row, the same for all rows of a group.

    Each group gets an independent uniform label (:func:`_block_labels` over
    the groups' codes): with or without any one group, the other groups'
    labels are independent and uniform, so the partitions couple with every
    other group in the same block and the added group in one block (the
    argument of the row labels, for groups). Unlike
    :func:`_group_block_indices` it reads no row content, so it takes any
    ``X`` (a DataFrame of strings); the rows keep their input order.
    """
    codes, n_codes = group_codes(groups)
    return _block_labels(n_codes, n_blocks, source)[codes]


def _block_indices(labels, n_blocks):
    """Row indices of each of exactly ``n_blocks`` blocks (some may be empty)."""
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=n_blocks)
    return np.split(order, np.cumsum(counts)[:-1])


def _group_block_indices(unit, n_blocks, source, X, y):
    """Row indices of each of ``n_blocks`` blocks, a whole group in one.

    Each group first keeps at most ``unit.max_rows`` rows
    (:func:`~skdp.utils._groups.kept_rows`), then goes whole to the block of
    its keyed hash (:func:`~skdp.utils._groups.group_blocks`); both keys are
    drawn from ``source``, and both choices are functions of the group's own
    rows, so adding or removing a group changes one block only. ``y`` is
    numeric (class indices for a classifier).
    """
    columns = [X, y]
    kept = kept_rows(unit.groups, unit.max_rows, int(source.uint64()), columns)
    kept_columns = [c[kept] for c in columns]
    blocks = group_blocks(
        unit.groups[kept], n_blocks, int(source.uint64()), kept_columns
    )
    return [kept[rows] for rows in blocks]


def _average_blocks(outputs, n_blocks):
    """Average of exactly ``n_blocks`` block outputs (stacked on axis 0).

    The noise is calibrated to a sum divided by ``n_blocks``; averaging over
    fewer outputs (the Programming-DP bug: 593 chunks, noise for 600) would
    under-noise the release, so it is refused.
    """
    outputs = np.asarray(outputs, dtype=np.float64)
    if outputs.shape[0] != n_blocks:
        raise RuntimeError(
            f"internal error: {outputs.shape[0]} block outputs for "
            f"n_blocks={n_blocks}; nothing was released (the noise is calibrated "
            "to exactly n_blocks blocks)."
        )
    return outputs.sum(axis=0) / n_blocks


# -- parameter layout of linear models ---------------------------------------
class _Layout:
    """Shapes of ``coef_`` and ``intercept_``, from a model fitted on public data."""

    def __init__(self, coef_shape, intercept_shape, classes):
        self.coef_shape, self.intercept_shape = coef_shape, intercept_shape
        self.classes = classes

    @property
    def size(self):
        return math.prod(self.coef_shape) + math.prod(self.intercept_shape)

    @classmethod
    def of(cls, model, classes):
        """The layout of ``model``, or None when it has no numeric parameters."""
        shapes = []
        for name in ("coef_", "intercept_"):
            value = getattr(model, name, None)
            if value is None or not hasattr(np.asarray(value), "dtype"):
                return None
            value = np.asarray(value)
            if value.dtype.kind not in "biuf":
                return None
            shapes.append(value.shape)
        return cls(shapes[0], shapes[1], classes)

    def vector(self, model):
        """Flattened ``[coef_, intercept_]``; None if it does not fit the layout."""
        if self.classes is not None:
            fitted = getattr(model, "classes_", None)
            if fitted is None or not np.array_equal(fitted, self.classes):
                return None
        other = _Layout.of(model, self.classes)
        if other is None or (other.coef_shape, other.intercept_shape) != (
            self.coef_shape,
            self.intercept_shape,
        ):
            return None
        vec = np.concatenate(
            [np.ravel(model.coef_), np.ravel(model.intercept_)]
        ).astype(np.float64)
        return vec if np.all(np.isfinite(vec)) else None

    def assign(self, model, vector):
        """Set ``coef_`` and ``intercept_`` of ``model`` from a flat vector."""
        p = math.prod(self.coef_shape)
        model.coef_ = vector[:p].reshape(self.coef_shape)
        intercept = vector[p:].reshape(self.intercept_shape)
        model.intercept_ = float(intercept) if intercept.ndim == 0 else intercept
        return model


def replaces_random_state(value, keep_integers):
    """Whether a block's seed replaces the ``random_state`` ``value``.

    Always, unless ``keep_integers`` and ``value`` is an integer: None draws
    from NumPy's global generator and a generator object is shared too,
    while an integer shares nothing with other fits.
    """
    return not (keep_integers and isinstance(value, Integral))


def _seeded_clone(estimator, seed, *, keep_integers=False):
    """Unfitted clone with every ``random_state`` parameter set to ``seed``.

    Also the ``random_state`` of an object given as a parameter that is not
    an estimator, such as a splitter (``cv=KFold(shuffle=True)``): left at
    None it draws from NumPy's global generator, so how many numbers one
    block's fit draws (a permutation of its rows) would move the next
    blocks' draws, and a block's output would depend on another block's
    rows. The clone holds its own deep copies of such objects. With
    ``keep_integers``, a ``random_state`` already set to an integer (which
    shares nothing) is left as the user gave it.
    """
    model = clone(estimator)
    params = model.get_params(deep=True)
    names = [
        name
        for name in params
        if (name == "random_state" or name.endswith("__random_state"))
        and replaces_random_state(params[name], keep_integers)
    ]
    if names:
        model.set_params(**dict.fromkeys(names, int(seed)))
    for value in params.values():
        if (
            not isinstance(value, type)
            and not hasattr(value, "get_params")
            and hasattr(value, "random_state")
            and replaces_random_state(value.random_state, keep_integers)
        ):
            value.random_state = int(seed)
    return model


def _fit_template(estimator, n_features, classes, y_tail):
    """Fit a clone on public, data-independent rows (zeros).

    For a classifier: two rows per public class; for a regressor: two rows
    with zero targets of the training target shape.
    """
    if classes is not None:
        y = np.repeat(classes, _TEMPLATE_ROWS_PER_CLASS)
    else:
        y = np.zeros((_TEMPLATE_ROWS_PER_CLASS, *y_tail))
    X = np.zeros((y.shape[0], n_features))
    return _seeded_clone(estimator, 0).fit(X, y)


# scikit-learn asks for tags often (every clone, check and meta-estimator),
# and guessing the mode fits a template; one guess per estimator setting.
_GUESSED_MODES = {}


def _estimator_key(estimator):
    """A hashable description of an estimator's class and parameters."""
    params = estimator.get_params(deep=False)
    return (
        type(estimator),
        tuple(
            (name, _estimator_key(v) if hasattr(v, "get_params") else repr(v))
            for name, v in sorted(params.items())
        ),
    )


# -- block fits (run in workers) ---------------------------------------------
def _without_group_bound(model):
    """``model`` with every ``max_rows_per_group`` that is set cleared.

    Blocks fit their models on their rows without ``groups``: what holds
    for a group is that a whole group is in one block, so one group changes
    one block's output (or vote). A model stated with a bound refuses a fit
    without groups, so every block failed (sample-and-aggregate: all
    centres or abstentions; the search: a uniform random pick).
    """
    keys = [
        key
        for key, value in model.get_params(deep=True).items()
        if (key == "max_rows_per_group" or key.endswith("__max_rows_per_group"))
        and value is not None
    ]
    return model.set_params(**dict.fromkeys(keys)) if keys else model


def _fit_block(estimator, X, y, seed, classes, layout, codes=None):
    """Fit one block, applying the public rules for degenerate blocks.

    ``codes`` are the indices of ``y`` in ``classes`` (classifiers). Returns
    None (an empty block, a block whose fit failed in any way, or a block
    whose parameters are replaced by the public default), an int (a
    one-class block: the constant class index), a parameter vector
    (``layout`` given) or the fitted model. Never raises: after the charge a
    failure is the input of a public rule, not an error (class Notes).
    """
    if X.shape[0] == 0:
        return None
    if classes is not None and codes.min() == codes.max():
        return None if layout is not None else int(codes[0])
    try:
        model = _without_group_bound(_seeded_clone(estimator, seed)).fit(X, y)
        return model if layout is None else layout.vector(model)
    except Exception:  # any failure: the block outputs the centre
        return None


def _fit_blocks(estimator, X, y, codes, blocks, seeds, classes, layout):
    """Fit a run of consecutive blocks: one task.

    ``blocks[j]`` holds the row indices of the task's j-th block, fitted with
    seed ``seeds[j]``. One task per worker, as scikit-learn's bagging does:
    ``X`` goes to a worker once, and each block is copied out of it only while
    it is fitted (memory: ``X`` plus one block per worker). Warnings are
    silenced in the worker (see :func:`~skdp.utils._warnings.silenced`).
    """
    with silenced():
        return [
            _fit_block(
                estimator,
                X.take(rows, axis=0),
                y.take(rows, axis=0),
                int(seed),
                classes,
                layout,
                None if codes is None else codes.take(rows),
            )
            for rows, seed in zip(blocks, seeds, strict=True)
        ]


# -- per-query aggregation (vote / mean) -------------------------------------
def _block_votes(model, X, classes):
    """One block's vote per query row: a class index, or -1 to abstain.

    An empty or failed block abstains on every row; a one-class block votes
    for its class. A fitted block abstains on every row if its ``predict``
    raises or returns the wrong shape, and on each row whose label is not a
    public class. Each vote is a function of the block (and the query row)
    alone.
    """
    n_rows = X.shape[0]
    if model is None:
        return np.full(n_rows, -1, dtype=np.intp)
    if isinstance(model, Integral):
        return np.full(n_rows, int(model), dtype=np.intp)
    try:
        pred = np.asarray(model.predict(X))
        if pred.shape != (n_rows,):
            return np.full(n_rows, -1, dtype=np.intp)
        index = np.minimum(np.searchsorted(classes, pred), classes.size - 1)
        known = np.asarray(classes[index] == pred, dtype=bool)
        return np.where(known, index, -1).astype(np.intp)
    except Exception:  # a failed block abstains
        return np.full(n_rows, -1, dtype=np.intp)


def _vote_histogram(block_models, X, classes):
    """Votes of the blocks for each query row, shape (n_rows, n_classes).

    Abstentions (see :func:`_block_votes`) add nothing.
    """
    votes = np.zeros((X.shape[0], classes.size), dtype=np.int64)
    rows = np.arange(X.shape[0])
    with silenced():
        for model in block_models:
            codes = _block_votes(model, X, classes)
            voting = codes >= 0
            votes[rows[voting], codes[voting]] += 1
    return votes


def _noisy_vote(votes, epsilon, source):
    """Permute-and-flip per row with the non-monotone scale (Δ = 1).

    Adding or removing a training row changes one block, which moves at most
    one vote from one class to another (or from abstaining to a class): each
    count moves by at most 1, in opposite directions, so the scores are
    1-sensitive and not monotone. Rows with the same histogram are released
    together, one independent selection per row (vectorised).
    """
    unique, inverse = np.unique(votes, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    out = np.empty(votes.shape[0], dtype=np.intp)
    for u, scores in enumerate(unique):
        rows = np.flatnonzero(inverse == u)
        out[rows] = _select_many(
            scores,
            epsilon,
            1.0,
            noise="exponential",  # permute-and-flip (Ding et al. 2021)
            monotonic=False,
            random_state=source,
            n_runs=rows.size,
        )
    return out


def _block_prediction(model, X, space, n_outputs):
    """One block's predictions, projected on the public output box.

    An empty or failed block, and a fitted block whose ``predict`` raises or
    returns the wrong number of values, predicts the centre; non-finite
    values become the centre's coordinates (:meth:`_Box.project`).
    """
    centre = np.broadcast_to(space.centre, (X.shape[0], n_outputs))
    if model is None:
        return centre
    try:
        pred = np.asarray(model.predict(X), dtype=np.float64)
        if pred.shape[:1] != (X.shape[0],) or pred.size != centre.size:
            return centre
        return space.project(pred.reshape(centre.shape))
    except Exception:  # a failed block predicts the centre
        return centre


def _block_predictions(block_models, X, space, n_outputs):
    """Projected predictions of every block, shape (n_blocks, n_rows, n_outputs)."""
    out = np.empty((len(block_models), X.shape[0], n_outputs))
    with silenced():
        for b, model in enumerate(block_models):
            out[b] = _block_prediction(model, X, space, n_outputs)
    return out
