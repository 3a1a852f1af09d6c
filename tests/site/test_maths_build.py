"""Formulas typeset when the book is built (tools/sphinxext/coursebook_maths.py): what MathJax
would have drawn in the browser, its hidden MathML for screen readers, no MathJax left on the
page, and a build that fails on TeX it cannot read or leaves untypeset."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "sphinxext"))
import coursebook_maths as maths  # noqa: E402

NODE_MODULES = ROOT / "node_modules"
PAGE = """<html><head>
<script>window.MathJax = {"loader": {}}</script>
<script defer="defer" src="_static/mathjax/startup.js?v=1"></script>
</head><body>
<p>Weights <span class="math notranslate nohighlight">\\(a_j \\geq 0\\)</span> sum to one:</p>
<div class="math notranslate nohighlight" id="equation-x">
\\[\\sum_j a_j = 1 \\quad\\text{and}\\quad a &lt; 2\\]</div>
<p class="tc-q-text">With <span class="tc-math" data-tex="\\beta = 1"><i>β</i> = 1</span>, what?</p>
<button class="tc-option"><span class="tc-math" data-tex="x_3" role="img" aria-label="x3">
x<sub>3</sub></span></button>
<pre>print("\\\\(not maths\\\\)")</pre>
</body></html>"""


def test_every_formula_of_a_page_is_drawn_with_its_mathml_and_mathjax_leaves():
    wanted = sorted(maths.formulas(PAGE))
    assert wanted == [("\\beta = 1", False), ("\\sum_j a_j = 1 \\quad\\text{and}\\quad a < 2",
                                              True), ("a_j \\geq 0", False), ("x_3", False)]
    css, drawn = maths.typeset(wanted, NODE_MODULES)
    out = maths.rewrite(PAGE, drawn, "_static/tc-maths.css")
    assert out.count("<mjx-container") == 4 and out.count("<mjx-assistive-mml") == 4
    # an option's formula keeps the name the package gave it
    assert '<span class="tc-math" data-tex="x_3" role="img" aria-label="x3" data-tc-typeset="1">' \
        '<mjx-container' in out
    assert maths.rewrite(out, drawn, "_static/tc-maths.css").count("<mjx-container") == 4
    assert 'display="true"' in out  # the display formula
    assert "window.MathJax" not in out and "startup.js" not in out
    assert '<link rel="stylesheet" href="_static/tc-maths.css" />' in out
    assert 'data-tc-typeset="1"' in out and "<i>β</i>" not in out  # the quiz's formula
    assert '\\\\(not maths\\\\)' in out  # code stays code
    assert maths._leftover(out) is None
    assert "@font-face" in css and "mathjax/output/chtml/fonts/woff-v2" in css


def test_tex_mathjax_cannot_read_or_tex_left_on_a_page_fails_with_its_text():
    with pytest.raises(Exception, match=r"cannot typeset .*\\\\frac\{1\}\{"):
        maths.typeset([("\\frac{1}{", False)], NODE_MODULES)
    assert "\\(x" in maths._leftover("<p>a stray \\(x</p>")
