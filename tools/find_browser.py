#!/usr/bin/env python3
"""Find the Chromium the browser tests drive, or install Playwright's own.

In this order: the ``TC_CHROMIUM`` environment variable, Debian's ``chromium`` on the PATH,
then Playwright's bundled Chromium (``python -m playwright install chromium``, which needs
the internet once). Each candidate must start headless and render a page. Prints the one
found; exits 1 with what to install when there is none.

Usage: python tools/find_browser.py [--install]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        "--disable-dev-shm-usage"]
HELP = """No browser for the tests. Install one of:
  - Debian/Ubuntu's Chromium:   sudo apt-get install chromium
  - Playwright's own Chromium:  .venv/bin/python -m playwright install --with-deps chromium
    (needs the internet once)
or point TC_CHROMIUM at a Chromium or Chrome executable."""


def candidates() -> list[str | None]:
    """Executables to try, in order; None stands for Playwright's bundled Chromium."""
    found: list[str | None] = []
    if os.environ.get("TC_CHROMIUM"):
        found.append(os.environ["TC_CHROMIUM"])
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            found.append(path)
    found.append(None)
    return found


def works(executable: str | None) -> bool:
    """Whether this browser starts headless and renders a page."""
    from playwright.sync_api import Error, sync_playwright

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=ARGS)
            page = browser.new_page()
            page.set_content("<p id='ok'>ok</p>")
            ok = page.locator("#ok").inner_text() == "ok"
            browser.close()
            return ok
    except Error:
        return False


def main(argv: list[str]) -> int:
    for executable in candidates():
        if works(executable):
            print(f"browser: {executable or 'Playwright bundled Chromium'}")
            return 0
    if "--install" in argv:
        print("installing Playwright's Chromium (python -m playwright install chromium)")
        subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], check=False)
        if works(None):
            print("browser: Playwright bundled Chromium")
            return 0
    print(HELP, file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
