"""Plot of a privacy–utility curve, in scikit-learn's Display style."""

import numpy as np
from sklearn.utils._optional_dependencies import check_matplotlib_support

from skdp.model_selection._curve import privacy_utility_curve

__all__ = ["PrivacyUtilityDisplay"]


class PrivacyUtilityDisplay:
    """Privacy–utility curve visualization: mean test score against ε.

    Build it with :meth:`from_estimator` (which runs
    :func:`~skdp.model_selection._curve.privacy_utility_curve` and charges
    every fit to the accountant) or :meth:`from_curve` (from a computed
    curve, for free); the constructor only stores the values. Plotting needs
    matplotlib.

    Parameters
    ----------
    epsilons : array-like of shape (n_epsilons,)
        The privacy levels, in increasing order.
    scores : array-like of shape (n_epsilons, n_repeats)
        Test scores, one row per ε.
    reference_score : float or None, default=None
        Score of a non-private reference, drawn as a dashed horizontal line.
    estimator_name : str or None, default=None
        Label of the private curve in the legend.
    scoring : str or None, default=None
        Name of the score, used as the y-axis label (``"score"`` if None).

    Attributes
    ----------
    line_ : matplotlib Line2D
        The mean score against ε.
    fill_between_ : matplotlib PolyCollection or None
        The ±1 standard deviation band (``std_display_style="fill_between"``).
    errorbar_ : matplotlib ErrorbarContainer or None
        The mean with ±1 standard deviation bars
        (``std_display_style="errorbar"``); ``line_`` is its data line.
    reference_line_ : matplotlib Line2D or None
        The non-private reference score.
    ax_ : matplotlib Axes
        Axes with the curve.
    figure_ : matplotlib Figure
        Figure containing the curve.

    See Also
    --------
    privacy_utility_curve : Compute the scores.
    sklearn.model_selection.ValidationCurveDisplay : Scores against any
        hyperparameter.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.model_selection import PrivacyUtilityDisplay
    >>> display = PrivacyUtilityDisplay(
    ...     epsilons=np.array([0.1, 0.5, 1.0]),
    ...     scores=np.array([[0.55, 0.65], [0.75, 0.79], [0.82, 0.84]]),
    ...     reference_score=0.86, estimator_name="private model",
    ...     scoring="accuracy",
    ... ).plot()
    >>> display.ax_.get_xlabel(), display.ax_.get_ylabel()
    ('epsilon', 'accuracy')
    """

    def __init__(
        self,
        *,
        epsilons,
        scores,
        reference_score=None,
        estimator_name=None,
        scoring=None,
    ):
        self.epsilons = epsilons
        self.scores = scores
        self.reference_score = reference_score
        self.estimator_name = estimator_name
        self.scoring = scoring

    def plot(
        self, ax=None, *, std_display_style="fill_between", xscale="log", **kwargs
    ):
        """Plot the mean score against ε with a ±1 standard deviation band.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to plot on; ``None`` creates a new figure and axes.
        std_display_style : {"fill_between", "errorbar"} or None, \
                default="fill_between"
            How the standard deviation over the repeats is shown: a shaded
            band, error bars, or (``None``) not at all.
        xscale : str, default="log"
            Scale of the ε axis, passed to ``ax.set_xscale``.
        **kwargs : dict
            Keyword arguments for the mean line (``ax.plot``, or
            ``ax.errorbar`` with ``std_display_style="errorbar"``).

        Returns
        -------
        display : PrivacyUtilityDisplay
            The display, with the matplotlib objects stored in its attributes.
        """
        check_matplotlib_support(f"{type(self).__name__}.plot")
        import matplotlib.pyplot as plt

        if std_display_style not in ("fill_between", "errorbar", None):
            raise ValueError(
                "std_display_style must be 'fill_between', 'errorbar' or None; "
                f"got {std_display_style!r}."
            )
        epsilons, scores = self._validated_values()
        mean, std = scores.mean(axis=1), scores.std(axis=1)

        if ax is None:
            _, ax = plt.subplots()
        line_kw = {"label": self.estimator_name or "private", **kwargs}

        self.fill_between_ = self.errorbar_ = None
        if std_display_style == "errorbar":
            self.errorbar_ = ax.errorbar(epsilons, mean, yerr=std, **line_kw)
            self.line_ = self.errorbar_.lines[0]
        else:
            (self.line_,) = ax.plot(epsilons, mean, **line_kw)
            if std_display_style == "fill_between":
                self.fill_between_ = ax.fill_between(
                    epsilons,
                    mean - std,
                    mean + std,
                    alpha=0.3,
                    color=self.line_.get_color(),
                    label="±1 std",
                )

        self.reference_line_ = None
        if self.reference_score is not None:
            self.reference_line_ = ax.axhline(
                self.reference_score, linestyle="--", color="black", label="non-private"
            )

        ax.set_xscale(xscale)
        ax.set_xlabel("epsilon")
        ax.set_ylabel(self.scoring or "score")
        ax.legend()
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    def _validated_values(self):
        epsilons = np.asarray(self.epsilons, dtype=np.float64)
        scores = np.asarray(self.scores, dtype=np.float64)
        if scores.ndim == 1:
            scores = scores[:, np.newaxis]
        if epsilons.ndim != 1 or scores.ndim != 2 or len(scores) != len(epsilons):
            raise ValueError(
                "scores must have shape (n_epsilons, n_repeats) with n_epsilons = "
                f"len(epsilons); got epsilons of shape {epsilons.shape} and scores "
                f"of shape {scores.shape}."
            )
        return epsilons, scores

    @classmethod
    def from_curve(cls, curve, ax=None, **kwargs):
        """Plot a computed :class:`~skdp.model_selection._curve.PrivacyUtilityCurve`.

        Nothing is fitted and nothing is charged.

        Parameters
        ----------
        curve : PrivacyUtilityCurve
            The result of ``privacy_utility_curve``.
        ax : matplotlib Axes, default=None
            Axes to plot on; ``None`` creates a new figure and axes.
        **kwargs : dict
            Passed to :meth:`plot` (``std_display_style``, ``xscale`` and
            keyword arguments for the mean line).

        Returns
        -------
        display : PrivacyUtilityDisplay

        Examples
        --------
        >>> import numpy as np
        >>> from skdp.model_selection import PrivacyUtilityCurve
        >>> from skdp.model_selection import PrivacyUtilityDisplay
        >>> curve = PrivacyUtilityCurve(
        ...     epsilons=np.array([0.1, 1.0]),
        ...     scores=np.array([[0.6, 0.7], [0.8, 0.8]]),
        ...     scoring="accuracy",
        ... )
        >>> display = PrivacyUtilityDisplay.from_curve(curve)
        >>> display.line_.get_ydata()
        array([0.65, 0.8 ])
        """
        check_matplotlib_support(f"{cls.__name__}.from_curve")
        display = cls(
            epsilons=curve.epsilons,
            scores=curve.scores,
            reference_score=curve.reference_score,
            estimator_name=curve.estimator_name,
            scoring=curve.scoring,
        )
        return display.plot(ax=ax, **kwargs)

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        epsilons,
        n_repeats=10,
        scoring=None,
        reference_estimator=None,
        ax=None,
        **curve_kwargs,
    ):
        """Compute a privacy–utility curve and plot it.

        Runs :func:`~skdp.model_selection._curve.privacy_utility_curve`, which
        charges every private fit to the accountant (``n_repeats *
        sum(epsilons)`` for an estimator whose cost is its ε) after checking
        that the whole sweep fits in the budget.

        Parameters
        ----------
        estimator : estimator object
            The private estimator (or a pipeline containing one).
        X : array-like of shape (n_samples, n_features)
            The data, split into train and test parts.
        y : array-like of shape (n_samples,) or None
            Targets.
        epsilons : array-like of shape (n_epsilons,)
            The privacy levels.
        n_repeats : int, default=10
            Fits per ε.
        scoring : str, callable or None, default=None
            A single scorer; ``None`` uses the estimator's ``score``.
        reference_estimator : estimator object or None, default=None
            A non-private estimator scored on the same split.
        ax : matplotlib Axes, default=None
            Axes to plot on; ``None`` creates a new figure and axes.
        **curve_kwargs : dict
            Other arguments of ``privacy_utility_curve``: ``param_name``,
            ``test_size``, ``accountant``, ``random_state``, ``n_jobs``,
            ``verbose``.

        Returns
        -------
        display : PrivacyUtilityDisplay

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from sklearn.linear_model import LogisticRegression
        >>> from skdp import BudgetAccountant, SampleAggregateEstimator
        >>> from skdp.model_selection import PrivacyUtilityDisplay
        >>> X, y = make_classification(n_samples=2000, n_features=4,
        ...                            n_redundant=0, random_state=0)
        >>> acc = BudgetAccountant(epsilon=5.0)
        >>> display = PrivacyUtilityDisplay.from_estimator(
        ...     SampleAggregateEstimator(LogisticRegression(), classes=[0, 1],
        ...                              n_blocks=20, output_bounds=("l2", 5.0)),
        ...     X, y, epsilons=[0.1, 1.0], n_repeats=2,
        ...     reference_estimator=LogisticRegression(), accountant=acc,
        ...     random_state=0)
        >>> display.ax_.get_xscale(), acc.total()
        ('log', (2.2, 0.0))
        """
        # before anything is charged: a missing matplotlib must not cost budget
        check_matplotlib_support(f"{cls.__name__}.from_estimator")
        curve = privacy_utility_curve(
            estimator,
            X,
            y,
            epsilons=epsilons,
            n_repeats=n_repeats,
            scoring=scoring,
            reference_estimator=reference_estimator,
            **curve_kwargs,
        )
        return cls.from_curve(curve, ax=ax)
