"""NumPy-style functions that release one statistic with differential privacy.

``mean``, ``var``, ``std``, ``sum``, ``count_nonzero``, ``quantile``,
``percentile``, ``median``, ``histogram``, ``histogram2d``, ``histogramdd``
and the NaN-tolerant ``nanmean``, ``nanvar``, ``nanstd``, ``nansum``,
``nanquantile``, ``nanpercentile``, ``nanmedian``: the
names of NumPy and of diffprivlib's ``tools``, so that code moves with one
changed import. Each function is a thin call of the estimator that releases
the statistic (:class:`~skdp.PrivateMean`, :class:`~skdp.PrivateStandardScaler`,
:class:`~skdp.PrivateQuantile`, :class:`~skdp.PrivateHistogram`,
:class:`~skdp.PrivateJointHistogram`) or of its release functions, so the
guarantee, the sensitivity and the ledger entries are the estimator's. Each
takes ``epsilon``, public ``bounds`` (or the estimator's private default, where
it has one), ``accountant=`` and ``random_state=``; the privacy unit is a row,
the first axis of the array, or with ``groups=`` and a public
``max_rows_per_group=k`` one whole group of rows (:ref:`user_level_privacy`).
numpy's ``keepdims`` (and ``dtype``, where numpy has it) shape and cast the
released values; ``density=True`` of the histograms normalises the released
counts (post-processing).
"""

from skdp._lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    {
        "skdp.tools._histograms": ["histogram", "histogram2d", "histogramdd"],
        "skdp.tools._moments": ["count_nonzero", "mean", "std", "sum", "var"],
        "skdp.tools._nan": ["nanmean", "nanstd", "nansum", "nanvar"],
        "skdp.tools._nan_quantiles": ["nanmedian", "nanpercentile", "nanquantile"],
        "skdp.tools._quantiles": ["median", "percentile", "quantile"],
    },
)
