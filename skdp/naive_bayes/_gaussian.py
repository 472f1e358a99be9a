"""Private Gaussian naive Bayes from per-class moment sums."""

from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms._labels import LabelPlan
from skdp.naive_bayes._cost import (
    check_recordable,
    moment_sums_mechanism,
    naive_bayes_fit_cost,
)
from skdp.naive_bayes._post_processing import (
    class_mean_noise,
    share_unresolved_variances,
)
from skdp.preprocessing._standard import fit_moment_sums
from skdp.sensitivity import moments_from_sums
from skdp.stats._mean import warn_if_noise_dominated
from skdp.utils._cells import as_cells
from skdp.utils._dask import is_dask_collection
from skdp.utils._dask_xy import JOINED_CODES, public_dask_classes, validate_dask_xy
from skdp.utils._privacy_unit import GroupsMixin
from skdp.utils._sample_weight import check_row_weights
from skdp.utils._validation import validate_private_data

__all__ = ["PrivateGaussianNB"]


class PrivateGaussianNB(
    GroupsMixin, PrivateEstimatorMixin, ClassifierMixin, BaseEstimator
):
    """Private counterpart of :class:`~sklearn.naive_bayes.GaussianNB`.

    Per-class row counts, means and variances of the clipped features come
    from one noisy release; prediction is the Gaussian naive Bayes rule on
    them (post-processing, free).

    Parameters
    ----------
    epsilon : float, default=1.0
        Total ε of one ``fit``.
    bounds : tuple of (float or array-like, float or array-like) or None, \
default=None
        Public ``(lower, upper)`` clipping bounds per feature; ``None``
        chooses them privately as :class:`~skdp.PrivateMean` does, spending
        ``bounds_share`` of ``epsilon``.
    classes : array-like or None, default=None
        The public label set. ``None`` selects it privately (never reads it
        from ``y``): partition selection with ``LABELS_SHARE`` = 10 % of
        ``epsilon`` and all of ``delta`` (Laplace) or 10 % of it (Gaussian);
        see Notes. Required for Dask input and with ``priors``.
    priors : array-like of shape (n_classes,) or None, default=None
        Public class priors; ``None`` uses the private class counts.
    var_smoothing : float, default=1e-9
        Added to every variance, as a fraction of ``((upper - lower)/2)²``
        (a public quantity, unlike scikit-learn's largest data variance).
    bounds_share : float, default=0.3
        Share of ``epsilon`` for private bounds (``bounds=None`` only).
    upper_limit : float, default=1e9
        Largest plausible magnitude of a value, for private bounds.
    mechanism : {"auto", "laplace", "gaussian"}, default="auto"
        Noise of the moment sums: Laplace (ε-DP), the analytic Gaussian
        ((ε, δ)-DP), or ``"auto"``, whichever has the smaller standard
        deviation for the fit's ε, δ, shares and number of features (a
        public rule, never the data; see Notes): the Gaussian from about 9
        features at ε = 1, Laplace at very large ε. The choice is
        ``mechanism_``.
    delta : float, default=1e-6
        Total δ of one ``fit``. With Laplace noise only the private label
        selection (``classes=None``) spends it; with stated classes and
        Laplace noise the fit is pure ε-DP and spends no δ. ``delta=0``
        makes ``"auto"`` Laplace (for an accountant of δ = 0).
    max_rows_per_group : int or None, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (required then, refused without): see Notes.
    accountant : BudgetAccountant or None, default=None
        Charged by ``fit``; ``None`` uses the default accountant at fit time.
    random_state : int, RandomState instance or None, default=None
        ``None`` draws noise from the operating system's CSPRNG.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels: stated, or released by the private selection.
    class_count_ : ndarray of shape (n_classes,)
        Private row counts per class (noisy, at least 1); with
        ``sample_weight``, the weighted counts.
    class_prior_ : ndarray of shape (n_classes,)
        The priors: given, or the normalised private counts.
    theta_ : ndarray of shape (n_classes, `n_features_in_`)
        Private per-class means.
    var_ : ndarray of shape (n_classes, `n_features_in_`)
        Private per-class variances, floored at their noise level (shared by
        all classes where some class's variance is at that level; see
        ``shared_var_``), plus the smoothing.
    shared_var_ : ndarray of bool, shape (`n_features_in_`,)
        The features whose variance some class does not resolve: every class
        gets their count-weighted mean variance (Notes).
    mechanism_ : {"laplace", "gaussian"}
        The noise of the moment sums: ``mechanism``, or the choice of
        ``"auto"``.
    noise_std_ : float
        Standard deviation of the noise on each released moment sum.
    lower_, upper_ : ndarray of shape (`n_features_in_`,)
        The clipping bounds: given, or chosen privately.
    epsilon_spent_, delta_spent_ : float
        Cost charged by ``fit``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when ``X`` has string column
        names.

    See Also
    --------
    skdp.preprocessing.PrivateStandardScaler : The same release, one group.

    Notes
    -----
    **Statistic.** The quadratic Bernstein sums of
    :func:`~skdp.sensitivity.exact_moment_sums`, one triple per class and
    feature: a row adds ``((1 - a)², 2a(1 - a), a²)``, ``a = (clip(x) - L) /
    (U - L)``, to its own class's triples only. Under add/remove one row the
    vector moves by exactly ``d`` in L1 norm and at most ``sqrt(d)`` in L2
    norm whatever the number of classes (a row is in one class), the
    sensitivity of the class histogram alone: the counts, means and
    variances of every class come at the price of one histogram
    (brute-forced in the tests). Vaidya, Shafiq and Fan (2013) release the
    counts, means and variances separately, with sensitivities that add up.

    **Noise.** Laplace with scale ``d/ε`` per coordinate, or the analytic
    Gaussian for L2 sensitivity ``sqrt(d)``, as exact discrete noise
    (:mod:`skdp.mechanisms`) on sums formed exactly. ``"auto"`` compares the
    standard deviation of the noise on each released sum (every sum gets
    the same; the class counts, means and variances are ratios of sums, so
    their errors scale with it), ``sqrt(2) d/ε`` against ``r(ε, δ) sqrt(d)``
    (:func:`~skdp.mechanisms.analytic_gaussian_sigma`), at the sums' ε (less
    the label and bounds shares) and the δ the Gaussian would get, and takes
    the Gaussian when ``d > (ε r)² / 2``: from 8 features at ε = 0.3, 9 at
    ε = 1, 11 at ε = 3, 15 at ε = 10, 48 at ε = 100, about 250,000 at
    ε = 10⁶ (δ = 1e-6), Laplace on a tie. With private bounds and stated
    classes (median of 10 seeds, 70/30 split), Laplace / Gaussian held-out
    accuracy: digits (64 features) 0.226 / 0.527 at ε = 1 and 0.580 / 0.793
    at ε = 3; breast cancer (30) 0.807 / 0.848 at ε = 3
    (``benchmarks/bench_naive_bayes_mechanism.py``).

    **Sample weights.** With ``sample_weight`` ``w`` in [0, 1] a row adds
    ``w`` times its triple to its class (three non-negative integers that
    add up to its weight on the grid ``2**-32``,
    :func:`~skdp.sensitivity.exact_moment_sums`): weighted class counts,
    means and variances, as :class:`~sklearn.naive_bayes.GaussianNB` with
    the same weights, and the same sensitivity and noise as without weights
    (one ``(x, y, w)`` row moves the vector by ``d w <= d`` in L1 norm). All
    weights 1 give the unweighted fit bit for bit. The label selection
    (``classes=None``) and private bounds count every row alike: like
    scikit-learn, whose ``classes_`` include the labels of rows of weight
    0, and at the same sensitivity. A weight must belong to its own row
    (class-balancing weights computed from the label counts do not);
    weights outside [0, 1] are refused before the charge.

    **Groups (user-level privacy).** With ``groups`` and
    ``max_rows_per_group = k``, neighbours add or remove one whole group,
    which first keeps at most ``k`` rows by a rule on its own rows only
    (:func:`~skdp.utils._groups.kept_rows`). Its kept rows may hold several
    labels: each adds one Bernstein triple (L1 ``d``, L2 ``sqrt(d)``) to its
    own class's sums, so the group moves them by at most ``k d`` in L1 and
    ``k sqrt(d)`` in L2 (triangle inequality; attained by ``k`` equal rows
    at a bound): the noise is ``k`` times the row's (either noise, so
    ``"auto"`` chooses as for one row). ``bounds`` and
    ``classes`` must be public with groups.

    **Label set.** With ``classes=None`` the fit is two releases: first the
    label set, by :func:`~skdp.mechanisms.select_labels` (each label's row count
    plus discrete Laplace noise, kept above a threshold; ``(ε, δ)``-DP with
    ``ε`` = ``LABELS_SHARE`` = 10 % of the fit's and ``δ`` all of it (Laplace
    sums) or 10 % (Gaussian sums), Korolova et al. 2009), then the model on the
    rows whose label was released, with the rest. Keeping a row by its own label
    is a per-row rule, so the second release is DP in the rows too and the two
    compose to the fit's ``(epsilon, delta)``. A label held by one row is
    released with probability at most its δ share; at ε = 1 a label needs about
    156 rows. Fewer than two released labels raise ``ValueError`` after the
    charge, a function of the release only.

    **Post-processing** (rules applied to released values only): counts at
    least 1, means clipped to the bounds, variances clipped to
    ``[0, ((U - L)/2)²]`` and raised to their noise level
    ``(U - L)² noise_std_ / class_count_`` (a variance of ``a`` is not
    resolved below ``noise_std_ / count``; without the floor a class whose
    noisy variance came out as 0 takes over every prediction). Where some
    class's released variance is at or below that floor, every class gets
    the count-weighted mean of the floored variances (one shared variance,
    as in linear discriminant analysis): otherwise the noise decides
    ``log(var_1 / var_0) / 2`` per feature of the log-odds, which on Adult's
    110 columns at ε = 1 put the model below the majority rate (0.669).
    Plus ``var_smoothing ((U - L)/2)²``. ``predict`` clips rows to the
    released ``lower_``, ``upper_`` as the model's rows were: a value far
    beyond a collapsed bound otherwise decides the class through the
    quadratic term (breast cancer at ε = 1: 0.373, below the majority rate
    0.627; digits at ε = 3: 0.10).

    **Private bounds** (``bounds=None``) come from
    :class:`~skdp.SVTClipSelector`'s search with ``bounds_share`` of the
    budget, split over the features; on small data with many features
    (breast cancer: 569 rows, 30 features, ε = 1) most bounds still
    collapse and the fit warns (:class:`~skdp.exceptions.NoiseDominatedWarning`,
    from the released values only): state public ``bounds`` there. It also
    warns, naming the features, where the noise of the smallest class's
    mean, ``(U - L) noise_std_ / count``, is at least ``(U - L)/sqrt(12)``
    (the spread of a mean drawn at random in the bounds, as
    :class:`~skdp.PrivateMean` does): public bounds far wider than the data,
    or too few rows for ε (20 rows at ε = 0.1 with bounds ±10⁶ released
    class means at the bound).

    References
    ----------
    .. [1] J. Vaidya, B. Shafiq, A. Basu and Y. Hong, "Differentially Private
       Naive Bayes Classification", WI-IAT 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant
    >>> from skdp.naive_bayes import PrivateGaussianNB
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 20_000)
    >>> X = rng.normal(y[:, None] * 2.0, 1.0, size=(20_000, 3))
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> nb = PrivateGaussianNB(1.0, bounds=(-5, 7), classes=[0, 1],
    ...                        accountant=acc, random_state=0).fit(X, y)
    >>> round(nb.score(X, y), 2)
    0.96
    """

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "bounds": ["array-like", tuple, None],
        "classes": ["array-like", None],
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "bounds_share": [Interval(Real, 0, 1, closed="neither")],
        "upper_limit": [Interval(Real, 0, None, closed="neither")],
        "mechanism": [StrOptions({"auto", "laplace", "gaussian"})],
        "delta": [Interval(Real, 0, 1, closed="left")],
        "max_rows_per_group": [Interval(Integral, 1, None, closed="left"), None],
        "accountant": [HasMethods(["spend_many"]), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        epsilon=1.0,
        *,
        bounds=None,
        classes=None,
        priors=None,
        var_smoothing=1e-9,
        bounds_share=0.3,
        upper_limit=1e9,
        mechanism="auto",
        delta=1e-6,
        max_rows_per_group=None,
        accountant=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.bounds = bounds
        self.classes = classes
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.bounds_share = bounds_share
        self.upper_limit = upper_limit
        self.mechanism = mechanism
        self.delta = delta
        self.max_rows_per_group = max_rows_per_group
        self.accountant = accountant
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, groups=None):
        """Charge the budget and release the per-class statistics.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or Dask array
            Training data (finite). A Dask array is read on its cluster
            (see :ref:`dask`), with ``y`` a Dask array of its rows and the
            public ``classes`` given.
        y : array-like of shape (n_samples,) or Dask array
            Class labels, all in the public ``classes``.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights in [0, 1] (in-memory data only), as in
            :class:`~sklearn.naive_bayes.GaussianNB`: weighted class counts,
            means and variances at the noise of the unweighted fit (see
            Notes). Weights outside [0, 1] are refused before the charge.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit (in memory), with ``max_rows_per_group``,
            public ``bounds`` and ``classes`` (see Notes). None: one row.

        Returns
        -------
        self : PrivateGaussianNB
        """
        name = type(self).__name__
        if is_dask_collection(X) or is_dask_collection(y):
            classes = public_dask_classes(self.classes, name)
            X = validate_dask_xy(self, X, y, classes=classes)
            codes, labels = JOINED_CODES, None
            mechanism = moment_sums_mechanism(self, self.n_features_in_)
            _, budget = LabelPlan.split(
                classes, self.epsilon, self.delta, mechanism == "gaussian"
            )
        else:
            X, y = validate_private_data(self, X, as_cells(y))
            check_classification_targets(y)
            mechanism = moment_sums_mechanism(self, self.n_features_in_)
            plan, budget = LabelPlan.from_estimator(
                self.classes, self.epsilon, self.delta, y, name, mechanism == "gaussian"
            )
            classes, codes, labels = plan.classes, None, (plan, y)
        check_recordable(self, mechanism, self._resolve_accountant())
        sample_weight = check_row_weights(self, sample_weight, X)
        unit = self._privacy_unit(groups, X)
        unit.refuse_private(self, "label set", "classes=[...]", self.classes is None)
        if self.priors is not None and classes is None:
            raise ValueError(
                f"{name}(priors=...) needs the public classes=[...] the priors "
                "are for: with classes=None the label set is selected "
                "privately. Nothing was charged."
            )
        priors = None if self.priors is None else self._check_priors(classes.size)
        groups = None if classes is None else classes.size
        noisy, lower, upper, _, selected = fit_moment_sums(
            self,
            X,
            "per-class counts, sums and squares",
            codes,
            groups,
            labels=labels,
            budget=budget,
            sample_weight=sample_weight,
            unit=unit,
        )
        classes = classes if selected is None else selected
        counts, means, variances = moments_from_sums(noisy, lower, upper)
        half_width = upper / 2 - lower / 2
        # a variance is not resolved below its own noise level (in units of
        # a²: noise_std / count); a floor there keeps a class whose noisy
        # variance came out as 0 from dominating every prediction
        # inf only for bounds near 1e154; half_width multiplies last, so a
        # noise_std_ that underflows to 0 (epsilon near 1e300) gives a floor
        # of 0, not inf * 0 = NaN (which made var_ NaN)
        with np.errstate(over="ignore"):
            relative = 4 * self.noise_std_ / counts[:, None]
            noise_floor = half_width * (half_width * relative)
        self.classes_, self.mechanism_ = classes, mechanism
        self.class_count_ = counts
        self.class_prior_ = counts / counts.sum() if priors is None else priors
        variances, self.shared_var_ = share_unresolved_variances(
            counts, variances, noise_floor
        )
        with np.errstate(over="ignore"):  # var_smoothing=0: 0, not 0 * inf
            self.var_ = variances + half_width * (half_width * self.var_smoothing)
        self.theta_ = means
        self.lower_, self.upper_ = lower, upper
        warn_if_noise_dominated(
            self,
            class_mean_noise(half_width, self.noise_std_, counts),
            half_width / np.sqrt(3.0),  # (U - L) / sqrt(12), without U - L
            "the noise of the smallest class's mean is at least the spread of "
            "a mean drawn at random in the bounds, (upper_ - lower_) / "
            "sqrt(12): the class means are noise",
        )
        return self

    def _fit_cost(self, n_features=None):
        return naive_bayes_fit_cost(self, n_features)

    def _check_priors(self, n_classes):
        if self.priors is None:
            return None
        priors = np.asarray(self.priors, dtype=float)
        if priors.shape != (n_classes,):
            raise ValueError(
                f"priors must have one entry per class ({n_classes}); got shape "
                f"{priors.shape}."
            )
        if np.any(priors < 0) or not np.isclose(priors.sum(), 1.0):
            raise ValueError("priors must be non-negative and sum to 1.")
        return priors

    def _joint_log_likelihood(self, X):
        check_is_fitted(self)
        X = validate_private_data(self, X, reset=False)
        # the model saw rows clipped to the released bounds: so does predict
        X = np.clip(X, self.lower_, self.upper_)
        log_prior = np.log(self.class_prior_)
        normaliser = -0.5 * np.log(2.0 * np.pi * self.var_).sum(axis=1)
        quadratic = np.column_stack(
            [
                (((X - mean) ** 2) / var).sum(axis=1)
                for mean, var in zip(self.theta_, self.var_, strict=True)
            ]
        )
        return log_prior + normaliser - 0.5 * quadratic

    def predict(self, X):
        """Most likely class of each row (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        joint = self._joint_log_likelihood(X)
        return self.classes_[np.argmax(joint, axis=1)]

    def predict_log_proba(self, X):
        """Log class probabilities (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        joint = self._joint_log_likelihood(X)
        return joint - logsumexp(joint, axis=1, keepdims=True)

    def score(self, X, y, sample_weight=None):
        """Accuracy on ``(X, y)`` (not private: it reads ``y``).

        On private rows the score is a release: exact, and charged to no
        accountant. Evaluate privately with :mod:`skdp.metrics` (e.g.
        :func:`~skdp.metrics.private_accuracy_score`,
        :func:`~skdp.metrics.private_r2_score`); see :ref:`evaluating`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        return super().score(X, y, sample_weight=sample_weight)

    def predict_proba(self, X):
        """Class probabilities (post-processing; free).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return np.exp(self.predict_log_proba(X))
