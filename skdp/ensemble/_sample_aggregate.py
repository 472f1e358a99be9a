"""Sample-and-aggregate: a private model from k disjoint blocks of the data."""

import math
import time
from copy import deepcopy
from numbers import Integral, Real

import numpy as np
from joblib import effective_n_jobs
from sklearn import config_context
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import gen_even_slices, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from skdp.accounting import PrivacyCost
from skdp.base import PrivateEstimatorMixin
from skdp.ensemble._blocks import (
    _GUESSED_MODES,
    _average_blocks,
    _block_indices,
    _block_labels,
    _block_predictions,
    _estimator_key,
    _fit_blocks,
    _fit_template,
    _group_block_indices,
    _Layout,
    _noisy_vote,
    _vote_histogram,
)
from skdp.ensemble._n_blocks import auto_n_blocks, noise_ratio, warn_if_noise_dominated
from skdp.ensemble._output_space import (
    _Box,
    _check_output_space,
    _check_release_feasible,
    _release_average,
    averaging_sensitivities,
)
from skdp.mechanisms import check_random_source, laplace_mechanism
from skdp.mechanisms._additive import additive_cost
from skdp.utils._privacy_unit import GroupsMixin, PrivacyUnit
from skdp.utils._progress import Progress, plural
from skdp.utils._validation import check_public_classes, validate_private_data
from skdp.utils._warnings import silenced

__all__ = ["SampleAggregateEstimator"]

_MAX_SEED = 2**31 - 1
# output_bounds=None for a linear classifier: only the direction of the
# parameters decides its labels (see the class Notes)
_DEFAULT_CLASSIFIER_BOUNDS = ("sphere", 1.0)


def _parametric_has(attr):
    """``available_if`` check: a released private model with method ``attr``."""

    def check(self):
        if hasattr(self, "aggregate_"):
            return self.aggregate_ == "parameters" and hasattr(self.estimator_, attr)
        return self._mode_before_fit() == "parameters" and hasattr(self.estimator, attr)

    return check


class SampleAggregateEstimator(
    GroupsMixin, PrivateEstimatorMixin, MetaEstimatorMixin, BaseEstimator
):
    """Sample-and-aggregate: a private classifier or regressor from any estimator.

    The rows are split into exactly ``n_blocks`` disjoint blocks by independent
    uniform random labels; a clone of ``estimator`` is fitted on each block,
    and the blocks' outputs are aggregated with noise. Adding or removing one
    row changes one block only, so the aggregate has a small sensitivity
    whatever the base estimator does.

    Three aggregations:

    * ``'parameters'`` (linear models): each block's ``[coef_, intercept_]``
      is clipped to public ``output_bounds``, the k vectors are averaged and
      released once with Laplace (``delta=0``) or Gaussian noise (``delta >
      0``). ``fit`` costs ``(epsilon, delta)``; the released model
      ``estimator_`` is private and its predictions are free.
    * ``'vote'`` (any classifier): each :meth:`predict` call releases the label
      of every query row by permute-and-flip over the blocks' votes and
      charges ``epsilon`` **per query row**. ``fit`` charges nothing.
    * ``'mean'`` (any regressor): each :meth:`predict` call releases the
      average of the blocks' predictions, clipped to public ``output_bounds``,
      with Laplace noise, and charges ``epsilon`` **per query row**.

    The estimator is a classifier or a regressor as ``estimator`` is.

    Parameters
    ----------
    estimator : estimator object
        A scikit-learn classifier or regressor, cloned for each block.
    n_blocks : int or "auto", default="auto"
        Number k of blocks: public, it must not depend on the data (nor on the
        number of rows, which is private). ``"auto"`` applies the public rule
        of the Notes: enough blocks for the expected noise on the average to
        be a quarter of the signal (``ceil(11.3 D/ε)`` for ``D`` released
        values with Laplace noise), capped by ``expected_n_samples`` when it
        is given. The number used is ``n_blocks_``.
    expected_n_samples : int or None, default=None
        A public guess of the number of training rows (e.g. the published
        size of a census), used by ``n_blocks="auto"`` only: k is capped so
        that a block expects at least ``max(D, n_features + 1)`` rows. It is
        never compared with the data. ``None``: no cap.
    epsilon : float, default=1.0
        ``'parameters'``: total ε of one ``fit``. ``'vote'`` and ``'mean'``:
        ε charged for each predicted row.
    delta : float, default=0.0
        ``'parameters'`` only: ``delta > 0`` uses the Gaussian mechanism
        (L2 sensitivity) and gives (ε, δ)-DP. Must be 0 for the other modes.
    aggregate : {"auto", "parameters", "vote", "mean"}, default="auto"
        ``'auto'`` is ``'parameters'`` when a clone of ``estimator`` fitted on
        public template data (rows of zeros) exposes numeric ``coef_`` and
        ``intercept_`` (scikit-learn's linear models), else ``'vote'`` for a
        classifier and ``'mean'`` for a regressor.
    output_bounds : tuple, default=None
        Public bounds of the block outputs. ``'parameters'``: ``(lower,
        upper)``, scalars or arrays over the flattened ``[coef_.ravel(),
        intercept_.ravel()]``, ``('l2', radius)`` for an L2 ball centred
        at 0, or ``('sphere', radius)``: every block's vector is rescaled to
        norm ``radius`` (only its direction is kept) and so is the released
        vector. A linear classifier's labels depend only on that direction,
        so with the sphere its accuracy does not depend on ``radius``, which
        only sets the scale of ``decision_function`` and ``predict_proba``: no
        guess of the parameters' size is needed (see Notes). ``None`` for a
        classifier in ``'parameters'`` mode is ``('sphere', 1.0)``; a linear
        regressor's coefficients are in the units of ``y`` over those of
        ``X``, which no default can guess, so it needs bounds. ``'mean'``:
        ``(lower, upper)`` for the predictions (scalars or one pair per
        output). Ignored by ``'vote'``.
    classes : array-like of shape (n_classes,) or None, default=None
        Public class labels, required for a classifier: the blocks' output
        space and votes are laid out on them before the charge, so ``None``
        is refused then (never read from ``y``). Labels in ``y`` outside
        ``classes`` are an input error (raised before anything is charged,
        like NaN values). Ignored for a regressor.
    n_jobs : int, default=None
        Parallel block fits, through :class:`sklearn.utils.parallel.Parallel`
        with a preference for threads: the blocks are split into ``n_jobs``
        runs of consecutive blocks, one task each, and each block is copied
        out of ``X`` only while it is fitted (memory: ``X`` plus one block per
        task). A backend set with ``joblib.parallel_config`` takes precedence:
        ``"loky"`` (processes) for base estimators whose fit holds the GIL
        (pure-Python overhead; the workers' first start costs seconds),
        ``"dask"`` for a cluster. ``None`` means 1 unless in a joblib context.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit`` (``'parameters'``) or by each ``predict``
        (``'vote'``, ``'mean'``); ``None`` uses the default accountant in
        effect at the time of the call.
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): a whole group goes to one block,
        at most ``k`` of its rows (see Notes, **Groups**, and
        :ref:`user_level_privacy`). The noise does not grow with ``k``.
    random_state : int, RandomState instance or None, default=None
        Source of the block labels, the block estimators' seeds and all noise.
        ``None`` draws from the operating system's CSPRNG; an int gives
        reproducible (not secret) noise, for tests and examples.
    verbose : int, default=0
        Progress on standard output: ``>= 1`` the number of blocks (and
        whether the ``"auto"`` rule chose it) before the fits, and the time
        of the fits and the release after; ``>= 3`` also joblib's messages.
        Only public things are printed, never anything computed from a block.

    Attributes
    ----------
    aggregate_ : str
        The aggregation used: ``'parameters'``, ``'vote'`` or ``'mean'``.
    n_blocks_ : int
        The number of blocks used (``n_blocks``, or the ``"auto"`` rule's).
    estimator_ : estimator
        (``'parameters'``) The private model: a clone of ``estimator`` fitted
        on public template rows, whose ``coef_`` and ``intercept_`` are then
        replaced by the private average. Every other fitted attribute comes
        from the public template only, so the model can be published.
    estimators_ : list of length n_blocks
        (``'vote'``, ``'mean'``) The block models: a fitted estimator, an int
        (a one-class block's class index) or None (an empty block). They are
        **not private**; only the outputs of :meth:`predict` are.
    classes_ : ndarray of shape (n_classes,)
        The stated class labels (classifiers).
    epsilon_spent_, delta_spent_ : float
        Total charged by this estimator: the ``fit`` and, for ``'vote'`` and
        ``'mean'``, every ``predict`` since.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    sklearn.ensemble.BaggingClassifier : Non-private ensembles of subsamples.

    Notes
    -----
    **Privacy.** (ε, δ)-DP under add/remove-one-row neighbours (the
    released ``estimator_`` in ``'parameters'`` mode; each query row's
    prediction, ε each, in the other modes — m rows cost mε by basic
    composition, recorded as m ledger entries).

    **Blocks (public rule).** Every row gets an independent uniform label in
    ``{0, ..., k-1}`` drawn from the random source; block b holds the rows
    labelled b. There are always exactly k blocks: a block may be empty or
    tiny (certainly when k exceeds the number of rows). Adding or removing a
    row leaves every other row's label distribution unchanged, so it changes
    exactly one block (parallel composition). Splitting a shuffle into k
    chunks would not do: inserting a row shifts every later boundary, and
    ``range(0, n, ceil(n/k))`` yields fewer than k chunks (593 for n = 32561,
    k = 600) while the noise assumes k.

    **Degenerate and failed blocks (public rules, applied after charging,
    never an error).** An empty block (certainly some when ``n_blocks``
    exceeds the number of rows, which is private and never checked) outputs
    the centre of ``output_bounds`` (the origin for a ball) in
    ``'parameters'`` and ``'mean'``, and abstains in ``'vote'``. A block
    whose rows carry one class only is not fitted: in ``'vote'`` it votes for
    that class, in ``'parameters'`` it outputs the public centre. A block
    whose fit fails in any way (any exception, e.g. ``LinAlgError`` on a row
    at 1e200, or a ``ConvergenceWarning`` turned into an error), whose
    ``classes_`` or parameter shapes differ from the public template's (a
    block that lacks a class), or whose parameters are not finite, outputs
    the centre / abstains likewise. At predict time a block whose
    ``predict`` raises (e.g. k-nearest neighbours on a block with fewer rows
    than ``n_neighbors``) or returns the wrong shape predicts the centre
    (``'mean'``) or abstains (``'vote'``); non-finite predicted values become
    the centre's coordinates, and a predicted label outside the public
    classes is an abstention for that query row. Each of these outputs is a
    function of the block's own rows, its seed and the query row, and lies
    in the public set ``B`` (or is a vote or an abstention), so adding or
    removing one row still changes one block's output only, and the
    sensitivities below hold as stated (an abstention moves one vote to or
    from a class: each count changes by at most 1). Warnings raised by block
    fits and predictions are silenced in each worker and in the caller
    (whether a block warns depends on its rows); nothing about them, not
    even a count of failed blocks, is kept or shown. Feasibility that
    depends on public parameters only (a noise scale the float range can
    represent for ``epsilon`` and ``output_bounds``, a sum of ``n_blocks``
    outputs that cannot overflow) is checked before anything is charged.

    **Sensitivity.** With each block output ``a_i`` in a public set ``B`` and
    ``ā = (1/k) Σ a_i``, one changed block moves ``ā`` by ``(a_i' - a_i)/k``,
    so the L1 (L2) sensitivity is the L1 (L2) diameter of ``B`` over k:
    box ``Σ_j (U_j - L_j)/k`` (L1) and ``||U - L||_2/k`` (L2); ball of radius
    R in D dimensions ``2R√D/k`` (L1) and ``2R/k`` (L2) (Dwork and Roth;
    Programming-DP ch. 7; checked by brute force in the tests). The Laplace
    release uses the L1 sensitivity of the *whole* vector for every
    coordinate; the per-coordinate ``(U_j - L_j)/k`` would only give dε. The
    average is computed in floating point, so twice a public bound on its
    rounding (:func:`skdp.sensitivity.float_average_error`, from k and the
    largest magnitude of ``B``; relative ``k 2**-53``) is added to both
    sensitivities: they hold for the computed averages. For a vote, one
    changed block moves one vote from one class to another: each count moves
    by at most 1, in opposite directions (not monotone), so
    permute-and-flip uses scale ``2/ε`` (McKenna and Sheldon 2020).

    **Sphere.** ``('sphere', r)`` maps each block's vector ``v`` to
    ``r v/||v||_2`` (``0`` to ``0``), a function of that block alone, so
    adding or removing a row still changes one ``a_i``. Every ``a_i`` lies on
    the sphere or at the origin, inside the ball of radius r, so the
    sensitivities are the ball's: ``2r/k`` (L2) and ``2r√D/k`` (L1), both
    attained by two antipodal points of the sphere (``±r(1, ..., 1)/√D``
    for L1). The released noisy average is rescaled to norm r
    (post-processing). Compared with a ball of radius R, a block whose norm
    is below R is not down-weighted and a radius guess that is too large
    does not waste noise (a ball is the same as the sphere when every block
    has norm above R); the signal-to-noise ratio of the released direction
    does not depend on r. Degenerate blocks output the origin.

    **Groups** (``fit(X, y, groups=g)`` with ``max_rows_per_group=k``).
    Neighbours add or remove one whole group. Each group keeps at most k of
    its rows (a keyed choice among its own rows, the same for any row
    order), then goes whole to one block: the block of its keyed hash, a
    wrapping sum of its rows' hashes with its label's
    (:func:`~skdp.utils._groups.group_blocks`,
    rows ordered within a block by hash and content). Both are functions of
    the keys, the group's label and its own rows, so for any keys adding or
    removing a group leaves every other block's rows (and order) unchanged
    and changes one block, exactly as one row does without groups: the
    sensitivities above (one block's output, one vote) hold for a group of
    any size, and
    the noise does not grow with k, which only limits how much one group
    weighs in its block. A mutation that splits a group across blocks (row
    labels) lets one group move up to k votes, which the audit catches
    (``tests/audit/test_group_sample_aggregate_audit.py``). The release is
    the same for any order of the rows (given the seed). Predict-time charges
    name the unit too.

    **Budget.** ``'parameters'``: one ledger entry ``(epsilon, delta)``
    charged in ``fit`` after validation and before any block is fitted or
    dispatched. ``'vote'``/``'mean'``: ``fit`` releases nothing and charges
    nothing; each ``predict`` (and ``score``, which calls it) charges
    ``epsilon`` per query row before computing anything. Predict-time noise
    comes from the random stream created in ``fit`` and advanced by every
    call; it is never re-seeded, so repeated queries get fresh noise.

    **Choosing n_blocks (the "auto" rule).** Every quantity below is
    public. Let ``D`` be the number of values released per block (the
    parameters, the outputs of ``'mean'``, or the ``C`` vote shares of
    ``'vote'``) and ``s`` the signal scale, half the L2 diameter of the
    output space (the radius of a sphere: the norm of every block output).
    One block's output moves the average by at most the diameter over k, so
    the expected noise norm on the average is ``r s / k`` with ``r = 2√2
    D/ε`` (Laplace on a sphere, ball or cube: scale ``diameter_1/(kε)`` on
    each of D coordinates, norm ``√(2D)`` times the scale) or ``r = 2c√D``
    (Gaussian, ``c`` the analytic-Gaussian σ for unit sensitivity: 4.2 at
    ε = 1, δ = 1e-6). ``"auto"`` takes ``k = ceil(r / 0.25)``, so the noise
    norm is at most a quarter of a perfect agreement of the blocks:
    ``k = ceil(11.3 D/ε)`` for Laplace, ``ceil(8c√D)`` for Gaussian.

    More blocks also mean fewer rows per block. A block's estimate has an
    error of about ``sqrt(D k/n)`` (n rows), but the blocks' errors are
    independent and the average cancels most of them: the variance of the
    average (about ``D/n``) does not grow with k. What grows is each block's
    small-sample bias, which turns large once a block has fewer rows than it
    has parameters. Balancing the noise ``r/k`` against the per-block error
    ``sqrt(D k/n)`` alone (``k = (r² n/D)^(1/3)``) ignores that cancellation
    and picks too few blocks: on Adult (ε = 1, D = 66, n = 24,420,
    ``LogisticRegression()``, sphere) it gives k = 236 and 0.755 ± 0.032
    accuracy against 0.793 ± 0.019 at k = 400 and 0.786 ± 0.020 to 0.805 ±
    0.006 at the rule's k ≈ 750 (5 seeds each; ``benchmarks/README.md``).
    So with a public guess ``expected_n_samples`` the rule only caps k at
    ``expected_n_samples // max(D, n_features + 1)``, so that a block
    expects at least as many rows as the model has parameters; without it,
    k depends on D and ε only.

    A :class:`~skdp.NoiseDominatedWarning` is raised before anything is
    charged when ``r/k > 1``: the noise is then expected to exceed the
    largest possible signal whatever the data (e.g. 100 blocks for the 66
    parameters of a logistic regression on Adult at ε = 1, where ``r`` is
    187).

    References
    ----------
    .. [1] K. Nissim, S. Raskhodnikova and A. Smith, "Smooth sensitivity and
       sampling in private data analysis", STOC 2007.
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014.
    .. [3] R. McKenna and D. Sheldon, "Permute-and-Flip: A new mechanism for
       differentially private selection", NeurIPS 2020.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdp import BudgetAccountant
    >>> from skdp.ensemble import SampleAggregateEstimator
    >>> X, y = make_classification(n_samples=20_000, n_features=4,
    ...                            n_redundant=0, random_state=0)
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> clf = SampleAggregateEstimator(
    ...     LogisticRegression(), classes=[0, 1], accountant=acc,
    ...     random_state=0).fit(X, y)
    >>> clf.aggregate_, clf.n_blocks_, acc.total()  # 'auto': ceil(11.3 * 5 / 1)
    ('parameters', 57, (1.0, 0.0))
    >>> round(clf.score(X, y), 1)  # post-processing: free
    0.8
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "n_blocks": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "expected_n_samples": [Interval(Integral, 1, None, closed="left"), None],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "aggregate": [StrOptions({"auto", "parameters", "vote", "mean"})],
        "output_bounds": "no_validation",
        "classes": ["array-like", None],
        "n_jobs": [Integral, None],
        "accountant": [HasMethods(["spend_many"]), None],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        estimator,
        *,
        n_blocks="auto",
        expected_n_samples=None,
        epsilon=1.0,
        delta=0.0,
        aggregate="auto",
        output_bounds=None,
        classes=None,
        n_jobs=None,
        accountant=None,
        max_rows_per_group=None,
        random_state=None,
        verbose=0,
    ):
        self.estimator = estimator
        self.n_blocks = n_blocks
        self.expected_n_samples = expected_n_samples
        self.epsilon = epsilon
        self.delta = delta
        self.aggregate = aggregate
        self.output_bounds = output_bounds
        self.classes = classes
        self.n_jobs = n_jobs
        self.accountant = accountant
        self.max_rows_per_group = max_rows_per_group
        self.random_state = random_state
        self.verbose = verbose

    # -- type, tags --------------------------------------------------------
    def _kind(self):
        kind = get_tags(self.estimator).estimator_type
        if kind not in ("classifier", "regressor"):
            raise ValueError(
                "SampleAggregateEstimator wraps supervised estimators (a "
                f"classifier or a regressor); {type(self.estimator).__name__} "
                f"has estimator_type={kind!r}, and unsupervised estimators such "
                "as clusterers are not supported (their outputs, e.g. cluster "
                "labels, have no common space in which blocks could vote)."
            )
        return kind

    @property
    def _estimator_type(self):
        return get_tags(self.estimator).estimator_type

    def _mode_before_fit(self):
        """The aggregation ``fit`` would use, guessed from public information."""
        if hasattr(self, "aggregate_"):
            return self.aggregate_
        kind = get_tags(self.estimator).estimator_type
        fallback = "vote" if kind == "classifier" else "mean"
        if self.aggregate != "auto":
            return self.aggregate
        key = _estimator_key(self.estimator)
        if key not in _GUESSED_MODES:
            classes = np.array([0, 1]) if kind == "classifier" else None
            try:
                template = _fit_template(self.estimator, 1, classes, ())
            except Exception:
                mode = fallback
            else:
                mode = "parameters" if _Layout.of(template, classes) else fallback
            if len(_GUESSED_MODES) > 1024:
                _GUESSED_MODES.clear()
            _GUESSED_MODES[key] = mode
        return _GUESSED_MODES[key]

    def _public_classes(self, y):
        """The stated label set, checked against ``y``; refused when absent."""
        if self.classes is None:
            raise ValueError(
                f"{type(self).__name__} of a classifier needs the public label "
                "set, classes=[...]: taking it from y would release which "
                "labels occur (a label held by one row included), and the "
                "blocks' output space and votes are laid out on it before "
                "anything is charged. Nothing was charged."
            )
        return check_public_classes(self.classes, y, type(self).__name__)

    def _fit_cost(self, n_features=None):
        if self._mode_before_fit() == "parameters":
            return additive_cost(self.epsilon, self.delta)
        return PrivacyCost(0.0)  # releases nothing at fit; predict charges

    def _charges_at_predict(self):
        return self._mode_before_fit() in ("vote", "mean")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = deepcopy(inner.classifier_tags)
        if tags.classifier_tags is not None:
            tags.classifier_tags.multi_label = False  # one label column only
        tags.regressor_tags = deepcopy(inner.regressor_tags)
        tags.target_tags.required = True
        tags.target_tags.multi_output = (
            inner.estimator_type == "regressor" and inner.target_tags.multi_output
        )
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        if self._mode_before_fit() in ("vote", "mean"):
            tags.non_deterministic = True
            for sub in (tags.classifier_tags, tags.regressor_tags):
                if sub is not None:
                    sub.poor_score = True
        return tags

    # -- fit ---------------------------------------------------------------
    def _resolve(self, kind, n_features, classes, y):
        """Public choices made before charging: mode, template, output space."""
        fallback = "vote" if kind == "classifier" else "mean"
        mode = self.aggregate
        if mode in ("vote", "mean") and mode != fallback:
            needs = "classifier" if mode == "vote" else "regressor"
            raise ValueError(
                f"aggregate={mode!r} needs a {needs}; "
                f"{type(self.estimator).__name__} is a {kind}."
            )
        template = layout = None
        if mode in ("auto", "parameters"):
            try:
                template = _fit_template(
                    self.estimator, n_features, classes, y.shape[1:]
                )
            except Exception as exc:
                if mode == "parameters":
                    raise ValueError(
                        "aggregate='parameters': the estimator could not be fitted "
                        "on the public template rows (zeros) used to build the "
                        "released model."
                    ) from exc
            else:
                layout = _Layout.of(template, classes)
            if layout is None and mode == "parameters":
                raise ValueError(
                    "aggregate='parameters' needs an estimator whose fitted model is "
                    "defined by numeric coef_ and intercept_ (a linear model); "
                    f"{type(self.estimator).__name__} has none. Use "
                    f"aggregate={fallback!r}."
                )
            mode = "parameters" if layout is not None else fallback
        if mode == "parameters":
            bounds = self.output_bounds
            if bounds is None and classes is not None:
                bounds = _DEFAULT_CLASSIFIER_BOUNDS
            space = _check_output_space(bounds, layout.size, mode=mode)
        elif mode == "mean":
            n_outputs = 1 if y.ndim == 1 else y.shape[1]
            space = _check_output_space(self.output_bounds, n_outputs, mode=mode)
        else:
            space = None
        if mode != "parameters" and self.delta != 0:
            raise ValueError(
                f"aggregate={mode!r} is pure epsilon-DP per query row and spends no "
                f"delta; got delta={self.delta}. Set delta=0."
            )
        return mode, template, layout, space

    def _choose_n_blocks(self, mode, space, layout, n_features, classes, y):
        """``n_blocks`` or the public "auto" rule; warn if noise-dominated.

        Reads public quantities only: the output space, the number of
        released coordinates per block, the number of features, ``epsilon``,
        ``delta`` and ``expected_n_samples``; never the number of rows.
        """
        if mode == "vote":  # vote shares: a unit box over the public classes
            size = classes.size
            space = _Box(np.zeros(size), np.ones(size))
        else:
            size = layout.size if mode == "parameters" else math.prod(y.shape[1:])
        delta = self.delta if mode == "parameters" else 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            ratio = noise_ratio(space, float(self.epsilon), delta)
        if not math.isfinite(ratio):
            # bounds too wide for floats: _check_release_feasible says so
            return 1 if self.n_blocks == "auto" else int(self.n_blocks)
        if self.n_blocks == "auto":
            min_rows = max(size, n_features + 1)
            k = auto_n_blocks(ratio, min_rows, self.expected_n_samples)
        else:
            k = int(self.n_blocks)
        what = (
            f"aggregate={mode!r} with {size} released value(s) per block at "
            f"epsilon={self.epsilon:g}" + (f", delta={delta:g}" if delta else "")
        )
        warn_if_noise_dominated(ratio, k, what)
        return k

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, groups=None):
        """Fit the blocks and, for ``'parameters'``, release the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets (one column for classifiers).
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``:
            neighbours add or remove one whole group, and a group is never
            split across blocks (Notes). None: one row.

        Returns
        -------
        self : SampleAggregateEstimator
        """
        kind = self._kind()
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None: it fits supervised estimators."
            )
        regressor = kind == "regressor"
        X, y = validate_private_data(
            self, X, y, multi_output=regressor, y_numeric=regressor
        )
        classes = None
        if not regressor:
            check_classification_targets(y)
            classes = self._public_classes(y)
        unit = self._privacy_unit(groups, X)
        mode, template, layout, space = self._resolve(kind, X.shape[1], classes, y)
        source = check_random_source(self.random_state)
        k = self._choose_n_blocks(mode, space, layout, X.shape[1], classes, y)
        if space is not None:  # 'parameters' (one release) or 'mean' (per row)
            size = layout.size if mode == "parameters" else math.prod(y.shape[1:])
            delta = self.delta if mode == "parameters" else 0.0
            _check_release_feasible(
                space, k, self.epsilon, delta, size, self.output_bounds
            )
        if mode == "parameters":
            cost = additive_cost(self.epsilon, self.delta)
            self._charge([(unit.label("averaged block parameters"), cost)], unit=unit)
        else:
            self._charge([], unit=unit)  # releases nothing; predict charges per row

        progress = Progress(type(self).__name__, self.verbose)
        rule = " (the 'auto' rule)" if self.n_blocks == "auto" else ""
        progress(1, f"Fitting {plural(k, 'block')}{rule}, aggregate={mode!r}")
        start = time.perf_counter()
        seeds = source.integers(_MAX_SEED, size=k)
        codes = None if classes is None else np.searchsorted(classes, y)
        if unit.groups is None:
            blocks = _block_indices(_block_labels(X.shape[0], k, source), k)
        else:  # whole groups, at most max_rows_per_group rows each
            blocks = _group_block_indices(
                unit, k, source, X, y if codes is None else codes
            )
        n_tasks = min(k, effective_n_jobs(self.n_jobs))
        # One BLAS thread per fit: blocks are small, and nested BLAS threads
        # oversubscribe the cores (measured 5x slower on a loaded machine).
        # X and y were checked finite above: the block fits need not re-check.
        # Warnings are silenced here too: with threads, the workers' filters
        # are this process's, restored by each worker in any order.
        with (
            threadpool_limits(limits=1, user_api="blas"),
            config_context(assume_finite=True),
            silenced(),
        ):
            chunks = Parallel(
                n_jobs=self.n_jobs,
                verbose=self.verbose if self.verbose > 2 else 0,
                prefer="threads",
            )(
                delayed(_fit_blocks)(
                    self.estimator,
                    X,
                    y,
                    codes,
                    blocks[part],
                    seeds[part],
                    classes,
                    layout,
                )
                for part in gen_even_slices(k, n_tasks)
            )
        results = [result for chunk in chunks for result in chunk]
        if mode == "parameters":
            vectors = [space.centre if r is None else r for r in results]
            with silenced():
                average = _average_blocks(space.project(np.stack(vectors)), k)
            noisy = _release_average(
                average, space, k, self.epsilon, self.delta, source
            )
            self.estimator_ = layout.assign(template, space.project(noisy))
        else:
            self.estimators_ = results
        progress(
            1,
            f"END {plural(k, 'block fit')}"
            + (" and the release" if mode == "parameters" else "")
            + f"; total time={time.perf_counter() - start:.1f}s",
        )
        if classes is not None:
            self.classes_ = classes
        self.aggregate_ = mode
        self._space = space
        self._n_blocks = self.n_blocks_ = k
        self._query_epsilon = float(self.epsilon)
        self._y_shape_tail = y.shape[1:]
        self._source = source
        # the unit of the predict-time charges (its bound, not the labels)
        self._unit = unit if unit.groups is None else unit._replace(groups=())
        return self

    # -- prediction ----------------------------------------------------------
    def _charge_rows(self, n_rows):
        """Charge ``epsilon`` per query row (one ledger entry each)."""
        before_eps, before_delta = self.epsilon_spent_, self.delta_spent_
        unit = getattr(self, "_unit", PrivacyUnit(None, 1))
        label = unit.label(f"predict ({self.aggregate_}): one query row")
        self._charge([(label, self._query_epsilon, 0.0)] * n_rows, unit=unit)
        self.epsilon_spent_ += before_eps
        self.delta_spent_ += before_delta

    def predict(self, X):
        """Predict with the private model, or release noisy aggregates per row.

        In ``'vote'`` and ``'mean'`` modes this charges ``epsilon`` per row
        of ``X`` to the accountant before computing anything.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        if self.aggregate_ == "parameters":
            return self.estimator_.predict(X)
        if self.aggregate_ == "mean":
            _check_release_feasible(
                self._space,
                self._n_blocks,
                self._query_epsilon,
                0.0,
                X.shape[0] * math.prod(self._y_shape_tail),
                self.output_bounds,
            )
        self._charge_rows(X.shape[0])
        if self.aggregate_ == "vote":
            votes = _vote_histogram(self.estimators_, X, self.classes_)
            return self.classes_[_noisy_vote(votes, self._query_epsilon, self._source)]
        n_outputs = math.prod(self._y_shape_tail)
        preds = _block_predictions(self.estimators_, X, self._space, n_outputs)
        average = _average_blocks(preds, self._n_blocks)
        sensitivity = averaging_sensitivities(self._space, self._n_blocks)[0]
        noisy = laplace_mechanism(
            average, sensitivity, self._query_epsilon, random_state=self._source
        )
        return self._space.project(noisy).reshape(X.shape[0], *self._y_shape_tail)

    @available_if(_parametric_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the private model (``'parameters'`` only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.estimator_.predict_proba(
            validate_private_data(self, X, reset=False)
        )

    @available_if(_parametric_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the private model (``'parameters'`` only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.estimator_.predict_log_proba(
            validate_private_data(self, X, reset=False)
        )

    @available_if(_parametric_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the private model (``'parameters'`` only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self.estimator_.decision_function(
            validate_private_data(self, X, reset=False)
        )

    def score(self, X, y, sample_weight=None):
        """Accuracy (classifier) or R² (regressor) of :meth:`predict`.

        In ``'vote'`` and ``'mean'`` modes this calls :meth:`predict` and so
        charges ``epsilon`` per row of ``X``. The score itself reads ``y``:
        it is private information about the evaluation rows: on private rows
        the score is a release, exact and charged to no accountant.
        Evaluate privately with :mod:`skdp.metrics` (e.g.
        :func:`~skdp.metrics.private_accuracy_score`,
        :func:`~skdp.metrics.private_r2_score`); see :ref:`evaluating`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        y_pred = self.predict(X)
        if self._kind() == "classifier":
            return accuracy_score(y, y_pred, sample_weight=sample_weight)
        return r2_score(y, y_pred, sample_weight=sample_weight)
