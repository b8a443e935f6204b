"""Shared fixtures: the built-in catalog, a CLI runner, and the browser tests' server, browser and screenshots."""
from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

# No disk cache in the suite unless a test gives its own folder: a test that patches the engine must
# not leave its answers where a later test or command would read them (sizer.diskcache keys entries by
# the code's files, not by what a test patched in memory).
os.environ["SIZER_CACHE_DIR"] = "off"

from sizer.hardware.catalog import load_catalog  # noqa: E402

# The project's reference data (shared/ beside the checkout, as the developers and CI have it).
SHARED_DATA = next((p for p in (Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data"))
                    if p.is_dir()), Path(__file__).resolve().parents[2] / "shared" / "data")


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(autouse=True)
def _no_user_catalog(monkeypatch):
    monkeypatch.delenv("SIZER_CATALOG", raising=False)


@pytest.fixture()
def cli():
    """Run `sizer ARGS`; returns the result (exit_code, stdout, stderr)."""
    from cli.main import app

    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, [str(a) for a in args])

    return invoke


def stop_server(process) -> None:
    """Stop a server started in its own process group: SIGTERM, then SIGKILL after 10 s."""
    import os
    import signal
    import subprocess

    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


# --- the browser tests' fixtures (test_api_browser*.py): the app served by uvicorn on a free port, headless
# Chromium and the folder for screenshots, each module-scoped, so every browser test module starts its own
# server and browser; the modules skip themselves where Chromium or selenium is missing before they ask.

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


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
    from selenium import webdriver
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
    from selenium.webdriver.support.ui import WebDriverWait

    opened = driver.get

    def get(url: str) -> None:
        """Open a page, then wait until its selects hold the lists of GET /v1/choices (api/static/format.js)."""
        opened(url)
        WebDriverWait(driver, 10).until(lambda d: d.execute_script(
            "return !document.querySelector('select[data-choices]') || document.documentElement.dataset.choices"))

    driver.get = get  # type: ignore[method-assign]
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("SIZER_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
