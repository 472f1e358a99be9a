"""Sphinx configuration for skdp's documentation.

Build (CI does this, warnings are errors)::

    pip install -e ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The build is offline by default, and so are the pages it writes: math is
MathML converted at build time (``_ext/mathml.py``), with no MathJax or other
script from a CDN, so formulas render with no network access. Set
``SKDP_DOCS_INTERSPHINX=1`` to link Python, NumPy, SciPy and scikit-learn
names to their documentation (this downloads their inventories, so it needs
network access). Set
``SKDP_DOCS_PLOT_GALLERY=0`` to render the gallery without running the
examples (no plots; for quick local builds of the prose).
"""

import os
import sys
from pathlib import Path

import skdp

# Local extensions (docs/_ext): the MathML renderer.
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "skdp"
author = "skdp developers"
copyright = "skdp developers"
release = skdp.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "mathml",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates"]
default_role = "literal"

# -- API reference -----------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True}
autodoc_typehints = "none"
# Methods are documented on the class page by the template in _templates;
# numpydoc's own member tables would need a stub page per method.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc validation: the checks below are about *content* a reader relies on
# (every parameter documented and no stale ones, a summary line, a Returns
# section that matches the code, known section names). They are errors in this
# build. Checks left out are style preferences that skdp's docstrings do not
# follow on purpose: one-line summaries longer than one sentence (SS05, SS06),
# "See Also" and "Examples" sections on every private helper method
# (SA01, EX01), an extended summary on every method (ES01), and the
# description punctuation rules (PR08, PR09, RT02, RT03).
numpydoc_validation_checks = {"GL06", "GL07", "PR01", "PR02", "SS01"}
# Excluded from validation: private helpers and dunder methods (not public
# API), and the record types (NamedTuple / dataclass), whose fields numpydoc
# reads as constructor parameters (PR01) although they are documented, as
# numpydoc recommends for such classes, under "Attributes".
numpydoc_validation_exclude = {
    r"\._[a-zA-Z]",
    r"\.__\w+__$",
    r"^skdp\.accounting\.LedgerEntry$",
    r"^skdp\.audit\.(AuditResult|\w+Event)$",
    r"^skdp\.metrics\.PrivateEstimate$",
}


def _skip_sklearn_request_methods(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods.

    scikit-learn attaches them to every estimator class for metadata routing;
    they are documented (with references into scikit-learn's own user guide)
    in scikit-learn, and say nothing about privacy.
    """
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_request_methods)


# -- Gallery -----------------------------------------------------------------
plot_gallery = os.environ.get("SKDP_DOCS_PLOT_GALLERY", "1") != "0"
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "/plot_",
    "plot_gallery": plot_gallery,
    "abort_on_example_error": True,
    "write_computation_times": False,
    "doc_module": ("skdp",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"skdp": None},
    "remove_config_comments": True,
    "min_reported_time": 1,
}

# -- Cross-references to other projects (opt-in: needs network) -------------
if os.environ.get("SKDP_DOCS_INTERSPHINX") == "1":
    extensions.append("sphinx.ext.intersphinx")
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "scipy": ("https://docs.scipy.org/doc/scipy", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
    }

# -- HTML --------------------------------------------------------------------
# The theme of the scientific Python projects (NumPy, SciPy, scikit-learn).
# It ships its fonts and icons, so the pages load nothing from the network.
html_theme = "pydata_sphinx_theme"
html_theme_options = {
    "logo": {"text": "skdp"},
    # skdp has no hosted site or public repository to link to (yet).
    "icon_links": [],
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
}
# Without a default colour mode a first visit logs "Got invalid theme mode".
html_context = {"default_mode": "auto"}
html_static_path = ["_static"]
# Opened as files, the search page must not fetch the result pages for their
# summaries: browsers block fetch() over file:// (CORS errors in the console).
html_js_files = ["offline_search.js"]
# Math is MathML written at build time (docs/_ext/mathml.py), not MathJax from
# a CDN: the pages render their formulas with no network access.
html_math_renderer = "mathml"
html_title = f"skdp {release}"
