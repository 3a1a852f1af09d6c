"""Quiz progress that stays, in Chromium with the network cut: an answer survives a reload,
the home page shows each chapter's state and score, its button clears everything, and a
corrupted entry in the reader's storage is ignored and removed, never thrown."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("playwright.sync_api", reason="requirements.txt installs it")

KEY = "tc-course-progress"
CHAPTER = "05_masks"


def stored(page):
    return page.evaluate("k => localStorage.getItem(k)", KEY)


def mounted(page, selector):
    page.wait_for_selector(f"{selector}[data-tc-mounted]", state="attached", timeout=20000)


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_an_answer_survives_a_reload_and_the_home_page_shows_it(visit, lang):
    v = visit(f"{lang}/{CHAPTER}.html")
    page = v.page
    mounted(page, ".tc-quiz")
    question = page.locator(".tc-question[data-kind='single']").first
    index = int(question.get_attribute("data-index"))
    question.locator(".tc-option").nth(1).click()
    verdict = question.get_attribute("data-verdict")
    assert verdict in ("right", "wrong")
    entry = json.loads(stored(page))["chapters"][CHAPTER]
    assert entry["answers"][str(index)] == {"answer": [1], "verdict": verdict}
    page.reload(wait_until="load")
    mounted(page, ".tc-quiz")
    again = page.locator(f".tc-question[data-index='{index}']")
    assert again.get_attribute("data-verdict") == verdict
    assert again.locator(".tc-option").nth(1).get_attribute("aria-pressed") == "true"
    score = page.locator(".tc-quiz").get_attribute("data-score")
    assert score == ("1" if verdict == "right" else "0")
    # the home page, in the same browser
    page.goto(page.url.replace(f"{CHAPTER}.html", "index.html"), wait_until="load")
    mounted(page, ".tc-progress")
    row = page.locator(f".tc-progress [data-chapter='{CHAPTER}']")
    assert row.get_attribute("data-state") == "partial"
    assert page.locator(".tc-progress [data-state='none']").count() == 9
    status = row.locator(".tc-progress-status").inner_text()
    assert ("1 /" if verdict == "right" else "0 /") in status
    reset = page.locator(".tc-progress-reset")
    assert reset.is_visible()
    reset.press("Enter")
    assert stored(page) is None
    assert row.get_attribute("data-state") == "none"
    assert page.locator(".tc-progress-said").inner_text().strip()
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)


def test_a_finished_chapter_is_done_with_its_score(visit):
    v = visit("en/index.html")
    page = v.page
    entry = {"version": 1, "chapters": {"01_attention": {"total": 2, "answers": {
        "0": {"answer": [0], "verdict": "right"}, "1": {"answer": "0.5", "verdict": "wrong"}}}}}
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [KEY, json.dumps(entry)])
    page.reload(wait_until="load")
    mounted(page, ".tc-progress")
    row = page.locator(".tc-progress [data-chapter='01_attention']")
    assert row.get_attribute("data-state") == "done"
    assert "1 / 2" in row.inner_text()
    assert v.real_errors == []


@pytest.mark.parametrize("garbage", [
    "{not json", "[]", '{"version": 1, "chapters": []}',
    '{"version": 1, "chapters": {"05_masks": {"total": "x", "answers": {}}}}',
    '{"version": 1, "chapters": {"05_masks": {"total": 8, "answers": {"0": {"answer": [1], '
    '"verdict": "maybe"}}}}}',
])
def test_a_corrupted_entry_is_ignored_and_removed(visit, garbage):
    v = visit(f"en/{CHAPTER}.html")
    page = v.page
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [KEY, garbage])
    page.reload(wait_until="load")
    mounted(page, ".tc-quiz")
    assert page.locator(".tc-question[data-verdict]").count() == 0
    assert stored(page) is None
    page.goto(page.url.replace(f"{CHAPTER}.html", "index.html"), wait_until="load")
    mounted(page, ".tc-progress")
    assert page.locator(".tc-progress [data-state='none']").count() == 10
    assert v.real_errors == [], v.real_errors
