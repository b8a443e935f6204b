"""tests/ mirrors the package tree: every folder of tests is a folder of the repository, so the
tests of ``sizer/engine/roofline.py`` are found in ``tests/sizer/engine/``."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
NOT_CODE = {"data", "__pycache__"}  # fixtures, not a mirror of a package


def test_every_test_folder_mirrors_a_folder_of_the_code():
    folders = [p for p in TESTS.rglob("*") if p.is_dir() and not NOT_CODE & set(p.relative_to(TESTS).parts)]
    assert folders
    unmatched = [str(p.relative_to(ROOT)) for p in folders if not (ROOT / p.relative_to(TESTS)).is_dir()]
    assert not unmatched, f"test folders that mirror no folder of the code (move the tests where the code is): {unmatched}"


def test_every_package_of_the_core_has_its_test_folder():
    packages = [p for p in (ROOT / "sizer").iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    missing = [str(p.relative_to(ROOT)) for p in packages if not (TESTS / p.relative_to(ROOT)).is_dir()]
    assert not missing, f"packages without tests/<package>/: {missing}"


def test_no_two_modules_of_the_core_share_a_name():
    # Same-named modules (engine/offload.py beside inference/offload.py) read alike in tracebacks and
    # imports and make same-named test files collide; each module of sizer/ is named for what it does.
    names: dict[str, list[str]] = {}
    for path in (ROOT / "sizer").rglob("*.py"):
        if path.name != "__init__.py":
            names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    shared = {name: paths for name, paths in names.items() if len(paths) > 1}
    assert not shared, f"modules of sizer/ with the same name: {shared}"


def test_no_two_test_files_share_a_name():
    # pytest imports test files by their base name (no __init__.py in tests/): two alike collide.
    names: dict[str, list[str]] = {}
    for path in TESTS.rglob("test_*.py"):
        names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {n: p for n, p in names.items() if len(p) > 1}


def test_every_core_module_has_a_test_file_of_its_own():
    # the house's rule: a module's tests are found by its name (tests/sizer/<folder>/test_<module>.py), so a
    # newcomer who changes a module knows which tests speak for it
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    tests = {path.name for path in (root / "tests").rglob("test_*.py")}
    entry_points = {"__init__", "__main__"}  # the package itself; `python -m sizer` (tests/sizer/test_command_entry.py)
    missing = [str(path.relative_to(root)) for path in sorted((root / "sizer").rglob("*.py"))
               if path.stem not in entry_points and f"test_{path.stem}.py" not in tests]
    assert not missing, f"core modules without tests/sizer/.../test_<module>.py: {missing}"
