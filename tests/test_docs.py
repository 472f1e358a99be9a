"""The documentation builds with warnings as errors, gallery included.

This is the docs build of CI: Sphinx runs every ``examples/plot_*.py`` once
(sphinx-gallery), renders the user guide and generates an API page for every
public name. It needs the ``docs`` extra (``pip install -e ".[docs]"``) and is
skipped without it.

The sources are copied to a temporary directory first, so that the generated
pages (``generated/``, ``auto_examples/``) never land in the working tree and
two concurrent runs cannot collide.
"""

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Submodules whose public names the API reference documents; a name that is
# also exported by ``skdp`` itself is documented once, as ``skdp.<name>``.
SUBMODULES = [
    "skdp.accounting",
    "skdp.audit",
    "skdp.decomposition",
    "skdp.linear_model",
    "skdp.mechanisms",
    "skdp.model_selection",
    "skdp.naive_bayes",
    "skdp.preprocessing",
    "skdp.sensitivity",
]

USER_GUIDE = [
    "getting_started",
    "privacy_model",
    "accountant",
    "user_guide",
    "clipping",
    "means",
    "robust_statistics",
    "preprocessing",
    "linear_models",
    "naive_bayes",
    "decomposition",
    "sample_aggregate",
    "sparse_vector",
    "selection",
    "model_selection",
    "limitations",
    "api",
]


def _expected_api_pages():
    import skdp

    pages = {f"skdp.{name}" for name in skdp.__all__}
    for module_name in SUBMODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            owner = "skdp" if name in skdp.__all__ else module_name
            pages.add(f"{owner}.{name}")
    return sorted(pages)


@pytest.fixture(scope="module")
def built_docs(tmp_path_factory):
    pytest.importorskip("sphinx", reason="the docs extra is not installed")
    pytest.importorskip("numpydoc", reason="the docs extra is not installed")
    pytest.importorskip("sphinx_gallery", reason="the docs extra is not installed")
    pytest.importorskip("matplotlib", reason="the gallery examples draw plots")

    work = tmp_path_factory.mktemp("docs")
    ignore = shutil.ignore_patterns("_build", "generated", "auto_examples")
    shutil.copytree(ROOT / "docs", work / "docs", ignore=ignore)
    shutil.copytree(ROOT / "examples", work / "examples", ignore=ignore)
    html = work / "html"
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-j",
        "1",
        "-b",
        "html",
        str(work / "docs"),
        str(html),
    ]
    # Document the skdp that this test process imports (the checkout, for an
    # editable install), whatever the current directory.
    import skdp

    package_dir = str(Path(skdp.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_dir, env.get("PYTHONPATH")) if p
    )
    env["MPLBACKEND"] = "Agg"
    result = subprocess.run(
        command, cwd=work, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, (
        "sphinx -W failed:\n" + result.stdout[-4000:] + "\n" + result.stderr[-8000:]
    )
    return html


def test_docs_build_without_warnings(built_docs):
    assert (built_docs / "index.html").is_file()


@pytest.mark.parametrize("page", USER_GUIDE)
def test_user_guide_page(built_docs, page):
    assert (built_docs / f"{page}.html").is_file()


def test_every_public_name_has_an_api_page(built_docs):
    missing = [
        name
        for name in _expected_api_pages()
        if not (built_docs / "generated" / f"{name}.html").is_file()
    ]
    assert not missing, f"no API page for {missing}"


def test_gallery_renders_every_example_with_a_plot(built_docs):
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert examples
    for example in examples:
        page = built_docs / "auto_examples" / f"{example.stem}.html"
        assert page.is_file(), f"no gallery page for {example.name}"
        images = list(
            (built_docs / "_images").glob(f"sphx_glr_{example.stem}_[0-9]*.png")
        )
        assert images, f"{example.name} rendered no plot"
