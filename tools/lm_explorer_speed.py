#!/usr/bin/env python3
"""Characters per second of the language-model explorer in headless Chromium, on this machine.

Opens a page that holds a ``widgets.lm_explorer`` (a built chapter 10 page, or one written by
``LMExplorer.save``) with the network cut, and measures, three times each:

* the page's model alone (forward pass with the KV cache, sampling), 300 characters after
  the page's prompt;
* the same without the cache (every step recomputes every position), as the hidden switch
  ``data-cache="off"`` does;
* the "write a line" button, drawing included.

A measurement, never a test: it depends on the machine and its load.

Usage: python tools/lm_explorer_speed.py path/to/page.html
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "site"))

from browsing import Visit, launch, serve
from lm_pages import WEIGHTS_JS

MODEL = """e => {
  const W = (""" + WEIGHTS_JS + """)(e), L = window.TcLm;
  const m = L.Model(W), specials = Object.values(W.specials), allowed = [];
  for (let i = 0; i < W.chars.length; i++) if (!specials.includes(i)) allowed.push(i);
  const text = JSON.parse(e.getAttribute('data-state')).text;
  const prompt = Array.from(text).map(c => Math.max(W.chars.indexOf(c), W.unk_id));
  function run(cached, n) {
    const cache = new L.Cache(m), ids = prompt.slice();
    let r = null, state = 0;
    for (let p = 0; p < ids.length; p++) r = L.forward(m, cache, ids[p], p, p === ids.length - 1);
    n = Math.min(n, m.maxLen - ids.length);
    const start = performance.now();
    for (let s = 0; s < n; s++) {
      const d = L.distribution(r.logits, allowed, 0.8, null, 1), u = L.mulberry(state);
      state = u[1];
      ids.push(L.draw(d.probs, u[0]));
      if (cached) {
        r = L.forward(m, cache, ids[ids.length - 1], ids.length - 1, true);
      } else {
        const fresh = new L.Cache(m);
        for (let p = 0; p < ids.length; p++) {
          r = L.forward(m, fresh, ids[p], p, p === ids.length - 1);
        }
      }
    }
    return n / ((performance.now() - start) / 1000);
  }
  const out = {cached: [], recomputed: []};
  for (let k = 0; k < 3; k++) {
    out.cached.push(run(true, 300));
    out.recomputed.push(run(false, 300));
  }
  return out;
}"""

BUTTON = """e => new Promise(done => {
  const start = performance.now();
  e.querySelector('button.tc-write').click();
  const poll = () => e.hasAttribute('data-busy') ? setTimeout(poll, 2) :
    done(JSON.parse(e.getAttribute('data-state')).steps / ((performance.now() - start) / 1000));
  setTimeout(poll, 2);
})"""


def main(page: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, serve(page.parent) as url:
        browser = launch(playwright)
        visit = Visit(browser, url, page.name)
        root = visit.page.locator(".tc-explorer[data-kind='lm']").first
        visit.page.wait_for_function("e => e.hasAttribute('data-state')",
                                     arg=root.element_handle(), timeout=60000)
        model = root.evaluate(MODEL)
        button = []
        for seed in (1, 2, 3):
            root.locator("input.tc-seed").fill(str(seed))
            root.locator("input.tc-seed").press("Enter")
            button.append(root.evaluate(BUTTON))
        weights = root.evaluate(
            f"e => new TextEncoder().encode(JSON.stringify(({WEIGHTS_JS})(e))).length")
        payload = root.evaluate(
            "e => Array.from(e.querySelectorAll(':scope > script, :scope > style'))"
            ".reduce((n, s) => n + new TextEncoder().encode(s.textContent).length, 0)")
        print(json.dumps({
            "model_with_cache_chars_per_s": [round(x) for x in model["cached"]],
            "model_without_cache_chars_per_s": [round(x, 1) for x in model["recomputed"]],
            "write_button_chars_per_s": [round(x) for x in button],
            "weights_json_kB": round(weights / 1000, 1), "payload_kB": round(payload / 1000, 1),
            "page_errors": visit.errors, "blocked_requests": visit.blocked}, indent=1))
        browser.close()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    main(Path(sys.argv[1]).resolve())
