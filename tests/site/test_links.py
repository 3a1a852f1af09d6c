"""Every link of the built site that stays inside it lands somewhere: the file exists and,
with a #fragment, the page has that anchor (quiz explanations, diagram blocks, the prose's
cross-references, the switcher and the glossary's chapter links)."""

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("id", "name"):
            if a.get(name):
                self.ids.add(a[name])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])


def parse(page: Path) -> _Links:
    links = _Links()
    links.feed(page.read_text(encoding="utf-8"))
    return links


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_every_internal_link_lands_on_an_existing_anchor(site, lang):
    pages = {p: parse(p) for p in sorted((site / lang).glob("*.html"))}
    broken = []
    for page, links in pages.items():
        for href in links.hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.name}: {href} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.name}: {href} (no such anchor)")
    assert broken == [], f"{lang}: {len(broken)} broken links: {broken[:10]}"
