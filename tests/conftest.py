"""Shared fixtures: the built-in catalog, a CLI runner, and the browser tests' server, browser and screenshots."""
from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

# No disk cache in the suite unless a test gives its own folder: a test that patches the engine must
# not leave its answers where a later test or command would read them (sizer.diskcache keys entries by
# the code's files, not by what a test patched in memory).
os.environ["SIZER_CACHE_DIR"] = "off"
# The service's request limit (20 s by default) is a guard for production, not part of any test's question: on a
# loaded machine an estimate that takes 0.5 s when quiet took over 20 s and was answered 503 (issue 41). The
# suite runs with the largest limit Settings allows; a test of the limit itself moves a clock of its own
# (ManualClock below, create_app(deadline_clock=...)) or passes Settings(timeout_s=...) explicitly.
os.environ["SIZER_API_TIMEOUT_S"] = "600"
# The service's worker processes run at a lower priority than the service (SIZER_API_WORKER_NICE, 10 by default), so
# that cheap questions stay fast; in the suite, run by pytest-xdist beside other test processes, that left them
# waiting behind those processes: here they run at the suite's own priority.
os.environ["SIZER_API_WORKER_NICE"] = "0"
# pytest-xdist's workers start with COLUMNS=80 and LINES=24: the CLI's tables wrapped at 80 columns, not at the 100
# of piped output that the tests read, and a verdict was cut in two. Every test starts without them, as in a serial
# run from a pipe; a test about widths sets COLUMNS itself.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

# hypothesis' own clocks too: its 200 ms deadline per example and its "too slow" health check fail a property
# test that holds, when the machine is busy. Each test's @settings (examples, seeds) still applies over this.
settings.register_profile("sizer", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "sizer"))

from sizer.hardware.catalog import load_catalog  # noqa: E402

# The project's reference data (shared/ beside the checkout, as the developers and CI have it).
SHARED_DATA = next((p for p in (Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data"))
                    if p.is_dir()), Path(__file__).resolve().parents[2] / "shared" / "data")


class ManualClock:
    """A monotonic clock the test moves, for :mod:`sizer.deadline` (``time_limit(..., clock=)``,
    ``create_app(deadline_clock=)``): by hand with :meth:`advance`, or by ``step`` seconds on every read, a
    deterministic work budget (a limit of T s passes at about the T/step-th deadline check, however loaded the
    machine is).

    Parameters
    ----------
    start : float
        The time of the first read [s].
    step : float
        Seconds the clock moves after each read [s]; 0: only :meth:`advance` moves it.
    """

    def __init__(self, start: float = 1000.0, step: float = 0.0):
        self.now, self.step, self.reads = start, step, 0
        self._lock = threading.Lock()  # read from the request's thread and the estimate's

    def __call__(self) -> float:
        with self._lock:
            now, self.reads = self.now, self.reads + 1
            self.now += self.step
            return now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` [s] forward."""
        with self._lock:
            self.now += seconds


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

# SIZER_CHROMIUM / SIZER_CHROMEDRIVER name other binaries (a path that does not exist shows the skip)
CHROMIUM = os.environ.get("SIZER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("SIZER_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"


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
    deadline = time.monotonic() + 60  # a bound on a server that never starts, not a test of how soon
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
