"""Every public name of diffprivlib 0.6.6 has a documented skdp counterpart.

The names are data, listed once by running diffprivlib 0.6.6 (with
scikit-learn 1.5.2, where it still imports): its subpackages' public
classes and functions, modules and re-exported third-party names left out.
diffprivlib is not imported here. The counterparts are the table
"diffprivlib-names" in ``docs/migrating_from_diffprivlib.rst``: each row's
skdp name must import, and a row marked ``(none)`` must give its reason.
"""

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "migrating_from_diffprivlib.rst"

DIFFPRIVLIB_0_6_6 = {
    "diffprivlib": ["BudgetAccountant"],
    "diffprivlib.accountant": [
        "Budget",
        "BudgetAccountant",
        "BudgetError",
        "check_epsilon_delta",
    ],
    "diffprivlib.models": [
        "DecisionTreeClassifier",
        "GaussianNB",
        "KMeans",
        "LinearRegression",
        "LogisticRegression",
        "PCA",
        "RandomForestClassifier",
        "StandardScaler",
    ],
    "diffprivlib.tools": [
        "count_nonzero",
        "histogram",
        "histogram2d",
        "histogramdd",
        "mean",
        "median",
        "nanmean",
        "nanstd",
        "nansum",
        "nanvar",
        "percentile",
        "quantile",
        "std",
        "sum",
        "var",
    ],
    "diffprivlib.mechanisms": [
        "Binary",
        "Bingham",
        "DPMachine",
        "DPMechanism",
        "Exponential",
        "ExponentialCategorical",
        "ExponentialHierarchical",
        "Gaussian",
        "GaussianAnalytic",
        "GaussianDiscrete",
        "Geometric",
        "GeometricFolded",
        "GeometricTruncated",
        "Laplace",
        "LaplaceBoundedDomain",
        "LaplaceBoundedNoise",
        "LaplaceFolded",
        "LaplaceTruncated",
        "PermuteAndFlip",
        "Snapping",
        "Staircase",
        "TruncationAndFoldingMixin",
        "Uniform",
        "Vector",
    ],
    "diffprivlib.validation": [
        "DiffprivlibMixin",
        "check_bounds",
        "check_epsilon_delta",
        "clip_to_bounds",
        "clip_to_norm",
        "warn_unused_args",
    ],
    "diffprivlib.utils": [
        "Budget",
        "BudgetError",
        "DiffprivlibCompatibilityWarning",
        "PrivacyLeakWarning",
        "check_random_state",
        "copy_docstring",
        "warn_unused_args",
    ],
}

DIFFPRIVLIB_NAMES = sorted(
    f"{module}.{name}" for module, names in DIFFPRIVLIB_0_6_6.items() for name in names
)

_ROW = re.compile(
    r"^   \* - ``(?P<dpl>diffprivlib[\w.]*)``\n"
    r"     - (?P<skdp>.*)\n"
    r"     -(?P<note>(?: .*)?(?:\n       .*)*)",
    re.MULTILINE,
)
_ROLE = re.compile(r"^:(?:class|func):`(?P<name>skdp[\w.]*)`$")


def documented_counterparts():
    """``{diffprivlib name: (skdp cell, note)}`` from the page's table."""
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index(":name: diffprivlib-names") :]
    rows = {}
    for match in _ROW.finditer(table):
        note = " ".join(match["note"].split())
        assert match["dpl"] not in rows, f"{match['dpl']} is listed twice"
        rows[match["dpl"]] = (match["skdp"].strip(), note)
    return rows


def resolve(dotted):
    """The object a dotted skdp name refers to (module, then attributes)."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            obj = getattr(obj, attribute)
        return obj
    raise ImportError(dotted)


def test_the_table_lists_exactly_diffprivlibs_names():
    rows = documented_counterparts()
    assert sorted(rows) == DIFFPRIVLIB_NAMES


@pytest.mark.parametrize("dpl_name", DIFFPRIVLIB_NAMES)
def test_each_name_has_an_importable_counterpart_or_a_reason(dpl_name):
    skdp_cell, note = documented_counterparts()[dpl_name]
    if skdp_cell == "(none)":
        assert len(note) > 20, f"{dpl_name} has no counterpart and no reason"
        return
    role = _ROLE.match(skdp_cell)
    assert role, f"{dpl_name}: {skdp_cell!r} is not :class: or :func: of skdp"
    obj = resolve(role["name"])
    assert callable(obj)


def test_every_tools_function_keeps_diffprivlibs_name():
    import skdp.tools

    assert set(DIFFPRIVLIB_0_6_6["diffprivlib.tools"]) <= set(skdp.tools.__all__)
