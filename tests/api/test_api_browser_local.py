"""The serve page asks a local question: one device, a runtime and the tokens already in the context go to
/v1/inference (the same answer as ``sizer inference``), and the page states the runtime it assumed.

Fixtures (server, browser) are tests/conftest.py's, helpers test_api_browser's.
"""
from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest

# First: importing test_api_browser skips this module where selenium or Chromium is missing.
from tests.api.test_api_browser import DESKTOP, _choose_task, _fill

# isort: split
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import Select, WebDriverWait

from sizer.runtimes import registry

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _ask_locally(browser, base_url, **fields: str) -> str:
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    _choose_task(browser, "serve")
    Select(browser.find_element(By.ID, "sv-weights")).select_by_value("q4_k_m")
    _fill(browser, **fields)
    browser.find_element(By.ID, "sv-submit").click()
    WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "serve-runtime")))
    return browser.find_element(By.ID, "serve-result").text


def test_runtime_choices_are_the_names_the_api_accepts(browser, base_url):
    browser.get(base_url + "/")
    options = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "sv-runtime")).options]
    assert options[0] == ""  # auto: the service chooses by device and format, and says which
    assert sorted(options[1:]) == sorted({r.name for r in registry().values()})


def test_a_gguf_model_on_an_m4_max_states_llama_cpp_and_the_depth(browser, base_url):
    text = _ask_locally(browser, base_url, **{"sv-model": "llama-3.1-8b", "sv-device": "Apple M4 Max",
                                              "sv-depth": "4096", "sv-prompt_len": "512", "sv-output_len": "128"})
    runtime = browser.find_element(By.ID, "serve-runtime").text
    # no runtime given: a GGUF mix runs under llama.cpp (sizer.local.machine.local_runtime), said so
    assert runtime.startswith("Runtime: llama.cpp, not given"), runtime
    summary = browser.find_element(By.ID, "serve-summary").text
    assert "Apple M4 Max" in summary and "4,096 tokens already in the context" in summary, summary
    assert "tokens/s per user" in summary
    # the assumptions carry the depth the service used and the fitted kernels for Apple GPUs
    # (behind a closed <details>: read as text content, which joins the cells without spaces)
    rows = [tr.get_attribute("textContent") for tr in browser.find_elements(By.CSS_SELECTOR, "#serve-assumptions tbody tr")]
    assert any(r.startswith("depth") and "4096 tokens" in r.replace(",", "") for r in rows), rows
    assert any(r.startswith("runtime kernels") and "apple" in r for r in rows), rows
    # the ranked tables of the catalog search stay hidden: this answer is for one device
    assert not browser.find_element(By.ID, "serve-offline").is_displayed()
    assert "llama.cpp" in text


def test_a_runtime_that_cannot_run_it_is_refused_under_the_form(browser, base_url):
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    _choose_task(browser, "serve")
    Select(browser.find_element(By.ID, "sv-weights")).select_by_value("q4_k_m")
    Select(browser.find_element(By.ID, "sv-runtime")).select_by_value("mlx")
    _fill(browser, **{"sv-model": "llama-3.1-8b", "sv-device": "RTX 4090"})
    browser.find_element(By.ID, "sv-submit").click()
    errors = WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "sv-errors")))
    assert "runtime" in errors.text, errors.text


def test_a_local_model_that_does_not_fit_lists_what_would(browser, base_url):
    # 70B at Q4_K_M (about 42 GB) on one 24 GB RTX 4090: the page said "does not fit" and nothing more, where
    # `sizer inference` lists the changes that would fit (a second card, layers kept in host memory)
    _ask_locally(browser, base_url, **{"sv-model": "llama-3.1-70b", "sv-device": "RTX 4090"})
    summary = browser.find_element(By.ID, "serve-summary").text
    assert "does not fit" in summary, summary
    fixes = browser.find_element(By.ID, "serve-fixes")
    assert fixes.is_displayed() and "What would make it fit" in fixes.text, fixes.text
    assert "layers" in fixes.text and "per user" in fixes.text, fixes.text
    # a question that fits shows no such line
    _ask_locally(browser, base_url, **{"sv-model": "llama-3.1-8b", "sv-device": "RTX 4090"})
    assert not browser.find_element(By.ID, "serve-fixes").is_displayed()


def _emitted_command(base_url: str, body: dict[str, str]) -> str:
    # what /v1/inference returns as ``launch``, its command and configuration joined as the page shows them
    request = urllib.request.Request(base_url + "/v1/inference", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        launch = json.load(response)["launch"]
    return "\n\n".join(part for part in (launch["command"], launch["config"]) if part)


def test_the_launch_command_is_shown_with_a_copy_button_and_matches_the_api(browser, base_url):
    # issue 42: --emit on the page, with a copy button; the command is the one /v1/inference returns
    _ask_locally(browser, base_url, **{"sv-model": "llama-3.1-8b", "sv-device": "RTX 4090"})
    Select(browser.find_element(By.ID, "sv-emit")).select_by_value("llama.cpp")
    browser.find_element(By.ID, "sv-submit").click()
    WebDriverWait(browser, 30).until(ready.visibility_of_element_located((By.ID, "serve-launch")))
    shown = browser.find_element(By.ID, "serve-launch-command").text
    assert shown.startswith("llama-server") and "-ngl" in shown, shown
    assert shown == _emitted_command(base_url, {"model": "llama-3.1-8b", "device": "RTX 4090", "weights": "q4_k_m",
                                               "emit": "llama.cpp"})
    assert browser.find_element(By.ID, "serve-launch-copy").is_displayed()
    assert browser.find_element(By.ID, "serve-launch-title").text.startswith("Launch (llama.cpp")


def test_the_page_offers_only_serving_tools_that_are_registered():
    from sizer.launch.tools import tool_named

    page = (Path(__file__).resolve().parents[2] / "api" / "static" / "index.html").read_text(encoding="utf-8")
    select = page[page.index('id="sv-emit"'):page.index("</select>", page.index('id="sv-emit"'))]

    for value in re.findall(r'value="([^"]+)"', select):
        assert tool_named(value).name  # an option the API refuses would be a page the CLI contradicts
