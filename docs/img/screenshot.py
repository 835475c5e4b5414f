"""Take the README's screenshot: a built site's page in headless Chromium (Playwright), 1280 × 800.

    .venv/bin/python docs/img/screenshot.py SITE [PAGE] [OUT]   # defaults: cr/601.html, docs/img/site-601.png
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright


def main(site: str, page: str = "cr/601.html", out: str = "docs/img/site-601.png") -> None:
    url = (Path(site).resolve() / page).as_uri()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("KB_CHROMIUM", "/usr/bin/chromium"))
        tab = browser.new_page(viewport={"width": 1280, "height": 800}, device_scale_factor=1)
        tab.goto(url)
        tab.wait_for_load_state("networkidle")
        tab.screenshot(path=out)
        browser.close()
    print(f"{out}: {url}")


if __name__ == "__main__":
    main(*sys.argv[1:])
