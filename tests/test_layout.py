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
