"""Render the documentation's math as MathML when Sphinx writes the HTML.

Sphinx's default, ``sphinx.ext.mathjax``, leaves the LaTeX source in the
page and loads MathJax from a CDN when the page is viewed: offline, the
reader sees raw LaTeX. This extension converts every ``:math:`` role and
``.. math::`` directive to MathML at build time with docutils' own LaTeX to
MathML converter (the one behind docutils' ``--math-output=MathML``), so the
pages need no script, no font download and no network. Every current
browser renders MathML Core.

One deviation from docutils: it sets the subscript of an accented symbol
(``\\tilde S_j``) under the symbol, like the limit of a sum; here it goes
beside the accented symbol, as in TeX.

docutils understands a subset of LaTeX (see "LaTeX syntax for mathematics"
in the docutils documentation). A formula it cannot convert is a build
warning, and the docs build treats warnings as errors, so an unsupported
command is found when it is written, not by a reader.

Enable it with ``extensions = ["mathml"]`` (``docs/_ext`` on ``sys.path``);
it registers itself as the HTML math renderer and adds ``mathml.css``, which
must be on ``html_static_path``.
"""

from docutils import nodes
from docutils.utils.math import MathError, latex2mathml, toplevel_code, unichar2tex
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)


_ACCENTS = frozenset(latex2mathml.accents.values())


def _is_accent_read_as_limit(element):
    """Whether ``element`` is docutils' reading of ``\\tilde S_j``.

    docutils turns a subscript after an accent into a limit: ``j`` under the
    ``S`` and the accent over it (``munderover``), as for ``\\sum``.
    """
    if not isinstance(element, latex2mathml.munderover) or len(element) != 3:
        return False
    accent = element[2]
    return (
        isinstance(accent, latex2mathml.mo)
        and accent.text in _ACCENTS
        and accent.get("stretchy") == "false"
    )


def _fix_accent_subscripts(tree):
    """Set the subscript of an accented symbol beside it, as TeX does."""
    for parent in list(tree.iter()):
        for index, child in enumerate(parent):
            if _is_accent_read_as_limit(child):
                base, subscript, accent = child
                accented = latex2mathml.mover(base, accent, accent=True)
                parent[index] = latex2mathml.msub(accented, subscript)


def _tex_to_mathml(tex, *, as_block):
    """``docutils.utils.math.latex2mathml.tex2mathml``, with accents fixed."""
    tree = latex2mathml.math(xmlns="http://www.w3.org/1998/Math/MathML")
    node = tree
    if as_block:
        tree.set("display", "block")
        if len(toplevel_code(tex).split(r"\\")) > 1:
            # rows separated by \\ are set like an align* environment
            node = latex2mathml.mtd()
            rows = latex2mathml.mtable(
                latex2mathml.mtr(node), CLASS="ams-align", displaystyle=True
            )
            tree.append(rows)
    latex2mathml.parse_latex_math(node, tex)
    _fix_accent_subscripts(tree)
    tree.indent_xml()
    return tree.toxml()


def _to_mathml(translator, node, tex, *, as_block):
    """MathML markup for ``tex``; a warning and the escaped source if it fails."""
    # Unicode symbols typed in the source (e.g. ε) become TeX commands first,
    # as in docutils' own HTML writer.
    tex = tex.translate(unichar2tex.uni2tex_table)
    try:
        return _tex_to_mathml(tex, as_block=as_block)
    except MathError as err:
        logger.warning(
            "cannot convert this math to MathML: %s", err, location=node, type="math"
        )
        return f"<code>{translator.encode(tex)}</code>"


def visit_math(translator, node):
    """Write an inline ``:math:`` node as an inline ``<math>`` element."""
    translator.body.append(translator.starttag(node, "span", "", CLASS="math"))
    translator.body.append(_to_mathml(translator, node, node.astext(), as_block=False))
    translator.body.append("</span>")
    raise nodes.SkipNode


def _display_source(node):
    """The LaTeX of a ``.. math::`` block as one display.

    Equations separated by blank lines are stacked like ``\\\\``-separated
    rows (docutils renders rows as an ``align*`` environment).
    """
    parts = [part for part in node.astext().split("\n\n") if part.strip()]
    return r" \\ ".join(parts)


def visit_math_block(translator, node):
    """Write a ``.. math::`` node as a ``<math display="block">`` element."""
    translator.body.append(translator.starttag(node, "div", CLASS="math"))
    if node["number"]:
        number = get_node_equation_number(translator, node)
        translator.body.append(f'<span class="eqno">({number})')
        translator.add_permalink_ref(node, _("Link to this equation"))
        translator.body.append("</span>")
    translator.body.append(
        _to_mathml(translator, node, _display_source(node), as_block=True)
    )
    translator.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer(
        "mathml",
        inline_renderers=(visit_math, None),
        block_renderers=(visit_math_block, None),
    )
    app.add_css_file("mathml.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
