"""The web calculator in headless Chromium: fill the form, submit, read the ranked table.

Needs Debian's `chromium` and `chromium-driver` (`make test` installs them with apt-get where
it can); skipped, saying why, where they are missing. The page is tried at a desktop width
(1280 px) and a phone width (390 px); each answer is saved as a screenshot, in a temporary
folder or in SIZER_SCREENSHOTS (`SIZER_SCREENSHOTS=docs/screenshots` refreshes the ones in the
repository).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
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
                 "--window-size=1280,900"):
        options.add_argument(flag)
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    except Exception as error:  # a broken install is a failure, not a skip: the tools are there
        pytest.fail(f"chromium did not start: {error}")
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


DESKTOP, PHONE = (1280, 900), (390, 844)


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("SIZER_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _screenshot(browser, path: Path) -> None:
    """The whole page: the window made as tall as the page for the shot, then put back."""
    width, height = browser.get_window_size()["width"], browser.get_window_size()["height"]
    full = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(width, min(full + 120, 16000))
    try:
        assert browser.save_screenshot(str(path)), path
    finally:
        browser.set_window_size(width, height)


def _fill(browser, **fields: str) -> None:
    for name, text in fields.items():
        box = browser.find_element(By.ID, name)
        box.clear()
        box.send_keys(text)


def _submit_and_read(browser) -> list[list[str]]:
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.CSS_SELECTOR, "#ranked tbody tr")))
    return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in browser.find_elements(By.CSS_SELECTOR, "#ranked tbody tr")]


def test_fill_the_form_submit_and_read_the_ranked_table(browser, base_url, shots):
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    Select(browser.find_element(By.ID, "preset")).select_by_value("7b")
    _fill(browser, deadline="60 d")
    Select(browser.find_element(By.ID, "objective")).select_by_value("pareto")
    rows = _submit_and_read(browser)
    assert rows and rows[0][0] == "1" and rows[0][1]
    assert all(len(row) == 8 for row in rows)
    assert browser.find_elements(By.CSS_SELECTOR, "#chart svg circle")
    assert browser.find_elements(By.CSS_SELECTOR, "#chart svg .pareto")
    assert browser.find_elements(By.CSS_SELECTOR, "#rejected tbody tr")
    _screenshot(browser, shots / "calculator-desktop.png")


def test_summary_names_the_workload(browser, base_url):
    # issue 12 item 13: it said "Workload: given".
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    Select(browser.find_element(By.ID, "preset")).select_by_value("7b")
    _submit_and_read(browser)
    summary = browser.find_element(By.ID, "summary").text
    assert "Workload: 7e9-parameter transformer trained on 2e10 tokens, bf16, adamw." in summary, summary
    assert "given" not in summary


def test_desktop_shows_every_column_of_the_ranked_table_without_scrolling(browser, base_url):
    # issue 12 item 13: at 1280 px the bound and Pareto columns hid behind a horizontal scroll.
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    Select(browser.find_element(By.ID, "preset")).select_by_value("7b")
    Select(browser.find_element(By.ID, "objective")).select_by_value("pareto")
    _submit_and_read(browser)
    box = browser.execute_script("""
        const frame = document.querySelector('#ranked').parentElement, right = frame.getBoundingClientRect().right;
        return {scroll: frame.scrollWidth, shown: frame.clientWidth, right,
                heads: [...document.querySelectorAll('#ranked thead th')].map(th => [th.textContent, th.getBoundingClientRect().right])};""")
    assert box["scroll"] <= box["shown"], box
    heads = dict(box["heads"])
    assert heads["bound"] <= box["right"] and heads["Pareto"] <= box["right"], box


def test_money_as_people_write_it_is_accepted(browser, base_url):
    # issue 12 item 13: the form refused "$5000" and "5k USD"; the one parser (sizer.units) reads them.
    browser.set_window_size(*DESKTOP)
    for budget in ("$5000000", "5000k USD"):
        browser.get(base_url + "/")
        _fill(browser, budget=budget)
        assert _submit_and_read(browser), budget
        assert not browser.find_element(By.ID, "errors").is_displayed()


def test_a_count_written_7b_gets_the_cores_answer(browser, base_url):
    # The page sends "7B" as typed; sizer.units.parse_count, the one parser, decides. Counts such
    # as "7B" are being added to it on another branch: until then this checks the page shows the
    # core's refusal beside Parameters, afterwards that it shows the ranking.
    from sizer.errors import InputError
    from sizer.units import parse_count

    try:
        accepted = parse_count("params", "7B") == 7e9
    except InputError:
        accepted = False
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    _fill(browser, params="7B")
    if accepted:
        assert _submit_and_read(browser)
    else:
        browser.find_element(By.ID, "submit").click()
        errors = WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "errors")))
        assert "Parameters: got '7B'" in errors.text
        assert browser.find_element(By.ID, "params").get_attribute("aria-invalid") == "true"


def test_a_bad_value_is_shown_next_to_its_field(browser, base_url):
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    budget = browser.find_element(By.ID, "budget")
    budget.send_keys("5 GHz")
    browser.find_element(By.ID, "submit").click()
    errors = WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "errors")))
    assert "Budget" in errors.text
    assert budget.get_attribute("aria-invalid") == "true"


def test_every_bad_field_is_shown_not_only_the_first(browser, base_url, shots):
    # issue 12 item 13: only the first error showed.
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    _fill(browser, params="seven", batch_size="-4", deadline="5 GHz", budget="lots")
    browser.find_element(By.ID, "submit").click()
    errors = WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "errors")))
    lines = [p.text for p in errors.find_elements(By.TAG_NAME, "p")]
    assert [line.split(":")[0] for line in lines] == ["Parameters", "Batch size", "Deadline", "Budget"], lines
    for name in ("params", "batch_size", "deadline", "budget"):
        assert browser.find_element(By.ID, name).get_attribute("aria-invalid") == "true", name
    _screenshot(browser, shots / "calculator-errors.png")


def test_phone_sized_screen_has_no_sideways_scrolling_and_readable_chart_text(browser, base_url, shots):
    # issue 12 item 13: at 390 px the chart's labels were about 5 px (a 640 px drawing scaled down).
    browser.set_window_size(*PHONE)
    try:
        browser.get(base_url + "/")
        Select(browser.find_element(By.ID, "objective")).select_by_value("pareto")
        rows = _submit_and_read(browser)
        assert rows
        width = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], width
        frames = browser.execute_script("return [...document.querySelectorAll('.scroll')].filter(f => f.offsetParent)"
                                        ".map(f => [f.firstElementChild.id, f.scrollWidth, f.clientWidth])")
        assert all(scroll <= shown for _, scroll, shown in frames), frames
        # Text size as drawn: the font size times the SVG's scale on screen.
        sizes = browser.execute_script("""
            const svg = document.querySelector('#chart svg'), scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
            return [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale);""")
        assert sizes and min(sizes) >= 11, sizes
        assert browser.find_elements(By.CSS_SELECTOR, "#chart svg text.label")  # some points still get a name
        _screenshot(browser, shots / "calculator-phone.png")
    finally:
        browser.set_window_size(*DESKTOP)


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
