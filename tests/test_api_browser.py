"""The web calculator in headless Chromium: fill the form, submit, read the ranked table.

Needs Debian's `chromium` and `chromium-driver` (`make test` installs them with apt-get where
it can); skipped, saying why, where they are missing. Set SIZER_SCREENSHOT=path.png to keep a
screenshot of the page with its answer.
"""
from __future__ import annotations

import os
import shutil
import socket
import threading
import time

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip("headless Chromium is not available: install Debian's chromium and chromium-driver "
                "(`make test` does so with apt-get where apt is usable)", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ready  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def base_url():
    import uvicorn

    from api.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            pytest.fail("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--window-size=1280,2600"):
        options.add_argument(flag)
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    except Exception as error:  # a broken install is a failure, not a skip: the tools are there
        pytest.fail(f"chromium did not start: {error}")
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _submit_and_read(browser) -> list[list[str]]:
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#ranked tbody tr")))
    return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in browser.find_elements(By.CSS_SELECTOR, "#ranked tbody tr")]


def test_fill_the_form_submit_and_read_the_ranked_table(browser, base_url):
    browser.get(base_url + "/")
    Select(browser.find_element(By.ID, "preset")).select_by_value("7b")
    deadline = browser.find_element(By.ID, "deadline")
    deadline.clear()
    deadline.send_keys("60 d")
    Select(browser.find_element(By.ID, "objective")).select_by_value("pareto")
    rows = _submit_and_read(browser)
    assert rows and rows[0][0] == "1" and rows[0][1]
    assert all(len(row) == 8 for row in rows)
    assert browser.find_elements(By.CSS_SELECTOR, "#chart svg circle")
    assert browser.find_elements(By.CSS_SELECTOR, "#chart svg .pareto")
    assert browser.find_elements(By.CSS_SELECTOR, "#rejected tbody tr")
    if os.environ.get("SIZER_SCREENSHOT"):
        browser.save_screenshot(os.environ["SIZER_SCREENSHOT"])


def test_a_bad_value_is_shown_next_to_its_field(browser, base_url):
    browser.get(base_url + "/")
    budget = browser.find_element(By.ID, "budget")
    budget.send_keys("5 GHz")
    browser.find_element(By.ID, "submit").click()
    errors = WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "errors")))
    assert "budget" in errors.text
    assert budget.get_attribute("aria-invalid") == "true"


def test_phone_sized_screen_has_no_sideways_scrolling(browser, base_url):
    browser.set_window_size(390, 844)
    try:
        browser.get(base_url + "/")
        rows = _submit_and_read(browser)
        assert rows
        width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
    finally:
        browser.set_window_size(1280, 2600)


def test_catalog_page_lists_and_filters(browser, base_url):
    browser.get(base_url + "/catalog")
    WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#devices tbody tr")))
    every = len(browser.find_elements(By.CSS_SELECTOR, "#devices tbody tr"))
    Select(browser.find_element(By.ID, "kind")).select_by_value("cpu")
    cpus = browser.find_elements(By.CSS_SELECTOR, "#devices tbody tr")
    assert 0 < len(cpus) < every
    assert all(row.find_elements(By.TAG_NAME, "td")[1].text == "cpu" for row in cpus)
    cpus[0].click()
    WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#detail-table tbody tr")))
