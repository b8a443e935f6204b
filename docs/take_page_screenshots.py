"""Screenshots of the calculator page at a desktop's 1280 × 800 and a phone's 390 × 844 (issue 42).

    .venv/bin/python docs/take_page_screenshots.py            # writes docs/page-1280x800.png, docs/page-390x844.png

Each is the viewport at exactly that size in CSS pixels (device scale 1), after the page's own default question
(the form as it opens, which sends what the command line defaults to) is answered, scrolled to the answer
(its summary, chart and ranked table), the rejected devices opened. ``tests/api/test_api_browser_page_sizes.py`` checks that the files
exist at those sizes and that at each size no table is wider than its box. Needs Debian's ``chromium`` and
``chromium-driver`` and selenium (``pip install -e '.[dev]'``); Pillow, where installed, reduces each picture
to 64 colours so that the kept ones stay small.
"""
from __future__ import annotations

import shutil
import socket
import sys
import threading
import time
from pathlib import Path

SIZES = ((1280, 800), (390, 844))
"""The viewports shot: a desktop screen and a phone (iPhone 12 to 15) in CSS pixels."""
DOCS = Path(__file__).resolve().parent


def shot_path(folder: Path, width: int, height: int) -> Path:
    """Where the screenshot of one viewport goes: ``page-{width}x{height}.png``."""
    return folder / f"page-{width}x{height}.png"


def set_viewport(browser, width: int, height: int) -> None:
    """The page's viewport at exactly ``width`` × ``height`` CSS pixels at scale 1 (a phone's is a mobile one)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def answer_the_default_question(browser, base_url: str, timeout: float = 60) -> None:
    """The calculator opened and its default question answered, the rejected devices opened."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(base_url + "/")
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, timeout).until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#ranked tbody tr")))
    browser.execute_script("document.getElementById('rejected-details').open = true;"
                           "document.getElementById('result').scrollIntoView({block: 'start'});")


def take(browser, base_url: str, folder: Path) -> list[Path]:
    """One screenshot per size of :data:`SIZES`, written to ``folder``.

    Parameters
    ----------
    browser : selenium.webdriver.Chrome
        A headless Chromium.
    base_url : str
        Where the service answers, e.g. ``http://127.0.0.1:8000``.
    folder : Path
        Where the pictures go.

    Returns
    -------
    list[Path]
        The pictures, in the order of :data:`SIZES`.
    """
    written = []
    for width, height in SIZES:
        set_viewport(browser, width, height)
        answer_the_default_question(browser, base_url)
        path = shot_path(folder, width, height)
        assert browser.save_screenshot(str(path)), path
        _small(path)
        written.append(path)
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return written


def _small(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as shot:
        small = shot.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def _serve() -> tuple[str, object]:
    import uvicorn

    sys.path.insert(0, str(DOCS.parent))
    from api.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise SystemExit("uvicorn did not start")
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def _chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)


def main() -> None:
    """Serve the app, shoot the page at each size into docs/, print the files written."""
    base_url, server = _serve()
    browser = _chromium()
    try:
        for path in take(browser, base_url, DOCS):
            print(path.relative_to(DOCS.parent))
    finally:
        browser.quit()
        server.should_exit = True  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
