"""A plain (not editable) install works: build the wheel, install it, run it (issue 12 item 8).

The wheel once lacked ``api.routers`` and ``api/static``, so ``sizer serve`` died with
ModuleNotFoundError, and setuptools warned about ``catalog.workloads`` on every install. Here the
wheel is built from a copy of the tree, checked to carry every module and data file, installed
into a fresh virtual environment, and run from another directory: ``sizer recommend --json``,
then ``sizer serve`` answering ``/``, ``/docs``, ``/v1/peak`` and ``/v1/inference`` (from a worker
process). The wheel installs one top-level package, ``sizer``: the repository's api/, cli/, catalog/
and validation/ go in as ``sizer.api`` ... (pyproject.toml).

To stay fast and offline the new environment borrows the running one's third-party packages
through a path file (never its editable ``sizer``: a path file's own path files are not read),
and the wheel is installed with ``--no-deps --no-index``. Whatever of sizer it imports therefore
comes from the wheel, which the test checks.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import site
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sizer", "cli", "api", "catalog", "validation")
# The repository's folders that the wheel installs inside the sizer package (pyproject.toml, setup.py).
INSIDE = ("cli", "api", "catalog", "validation")
# Not shipped: dated validation reports and folder notes for people reading the source.
NOT_SHIPPED = re.compile(r"^validation/reports/|\.md$")
# what a checkout leaves beside the sources: not built, and .venv-latest (make test-latest) alone is ~1 GB to copy
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", ".venv-*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                     ".hypothesis", ".mypy_cache", ".ruff_cache", "out", "*.pyc")


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that would put this source tree on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "SIZER_CATALOG", "VIRTUAL_ENV") and not k.startswith("SIZER_API_")}
    env.update(extra)
    return env


def _source_files() -> set[str]:
    """Every file of the five packages a program can need, as paths relative to the repository."""
    files = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            relative = path.relative_to(ROOT).as_posix()
            if path.is_file() and "__pycache__" not in path.parts and not relative.endswith(".pyc") \
                    and not NOT_SHIPPED.search(relative):
                files.add(relative)
    return files


def _in_wheel(relative: str) -> str:
    """Where the wheel puts a file of the repository: ``api/app.py`` at ``sizer/api/app.py``."""
    return f"sizer/{relative}" if relative.split("/")[0] in INSIDE else relative


def test_shipped_code_names_no_top_level_folder_of_the_repository():
    # Installed, api/ is sizer.api: `from api.deps import ...` works in a checkout and fails from the wheel.
    # Each folder imports its own modules relatively; cli reaches api and validation through cli/siblings.py.
    import ast

    absolute = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
                absolute += [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for name in names
                             if name.split(".")[0] in INSIDE]
    assert not absolute, f"imports that only work in a checkout (make them relative): {absolute}"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(wheel path, build log) for a wheel built from a copy of the tree by setuptools' PEP 517 backend."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=COPY_IGNORE)
    dist = work / "dist"
    build = subprocess.run([sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_wheel({str(dist)!r})"],
                           cwd=source, env=_clean_env(PYTHONDONTWRITEBYTECODE="1"), capture_output=True, text=True,
                           timeout=120)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = dist.glob("sizer-*.whl")
    return wheel, build.stdout + build.stderr


@pytest.fixture(scope="module")
def venv(built, tmp_path_factory):
    """The bin folder of a fresh virtual environment with the wheel installed."""
    wheel, _ = built
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=60)
    python = root / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True, env=_clean_env()).stdout.strip()
    # Third-party packages (numpy, pint, fastapi, ...) from the running environment, appended
    # after the new environment's own site-packages, so the wheel's sizer comes first.
    borrowed = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "_borrowed_dependencies.pth").write_text("\n".join(borrowed) + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                              "--no-index", "--no-compile", str(wheel)],
                             capture_output=True, text=True, env=_clean_env(), timeout=120)
    assert install.returncode == 0, install.stdout + install.stderr
    assert "warning" not in install.stderr.lower(), install.stderr
    return root / "bin"


def test_building_the_wheel_raises_no_setuptools_warning(built):
    _, log = built
    warnings = [line for line in log.splitlines()
                if re.search(r"warn", line, re.IGNORECASE) and "byte-compiling is disabled" not in line]
    assert not warnings, "\n".join(warnings)


def test_wheel_carries_every_module_and_data_file(built):
    wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if not name.startswith("sizer-")}
    missing = {_in_wheel(relative) for relative in _source_files()} - shipped
    assert not missing, f"the wheel lacks {sorted(missing)} (setup.py lists the packages)"
    # The folders the old wheel lost, named so a failure here says what broke.
    for needed in ("sizer/api/routers/__init__.py", "sizer/api/static/index.html", "sizer/api/static/app.js",
                   "sizer/catalog/workloads/resnet50.yaml", "sizer/engine/error_spread.yaml"):
        assert needed in shipped


def test_wheel_installs_only_the_sizer_package(built):
    # Top-level `api`, `cli` or `catalog` in site-packages clash with other distributions of those names.
    wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
    assert not tops & {"api", "cli", "catalog", "validation", "benchmarks", "tests"}, sorted(tops)
    assert {top for top in tops if not top.endswith(".dist-info")} == {"sizer"}, sorted(tops)


def test_installed_package_is_the_wheel_not_the_source_tree(venv, tmp_path):
    where = subprocess.run(
        [venv / "python", "-c", "import sizer, sizer.api.routers, sizer.api.app, sizer.cli.main, sizer.catalog, "
                                "sizer.validation.profiler; from sizer.hardware.catalog import builtin_catalog_dir; "
                                "print(sizer.__file__); print(sizer.api.routers.__file__); print(sizer.catalog.__file__); "
                                "print(builtin_catalog_dir())"],
        cwd=tmp_path, capture_output=True, text=True, env=_clean_env(), timeout=60)
    assert where.returncode == 0, where.stderr
    env_root = venv.parent.resolve()
    for line in where.stdout.split():
        assert Path(line).resolve().is_relative_to(env_root), line


def test_installed_recommend_answers_json_from_another_directory(venv, tmp_path):
    run = subprocess.run([venv / "sizer", "recommend", "--json"], cwd=tmp_path, capture_output=True, text=True,
                         env=_clean_env(SIZER_CACHE_DIR=str(tmp_path / "cache")), timeout=120)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["ranked"], answer
    assert answer["ranked"][0]["rank"] == 1


def test_installed_sizer_answers_a_shipped_config_by_hub_id(venv, tmp_path):
    # catalog/hf_configs (JSON and the index CSV) travel in the wheel: a hub id answers from the installed package
    run = subprocess.run([venv / "sizer", "inference", "--model", "deepseek-ai/DeepSeek-R1", "--device", "H200", "--count",
                          "8", "--json"], cwd=tmp_path, capture_output=True, text=True,
                         env=_clean_env(SIZER_CACHE_DIR=str(tmp_path / "cache")), timeout=120)
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["model"] == "deepseek-ai/DeepSeek-R1" and answer["weights"] == "fp8"


def test_installed_commands_that_load_api_and_validation_start(venv, tmp_path):
    # `sizer validate` and `sizer profile` import sizer.validation, `sizer serve` sizer.api, only when run.
    for command in (["validate", "--help"], ["profile", "--help"], ["serve", "--help"]):
        run = subprocess.run([venv / "sizer", *command], cwd=tmp_path, capture_output=True, text=True,
                             env=_clean_env(), timeout=60)
        assert run.returncode == 0 and "Usage" in run.stdout, (command, run.stderr)
    module = subprocess.run([venv / "python", "-m", "sizer", "--version"], cwd=tmp_path, capture_output=True,
                            text=True, env=_clean_env(), timeout=60)
    assert module.stdout.strip() == "sizer 0.1.0", module.stderr


def _get(url: str, body: dict | None = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read().decode()


def test_installed_server_serves_the_page_the_docs_and_the_api(venv, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("w+")
    server = subprocess.Popen([venv / "sizer", "serve", "--host", "127.0.0.1", "--port", str(port)], cwd=tmp_path,
                              stdout=log, stderr=subprocess.STDOUT,
                              env=_clean_env(SIZER_CACHE_DIR=str(tmp_path / "cache")))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(base + "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"sizer serve did not start: {log.read()[-3000:]}")
            time.sleep(0.2)

        status, page = _get(base + "/")
        assert status == 200 and "/static/app.js" in page
        assert _get(base + "/static/app.js")[0] == 200
        status, docs = _get(base + "/docs")
        assert status == 200 and "swagger-ui-bundle.js" in docs
        bundle = re.search(r'src="([^"]*swagger-ui-bundle\.js)"', docs).group(1)
        assert "SwaggerUIBundle" in _get(base + bundle)[1]
        status, peak = _get(base + "/v1/peak", {"device": "Tesla P40"})
        assert status == 200
        # spec §3.1: 2 x 3840 x 1.531 GHz = 1.176e13 FLOP/s; the number only has to arrive.
        assert "FLOP" in peak
        # A serving question runs in an estimate worker process, which imports sizer.api.pool by that name.
        status, served = _get(base + "/v1/inference", {"params": "1B", "device": "H100 SXM"})
        assert status == 200 and json.loads(served)["decode_tokens_per_s"]["unit"] == "tokens/s"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
