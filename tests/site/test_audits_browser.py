"""Lighthouse (npm's ``lighthouse``, pinned) on one chapter page per language of the built
site, served from 127.0.0.1 with every other host unresolvable, in Lighthouse's default
mobile profile: accessibility, best practices and SEO must score 100. The performance score,
LCP and TBT depend on how busy the machine is: tools/lighthouse_report.py prints them for the
developer's note and nothing asserts them. (axe-core's audit of every page and deck runs in
the visits of test_browser.py and test_decks.py.)"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import lighthouse_report  # noqa: E402

# One page per language; chapter 9 is the largest (two bertviz views, d3, jQuery, require).
SAMPLE = ["en/04_multi_head_attention.html", "fr/02_self_attention.html",
          "it/09_tokens_and_bert.html"]
# The categories asserted (performance would only add time: it is never asserted).
ASSERTED = ["accessibility", "best-practices", "seo"]


@pytest.fixture(scope="module")
def reports(server):
    """The three pages' reports, from one Node process and one Chromium."""
    found = lighthouse_report.run([f"{server}/{page}" for page in SAMPLE], ASSERTED)
    return dict(zip(SAMPLE, found, strict=True))


@pytest.mark.parametrize("page", SAMPLE)
def test_lighthouse_scores_100_for_accessibility_best_practices_and_seo(reports, server, page):
    report = reports[page]
    outside = [url for url in lighthouse_report.requests(report)
               if not url.startswith((server + "/", "data:", "blob:"))]
    assert outside == [], f"{page} asked the internet for {outside}"
    scores = lighthouse_report.scores(report)
    lost = [line for name in ASSERTED for line in lighthouse_report.failures(report, name)]
    assert scores == dict.fromkeys(ASSERTED, 100), f"{page}: {scores}; what lost points: {lost}"
