"""The documentation builds with warnings as errors, gallery included.

This is the docs build of CI: Sphinx runs every ``examples/plot_*.py`` once
(sphinx-gallery), renders the user guide and generates an API page for every
public name. The pages must read offline: nothing they load comes from the
network, and the math is MathML written at build time. It needs the ``docs``
extra (``pip install -e ".[docs]"``) and is skipped without it.

The sources are copied to a temporary directory first, so that the generated
pages (``generated/``, ``auto_examples/``) never land in the working tree and
two concurrent runs cannot collide.
"""

import html
import importlib
import os
import re
import runpy
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Submodules whose public names the API reference documents; a name that is
# also exported by ``skdp`` itself is documented once, as ``skdp.<name>``.
SUBMODULES = [
    "skdp.accounting",
    "skdp.audit",
    "skdp.cluster",
    "skdp.decomposition",
    "skdp.linear_model",
    "skdp.mechanisms",
    "skdp.metrics",
    "skdp.model_selection",
    "skdp.naive_bayes",
    "skdp.pipeline",
    "skdp.preprocessing",
    "skdp.sensitivity",
    "skdp.stats",
    "skdp.tools",
    "skdp.tree",
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
    "trees",
    "decomposition",
    "sample_aggregate",
    "sparse_vector",
    "selection",
    "model_selection",
    "evaluating",
    "dask",
    "user_level_privacy",
    "limitations",
    "migrating_from_diffprivlib",
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


INDEX_EXAMPLE = ROOT / "docs" / "index_example.py"


def _index_example_output():
    """The output that docs/index.rst shows for its example."""
    index = (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")
    block = re.search(
        r"\.\. code-block:: text\n   :name: index-example-output\n\n((?:   .*\n)+)",
        index,
    )
    assert block, "docs/index.rst shows no output for its example"
    return [line.strip() for line in block.group(1).splitlines()]


def test_index_example_prints_what_the_index_shows(capsys):
    # the front page's code is this file (literalinclude); run it as a reader would
    runpy.run_path(str(INDEX_EXAMPLE), run_name="__main__")
    printed = capsys.readouterr().out.splitlines()
    assert [line.strip() for line in printed] == _index_example_output()


def test_index_page_shows_the_example(built_docs):
    page = (built_docs / "index.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    code = INDEX_EXAMPLE.read_text(encoding="utf-8")
    shown = code[code.index("from sklearn.datasets") :]
    for line in filter(None, map(str.strip, shown.splitlines())):
        assert line in text, line
    for line in _index_example_output():
        assert line in text


class _PageResources(HTMLParser):
    """The URLs a page loads, and how much math it has.

    Loads are scripts, stylesheets, icons, images and frames; math is counted
    twice, as the renderer's ``math`` containers and as ``<math>`` elements.
    """

    LOADING_LINKS = {"stylesheet", "icon", "preload", "modulepreload", "manifest"}

    def __init__(self):
        super().__init__()
        self.loads = []
        self.math_containers = 0
        self.math_elements = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video"):
            if attrs.get("src"):
                self.loads.append(attrs["src"])
        elif tag == "link":
            rels = set((attrs.get("rel") or "").split())
            if rels & self.LOADING_LINKS and attrs.get("href"):
                self.loads.append(attrs["href"])
        elif tag == "math":
            self.math_elements += 1
        if tag in ("span", "div") and "math" in (attrs.get("class") or "").split():
            self.math_containers += 1


def _parse(page):
    parser = _PageResources()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _pages(built_docs):
    """The built HTML pages (not the templates a theme copies to ``_static``)."""
    return [
        page
        for page in built_docs.rglob("*.html")
        if "_static" not in page.relative_to(built_docs).parts
    ]


def _is_remote(url):
    parts = urlsplit(url)
    return bool(parts.scheme and parts.scheme not in ("file", "data")) or bool(
        parts.netloc
    )


def test_pages_load_nothing_from_the_network(built_docs):
    # Read offline: every script, stylesheet, icon and image a page loads is a
    # file of the build (a CDN would leave math raw and pages unstyled).
    remote, missing = set(), set()
    for page in _pages(built_docs):
        for url in _parse(page).loads:
            if _is_remote(url):
                remote.add(f"{page.relative_to(built_docs)}: {url}")
            elif not url.startswith("data:"):
                target = (page.parent / urlsplit(url).path).resolve()
                if not target.is_file():
                    missing.add(f"{page.relative_to(built_docs)}: {url}")
    assert not remote, sorted(remote)[:10]
    assert not missing, sorted(missing)[:10]


def test_stylesheets_fetch_nothing_from_the_network(built_docs):
    # Fonts and images that a stylesheet pulls in with url(...) or @import
    # (the theme's icon fonts) are files of the build too.
    pattern = re.compile(r"""(?:url\(\s*|@import\s+)['"]?([^'")\s]+)""")
    remote, missing = set(), set()
    for css in built_docs.rglob("*.css"):
        for url in pattern.findall(css.read_text(encoding="utf-8")):
            where = f"{css.relative_to(built_docs)}: {url}"
            if _is_remote(url):
                remote.add(where)
            elif not url.startswith(("data:", "#")):
                if not (css.parent / urlsplit(url).path).resolve().is_file():
                    missing.add(where)
    assert not remote, sorted(remote)[:10]
    assert not missing, sorted(missing)[:10]


def test_pages_use_the_pydata_theme(built_docs):
    # the theme of NumPy, SciPy and scikit-learn, with its stylesheet and
    # icon fonts served from the build (checked above)
    loads = _parse(built_docs / "index.html").loads
    assert any("styles/pydata-sphinx-theme.css" in url for url in loads), loads
    fonts = list((built_docs / "_static").rglob("*.woff2"))
    assert fonts, "the theme's icon fonts are not in the build"


def test_math_is_rendered_as_mathml(built_docs):
    # Every :math: role and math directive becomes a <math> element at build
    # time (docs/_ext/mathml.py): no MathJax, no raw LaTeX left for a script.
    elements = 0
    for page in _pages(built_docs):
        parsed = _parse(page)
        assert parsed.math_containers == parsed.math_elements, page.name
        elements += parsed.math_elements
    assert elements > 100  # the user guide's formulas are all there
    clipping = (built_docs / "clipping.html").read_text(encoding="utf-8")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in (
        clipping
    )
    assert "\\operatorname" not in clipping


def _build_with_mathml(tmp_path, rst):
    """Build a one-page site with the MathML renderer (-W); the result and page."""
    pytest.importorskip("sphinx", reason="the docs extra is not installed")
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'docs' / '_ext')!r})\n"
        "extensions = ['mathml']\nhtml_math_renderer = 'mathml'\n",
        encoding="utf-8",
    )
    (source / "index.rst").write_text("Math\n====\n\n" + rst, encoding="utf-8")
    command = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html"]
    result = subprocess.run(
        [*command, str(source), str(tmp_path / "html")],
        capture_output=True,
        text=True,
        check=False,
    )
    return result, tmp_path / "html" / "index.html"


def test_math_renderer_writes_displays_rows_and_numbers(tmp_path):
    rst = (
        "Inline :math:`\\varepsilon` and :math:`\\tilde S_j`.\n\n"
        ".. math::\n   :label: two\n\n   a = b\n\n   c = d\n"
    )
    result, page = _build_with_mathml(tmp_path, rst)
    assert result.returncode == 0, result.stderr
    text = page.read_text(encoding="utf-8")
    assert "<mi>ε</mi>" in text  # inline, from the TeX command
    # a subscript beside the accented S (docutils alone puts it under S)
    assert re.search(r'<msub>\s*<mover accent="true">\s*<mi>S</mi>', text)
    assert "munderover" not in text
    assert text.count('<math xmlns="http://www.w3.org/1998/Math/MathML"') == 3
    display = text[text.index('display="block"') :]
    # the two equations of the directive are two rows of one display
    assert display.count("<mtr>") == 2
    assert '<span class="eqno">(1)' in text
    assert "\\(" not in text
    assert "\\[" not in text


def test_math_docutils_cannot_convert_fails_the_build(tmp_path):
    # The renderer's contract: a formula outside docutils' LaTeX subset is a
    # warning (an error under -W), never raw LaTeX silently left in a page.
    rst = "Fine: :math:`\\varepsilon`. Not in the subset: :math:`\\notacommand{x}`.\n"
    result, _ = _build_with_mathml(tmp_path, rst)
    assert result.returncode != 0
    assert "cannot convert this math to MathML" in result.stderr
    assert "notacommand" in result.stderr


def _public_estimator_classes():
    # as tests/test_common.py finds them
    from sklearn.base import BaseEstimator

    import skdp

    objects = [getattr(skdp, name) for name in skdp.__all__]
    return [
        obj
        for obj in objects
        if isinstance(obj, type) and issubclass(obj, BaseEstimator)
    ]


def test_estimator_doc_links_open_pages_of_the_build(built_docs, monkeypatch):
    # The "?" of each public estimator's HTML diagram, with SKDP_DOCS_URL
    # pointed at this build, opens a page that the build has. The link does
    # not depend on constructor arguments, so no instance is configured.
    monkeypatch.setenv("SKDP_DOCS_URL", built_docs.as_uri())
    classes = _public_estimator_classes()
    assert classes
    for cls in classes:
        link = object.__new__(cls)._get_doc_link()
        assert link.startswith(built_docs.as_uri()), link
        assert Path(url2pathname(urlsplit(link).path)).is_file(), link


# -- In a real browser ---------------------------------------------------------
# Rendering is checked in headless Chromium, opened as files (file://), the way
# a reader opens a local build. Skipped without playwright and a Chromium:
# neither is a test dependency (Chromium comes from the system's packages).

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed"
    )
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=BROWSER_ARGS
        )
        yield chromium
        chromium.close()


def _tab(browser, width=1280):
    """A new page and the list its console errors and failed loads go to."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems = []
    page.on(
        "console",
        lambda m: problems.append(m.text) if m.type in ("error", "warning") else None,
    )
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    return page, problems


def _go(page, url):
    page.goto(url)
    page.wait_for_timeout(200)


def _open(browser, url, width=1280):
    """The page at ``url`` and the console errors and failed loads it logged."""
    page, problems = _tab(browser, width)
    _go(page, url)
    return page, problems


# For every display: how far its math starts left of the box (a negative
# offset is cut off), and whether the box scrolls when the math is wider.
DISPLAY_GEOMETRY = """() => [...document.querySelectorAll('div.math')].map(d => {
    const m = d.querySelector('math');
    const left = m.getBoundingClientRect().left - d.getBoundingClientRect().left;
    const wide = m.getBoundingClientRect().width > d.clientWidth + 1;
    const scrolls = d.scrollWidth > d.clientWidth
        && ['auto', 'scroll'].includes(getComputedStyle(d).overflowX);
    return {left: left, wide: wide, scrolls: scrolls};
})"""


def _has_displays(path):
    return '<div class="math' in path.read_text(encoding="utf-8")


# Every page at a desktop width; at a phone's width only the pages with math
# displays, the one thing whose fit depends on the width (console errors and
# failed loads do not, and the pages without displays took 18 s of CI twice).
@pytest.mark.parametrize("width", [1280, 390])
def test_pages_render_without_console_errors_and_displays_fit(
    built_docs, browser, width
):
    pages = sorted(built_docs.glob("*.html"))
    assert len(pages) >= 10
    if width < 1280:
        pages = [path for path in pages if _has_displays(path)]
        assert len(pages) >= 5
    # One tab visits every page (a new tab per page took 3x as long).
    page, problems = _tab(browser, width)
    try:
        for path in pages:
            problems.clear()
            _go(page, path.as_uri())
            displays = page.evaluate(DISPLAY_GEOMETRY)
            assert problems == [], (path.name, problems)
            for display in displays:
                assert display["left"] >= -1, (path.name, display)
                assert display["scrolls"] or not display["wide"], (path.name, display)
    finally:
        page.close()


def test_search_over_files_fetches_nothing(built_docs, browser):
    page, problems = _open(browser, (built_docs / "search.html").as_uri() + "?q=mean")
    page.wait_for_selector("#search-results li", timeout=10_000)
    results = page.inner_text("#search-results")
    page.close()
    assert "Private means" in results
    assert problems == [], problems
