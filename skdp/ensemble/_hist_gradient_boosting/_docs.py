"""The estimators' docstrings: parameters and Notes they share."""

from skdp.ensemble._hist_gradient_boosting._notes import NOTES as _NOTES

__all__ = ["write_docstrings"]


_LABELS = """

    **A private label set** (``classes=None``) is known only after the
    charge, so the plan assumes its largest size, ``max_classes`` (``K``
    trees per round, ``K`` raw scores per row, multipliers times
    ``sqrt(K)``), and refuses before the charge when that does not fit.
    Partition selection has no public bound on how many labels it
    releases (any label held by enough rows may pass); of a larger set the
    fit keeps the first ``max_classes`` released labels (sorted) and the
    rows labelled with them: a rule on the released set and on each row's
    own label, so post-processing with a stable row selection, and it
    cannot fail after the charge."""

_PARAMS = """    epsilon : float, default=1.0
        Privacy loss of one ``fit``, ``> 0``.
    delta : float, default=1e-6
        Failure probability of one ``fit``, in ``(0, 1)``.
    max_iter : int or "auto", default="auto"
        Boosting rounds (each charged: a fixed number, no early stopping).
        ``"auto"``: 30, except for the classifier's cyclic boosting: 3
        below ε = 1 and 5 from it, and for the trees of its
        ``boosting="auto"`` from ε = 1000: 100 (see ``boosting``).
    max_depth : int, default=3
        Depth of every tree (complete trees: ``2**max_depth`` leaves).
    learning_rate : float or "auto", default="auto"
        Shrinkage of the leaf values. ``"auto"``: 0.3, except for the
        classifier's cyclic boosting: 0.5, and for the trees of its
        ``boosting="auto"`` from ε = 1000: 0.1.
    max_bins : int or "auto", default="auto"
        Largest number of bins per feature, in [2, 255]. ``"auto"``: 8, except
        for the classifier's cyclic boosting: 16 below ε = 1, 32 from it,
        and for the trees of its ``boosting="auto"`` from ε = 1000: 255.
    l2_regularization : float, default=0.0
        ``λ`` of scikit-learn's gain and leaf values (the noise allowance is
        added to it, see Notes).
    max_features : float, default=0.3
        Proportion of the features each node samples (uniformly, without
        replacement, from the random source, never from the data):
        ``max(1, int(max_features * n_features))`` of them, scikit-learn's
        rule. A node's histograms are released for its sampled features
        only, so the noise of a level scales with the square root of that
        number instead of ``n_features`` (see Notes). ``1.0``: every feature,
        scikit-learn's default.
    bin_share : float or "auto", default="auto"
        Share of the fit's budget (of its squared Gaussian DP parameter)
        that releases the private bins (``feature_bounds=None``), in ``(0,
        0.5]``; the rest goes to the trees. Public. ``"auto"``: 0.1, except
        for the classifier's cyclic boosting: 0.4 below ε = 1, 0.2 from it. Finer
        bins need more:
        ``boosting="trees", bin_share=0.3, max_bins=32, max_depth=2,
        learning_rate=0.5`` is the trees' setting that measured best on
        Adult one-hot (see Notes).
    boosting : {"auto", "trees", "cyclic"}, default="auto"
        ``"trees"``: complete trees grown on noisy histograms. ``"cyclic"``:
        per round, one step per feature in turn, a value per bin from its
        released sums (a private additive model, see Notes). The
        classifier's ``"auto"`` settings for it depend on ε (public),
        measured on Adult (the regressor keeps the trees'): below
        ε = 1 ``max_iter=3, max_bins=16, learning_rate=0.5,
        bin_share=0.4``; from ε = 1 ``max_iter=5, max_bins=32,
        learning_rate=0.5, bin_share=0.2``. ``"auto"`` (read from the
        public ε, see ``boosting_``): for the classifier, cyclic boosting
        below ε = 1000 and from it trees with scikit-learn's
        ``max_iter=100, max_bins=255, learning_rate=0.1``, so that as
        ε → ∞ the fit becomes scikit-learn's boosting on the same bins
        (measured in the Notes); for the regressor, trees. ``max_depth``
        and ``max_features`` apply to trees only.
    feature_bounds : tuple of (float or array-like, float or array-like), \
default=None
        Public ``(lower, upper)`` per feature: ``max_bins`` equal-width bins
        between them, free (values outside fall in the end bins). ``None``
        releases quantile bins privately (see Notes).
    max_rows_per_group : int, default=None
        Public bound ``k`` on a group's rows with ``fit(..., groups=...)``
        (user-level privacy): each group keeps at most ``k`` of its rows and
        every release's noise is ``k`` times a row's (see Notes). None: the
        unit is one row."""

_ATTRS = """    boosting_ : {"trees", "cyclic"}
        The model the fit grew (``boosting``, with ``"auto"`` read from
        the public ε).
    n_iter_ : int
        Number of rounds (``max_iter``).
    n_trees_per_iteration_ : int
        Trees per round.
    bin_thresholds_ : list of ndarray
        Per feature, the values where its bins 1, 2, ... start.
    epsilon_spent_, delta_spent_ : float
        What ``fit`` charged.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, for string column names."""


_SCORE = """The model's default score on ``(X, y)`` (not private: it reads ``y``).

        {kind}. On private rows the score is a release: exact, and charged
        to no accountant; evaluate privately with :mod:`skdp.metrics` (see
        :ref:`evaluating`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """


_FIT = """Charge ``(epsilon, delta)`` and fit the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (finite: NaN and infinities are refused before
            the charge), or a Dask array (see Notes: its bin codes are
            gathered into memory).
        y : array-like of shape (n_samples,)
            {y}
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights in [0, 1], as in scikit-learn's
            ``{counterpart}``: each row's gradient, hessian and baseline
            terms are multiplied by its weight, at the noise of the
            unweighted fit (Notes). Refused outside [0, 1] before the charge.
        groups : array-like of shape (n_samples,), default=None
            Each row's privacy unit, with ``max_rows_per_group``{groups}
            (see Notes). None: one row.

        Returns
        -------
        self : {name}
        """


def write_docstrings(classifier, regressor):
    """Set the two estimators' docstrings (they share most of it)."""
    classifier.score.__doc__ = _SCORE.format(kind="Accuracy")
    regressor.score.__doc__ = _SCORE.format(kind="R²")
    classifier.fit.__doc__ = _FIT.format(
        y="Class labels, all in ``classes`` when it is given.",
        counterpart="HistGradientBoostingClassifier",
        groups=" and the public ``classes``",
        name=classifier.__name__,
    )
    regressor.fit.__doc__ = _FIT.format(
        y="Targets (finite), clipped to ``target_bounds``.",
        counterpart="HistGradientBoostingRegressor",
        groups="",
        name=regressor.__name__,
    )
    classifier.__doc__ = f"""Differentially private
    histogram gradient boosting for classification.

    The private counterpart of
    :class:`~sklearn.ensemble.HistGradientBoostingClassifier`: binned
    features, Newton boosting of the log loss with trees grown level by
    level from noisy histograms of gradients and hessians, noisy leaves.
    At its default ``boosting="auto"`` it boosts a private additive model
    (one feature per step) below ε = 1000, which measured ahead of the
    trees at ε ≤ 3 on Adult and ``fair`` and level on three other real
    tables (behind in ROC AUC on two of them at ε = 0.3), but misses
    interactions between features (state ``boosting="trees"`` where they
    matter), and grows scikit-learn's trees from ε = 1000 (see Notes).
    Binary and multiclass (one tree per class and round). The whole
    ``(epsilon, delta)`` is charged once, before the data is read.

    Parameters
    ----------
{_PARAMS}
    classes : array-like of shape (n_classes,), default=None
        The public label set. ``None`` selects it privately (partition
        selection with ``LABELS_SHARE`` = 10 % of ``epsilon`` and ``delta``,
        as :class:`~skdp.linear_model.PrivateLogisticRegression`).
    max_classes : int, default=32
        With ``classes=None``, the most labels the fit keeps, at least 2
        (ignored when ``classes`` is stated). The released label set is
        known only after the charge, so the plan (memory, run time, the
        sampler's range) assumes ``max_classes`` labels; of a larger
        released set the fit keeps the first ``max_classes`` labels in
        sorted order and their rows (see Notes). Lower it, or state
        ``classes``, when a fit is refused for its number of classes.
    accountant : BudgetAccountant, default=None
        Charged before the data is read; ``None`` uses
        :func:`~skdp.default_accountant`.
    random_state : None, int or RandomState, default=None
        ``None`` draws noise from the operating system's CSPRNG; an int
        gives reproducible, *not secure*, noise.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels: stated, or released by the private selection.
{_ATTRS}

    See Also
    --------
    PrivateHistGradientBoostingRegressor : The regressor.
    skdp.linear_model.PrivateLogisticRegression : A private linear model.

    Notes
    -----{
        _NOTES.format(
            baseline="0 (log-odds 0, probability 1/2; scikit-learn starts at "
            "the prior's log-odds, which a private fit would have to release)",
            bounds="``g = p - y`` in [-1, 1] and ``h = p (1 - p)`` in [0, 1/4] "
            "(per class for ``K`` classes), with no clipping.",
            extra="",
            labels=_LABELS,
        )
    }
    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ensemble import PrivateHistGradientBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20_000, 3))
    >>> y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    >>> clf = PrivateHistGradientBoostingClassifier(
    ...     epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape, bool(clf.score(X, y) > 0.85)
    ((2, 2), True)
    """
    regressor.__doc__ = f"""Differentially private
    histogram gradient boosting for regression (squared error).

    The private counterpart of
    :class:`~sklearn.ensemble.HistGradientBoostingRegressor`, with the
    algorithm of :class:`PrivateHistGradientBoostingClassifier` on the half
    squared error of the target scaled to [-1, 1] by its range. The whole
    ``(epsilon, delta)`` is charged once, before the data is read.

    Parameters
    ----------
{_PARAMS}
    target_bounds : tuple of (float, float), default=None
        Public ``(low, high)`` of the target, which is clipped to it.
        ``None`` releases the range privately (the target's exponent
        histogram of :class:`~skdp.linear_model.PrivateLinearRegression`,
        with ``TARGET_SHARE`` = 10 %, before the bins).
    accountant : BudgetAccountant, default=None
        Charged before the data is read; ``None`` uses
        :func:`~skdp.default_accountant`.
    random_state : None, int or RandomState, default=None
        ``None`` draws noise from the operating system's CSPRNG; an int
        gives reproducible, *not secure*, noise.

    Attributes
    ----------
    target_range_ : ndarray of shape (2,)
        The target's clipping range (stated or released).
{_ATTRS}

    See Also
    --------
    PrivateHistGradientBoostingClassifier : The classifier.

    Notes
    -----{
        _NOTES.format(
            baseline="the middle of the target's range (scikit-learn: the mean)",
            bounds="with the target ``z`` scaled to [-1, 1], ``g = raw - z`` "
            "clipped to [-2, 2] (the largest residual of a prediction inside "
            "the range) and ``h = 1``.",
            extra=" and ``TARGET_SHARE`` = 10 % for a private target range",
            labels="",
        )
    }
    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ensemble import PrivateHistGradientBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20_000, 2))
    >>> y = np.sin(3 * X[:, 0]) + X[:, 1]
    >>> reg = PrivateHistGradientBoostingRegressor(
    ...     epsilon=1.0, target_bounds=(-2, 2), random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.8)
    True
    """
