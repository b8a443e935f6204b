"""The serve page asks one device under load as ``sizer inference -d ... --rate/--prompts`` does (issue 38): it
dropped the load when a device was given; now the rate, the benchmark's prompts and the lengths go to /v1/inference,
and the page says the deployment is saturated and by how much.

Fixtures (server, browser) are tests/conftest.py's, helpers test_api_browser's.
"""
from __future__ import annotations

import pytest

# First: importing test_api_browser skips this module where selenium or Chromium is missing.
from tests.api.test_api_browser import DESKTOP, _choose_task, _fill

# isort: split
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import Select, WebDriverWait

from sizer.facade import InferenceRequest, estimate_inference

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_a_device_under_a_benchmark_above_capacity_is_said_saturated(browser, base_url):
    # issue 38's example: RTX 3090, Llama-3-8B, vLLM, 8 requests/s above a capacity of about 4-5 requests/s
    browser.set_window_size(*DESKTOP)
    browser.get(base_url + "/")
    _choose_task(browser, "serve")
    Select(browser.find_element(By.ID, "sv-lengths")).select_by_value("sharegpt-vllm-sample")
    _fill(browser, **{"sv-model": "llama-3-8b", "sv-device": "RTX 3090", "sv-rate": "8", "sv-prompts": "1000"})
    browser.find_element(By.ID, "sv-submit").click()
    WebDriverWait(browser, 60).until(ready.visibility_of_element_located((By.ID, "serve-runtime")))
    python = estimate_inference(InferenceRequest(model="llama-3-8b", device="RTX 3090", rate=8, prompts=1000,
                                                 lengths="sharegpt-vllm-sample"))
    said = browser.find_element(By.ID, "serve-runtime").text
    assert said.startswith("Saturated:") and f"{python.capacity.utilisation:.2f} x the capacity" in said, said
    summary = browser.find_element(By.ID, "serve-summary").text
    assert "time to first token p50 / p90 / p99" in summary and "1 replica(s)" in summary, summary
