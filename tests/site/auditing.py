"""axe-core (npm's ``axe-core``, which ``npm ci`` installs) run in a page that a browser test
has open: the WCAG 2.0, 2.1 and 2.2 rules of levels A and AA, on the page's whole DOM as it
stands. The script is added to the page for the audit only; the site never ships it."""

from __future__ import annotations

from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
WCAG_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
# Only the violations come back (axe then keeps one node of each passing rule, not all).
RUN = """tags => axe.run(document, {runOnly: {type: "tag", values: tags},
                                  resultTypes: ["violations"]})
  .then(r => r.violations.flatMap(v => v.nodes.map(
    n => [v.id, v.impact, n.target.join(" "), n.html])))"""
SNIPPET = 160  # characters of an element's HTML in a failure's message
# bertviz's views and the language model start when they come near the screen, and the
# theme makes a scrolling output focusable 300 ms after the page's last change: the audit
# starts them all ("tc:start-all", as the PDF builder does), waits for every view to be drawn
# and every language model to show its state, then for 500 ms without a change (two minutes
# at most: one that never draws is its own tests' failure, not the audit's).
SETTLED = """() => new Promise(resolve => {
  document.dispatchEvent(new Event("tc:start-all"));
  const views = [...document.querySelectorAll(".tc-bertviz")];
  const models = [...document.querySelectorAll(".tc-explorer[data-kind='lm']")];
  if (!views.length && !models.length) return resolve(0);
  const until = Date.now() + 120000;
  let timer = null;
  const observer = new MutationObserver(wait);
  function wait() {
    clearTimeout(timer);
    timer = setTimeout(check, Date.now() < until ? 500 : 0);
  }
  function drawn() {
    return views.every(v => v.querySelector("svg"))
      && models.every(m => m.hasAttribute("data-state"));
  }
  function check() {
    if (!drawn() && Date.now() < until) return wait();
    observer.disconnect();
    resolve(views.length);
  }
  observer.observe(document.body, {subtree: true, childList: true, attributes: true});
  wait();
})"""


# A chapter draws a section only when it comes near the screen (content-visibility: auto,
# course.css), and axe misjudges the page around what is not drawn: a text too pale to read,
# at the end of chapter 7's quiz, came back as "background overlapped by another element"
# (incomplete, not a violation). The audit draws every section first, as they are drawn for
# a reader who scrolls to them.
DRAW_ALL = "* { content-visibility: visible !important; }"


def axe_violations(page) -> list[str]:
    """Every node that breaks a WCAG A or AA rule: 'rule (impact) at selector: <html...>'."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` at the repository root (make test does)")
    page.add_style_tag(content=DRAW_ALL)
    page.evaluate(SETTLED)
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(RUN, WCAG_A_AA)
    return [f"{rule} ({impact}) at {target}: {' '.join(html.split())[:SNIPPET]}"
            for rule, impact, target, html in found]


def assert_accessible(page, where: str) -> None:
    """Fails with every violation of the page, each naming its rule and element."""
    found = axe_violations(page)
    assert not found, (f"{where}: {len(found)} element(s) break WCAG A/AA rules (axe-core):\n  "
                       + "\n  ".join(found))
