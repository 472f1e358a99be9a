"""Real tabular data sets, not Adult, that load offline.

Each loader returns a :class:`Table`: the features **unscaled, as a user has
them** (numeric columns in their own units; a yes/no column becomes 0/1, a
text column that a user would have to encode is left out and named in
``note``), the target, and where the data come from.

Sources, all shipped inside the installed package (no network):

* scikit-learn's bundled sets: ``load_breast_cancer``, ``load_wine``,
  ``load_digits``, ``load_diabetes(scaled=False)``.
* ``statsmodels.datasets`` (``pip install statsmodels``): ``fair`` and
  ``randhie``.
* ``ISLP`` (``pip install --no-deps ISLP``: only its CSV files are read, so
  its heavy dependencies such as torch are not needed): ``Default``,
  ``Caravan`` and ``Bikeshare``.

A loader whose package is missing raises :class:`MissingPackage`, which the
benchmark turns into a skip message naming the install command.
"""

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


class MissingPackage(RuntimeError):
    """A benchmark data package is not installed (the message says how)."""


@dataclass
class Table:
    name: str
    task: str  # "classification" or "regression"
    X: np.ndarray
    y: np.ndarray
    feature_names: list
    source: str
    licence: str
    note: str = ""
    # public per-feature ranges a careful user would state (the schema);
    # None: the column ranges of the whole table (see ``stated_ranges``)
    schema_ranges: tuple = field(default=None, repr=False)

    @property
    def shape(self):
        return self.X.shape

    @property
    def classes(self):
        return np.unique(self.y).tolist() if self.task == "classification" else None


def stated_ranges(table):
    """Per-feature ``(lower, upper)`` a careful user states: the schema's
    ranges where the table has one, else the true column ranges (widened by
    1 where a column is constant, so that every interval has a width)."""
    if table.schema_ranges is not None:
        lower, upper = table.schema_ranges
        d = table.X.shape[1]
        return np.broadcast_to(lower, d).astype(float), np.broadcast_to(
            upper, d
        ).astype(float)
    lower, upper = table.X.min(axis=0), table.X.max(axis=0)
    return lower, np.where(upper > lower, upper, lower + 1.0)


def _sklearn_table(name, loader, task, licence, **kwargs):
    bunch = loader(**kwargs)
    return Table(
        name=name,
        task=task,
        X=np.asarray(bunch.data, dtype=float),
        y=np.asarray(bunch.target),
        feature_names=list(getattr(bunch, "feature_names", [])),
        source=f"scikit-learn `{loader.__name__}`",
        licence=licence,
    )


def breast_cancer():
    from sklearn.datasets import load_breast_cancer

    return _sklearn_table(
        "breast_cancer",
        load_breast_cancer,
        "classification",
        "UCI (Wisconsin diagnostic); bundled with scikit-learn (BSD-3)",
    )


def wine():
    from sklearn.datasets import load_wine

    return _sklearn_table(
        "wine", load_wine, "classification", "UCI; bundled with scikit-learn"
    )


def digits():
    from sklearn.datasets import load_digits

    table = _sklearn_table(
        "digits", load_digits, "classification", "UCI; bundled with scikit-learn"
    )
    table.schema_ranges = (0.0, 16.0)  # pixel intensities are 0..16
    table.note = "8x8 pixels in 0..16 (stated ranges: the schema's (0, 16))"
    return table


def diabetes():
    from sklearn.datasets import load_diabetes

    table = _sklearn_table(
        "diabetes",
        load_diabetes,
        "regression",
        "Efron et al. 2004; bundled with scikit-learn",
        scaled=False,
    )
    table.note = "load_diabetes(scaled=False): original units"
    return table


def _statsmodels_dataset(name):
    if importlib.util.find_spec("statsmodels") is None:
        raise MissingPackage(f"{name}: needs statsmodels (pip install statsmodels)")
    import statsmodels.datasets

    module = getattr(statsmodels.datasets, name)
    licence = " ".join(str(module.COPYRIGHT).split())
    return module.load_pandas().data, licence


def fair():
    data, licence = _statsmodels_dataset("fair")
    y = (data.pop("affairs").to_numpy() > 0).astype(int)
    return Table(
        name="fair",
        task="classification",
        X=data.to_numpy(dtype=float),
        y=y,
        feature_names=list(data.columns),
        source="statsmodels.datasets.fair (Fair 1978, Redbook survey)",
        licence=f"statsmodels: {licence!r}",
        note="target: affairs > 0",
    )


def randhie():
    data, licence = _statsmodels_dataset("randhie")
    y = data.pop("mdvis").to_numpy(dtype=float)
    return Table(
        name="randhie",
        task="regression",
        X=data.to_numpy(dtype=float),
        y=y,
        feature_names=list(data.columns),
        source="statsmodels.datasets.randhie (RAND Health Insurance Experiment)",
        licence=f"statsmodels: {licence!r}",
        note="target: mdvis (outpatient visits, a zero-inflated count)",
    )


def _islp_csv(name):
    spec = importlib.util.find_spec("ISLP")
    if spec is None or spec.origin is None:
        raise MissingPackage(f"{name}: needs ISLP (pip install --no-deps ISLP)")
    import pandas as pd

    return pd.read_csv(Path(spec.origin).parent / "data" / f"{name}.csv")


ISLP_LICENCE = "ISLP package: BSD; data from the ISLR R package (GPL-2)"


def default():
    data = _islp_csv("Default")
    y = (data.pop("default") == "Yes").to_numpy().astype(int)
    data["student"] = (data["student"] == "Yes").astype(float)
    return Table(
        name="Default",
        task="classification",
        X=data.to_numpy(dtype=float),
        y=y,
        feature_names=list(data.columns),
        source="ISLP `Default` (simulated credit-card default, ISLR)",
        licence=ISLP_LICENCE,
        note="student as 0/1; balance and income in dollars",
    )


def caravan():
    data = _islp_csv("Caravan")
    y = (data.pop("Purchase") == "Yes").to_numpy().astype(int)
    return Table(
        name="Caravan",
        task="classification",
        X=data.to_numpy(dtype=float),
        y=y,
        feature_names=list(data.columns),
        source="ISLP `Caravan` (CoIL 2000 insurance)",
        licence=ISLP_LICENCE,
        note="85 integer codes, many mostly zero; 6 % positive",
    )


def bikeshare():
    data = _islp_csv("Bikeshare")
    y = data.pop("bikers").to_numpy(dtype=float)
    dropped = ["mnth", "weathersit", "casual", "registered"]
    data = data.drop(columns=dropped)
    return Table(
        name="Bikeshare",
        task="regression",
        X=data.to_numpy(dtype=float),
        y=y,
        feature_names=list(data.columns),
        source="ISLP `Bikeshare` (Capital Bikeshare, hourly, 2011)",
        licence=ISLP_LICENCE,
        note=(
            "target: bikers; text columns mnth, weathersit and the target's "
            "parts casual, registered left out"
        ),
    )


LOADERS = {
    "breast_cancer": breast_cancer,
    "wine": wine,
    "digits": digits,
    "fair": fair,
    "Default": default,
    "Caravan": caravan,
    "diabetes": diabetes,
    "Bikeshare": bikeshare,
    "randhie": randhie,
}


def load_tables(names=None):
    """The tables that load, and a skip message for each one that does not."""
    tables, skipped = [], []
    for name in names or LOADERS:
        try:
            tables.append(LOADERS[name]())
        except MissingPackage as exc:
            skipped.append(str(exc))
    return tables, skipped
