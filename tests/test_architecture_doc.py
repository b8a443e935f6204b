"""ARCHITECTURE.md stays true: every file, folder and module it names exists."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "ARCHITECTURE.md"
# a path in backticks: folders and files of the repository (a glob's fixed part is checked)
PATH = re.compile(r"`((?:sizer|api|cli|catalog|validation|benchmarks|tests)/[\w./*-]*)`")


def _named_paths() -> set[str]:
    return set(PATH.findall(DOC.read_text(encoding="utf-8")))


def test_the_page_names_the_rooms():
    named = _named_paths()
    for room in ("sizer/", "catalog/", "validation/", "benchmarks/", "tests/"):
        assert any(path.startswith(room) for path in named), room


def test_every_named_path_exists():
    missing = []
    for path in sorted(_named_paths()):
        fixed = path.split("*")[0].rstrip("/") or path
        target = ROOT / fixed
        if "*" in path:
            target = target.parent if not target.exists() else target
        if not target.exists():
            missing.append(path)
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"


def test_every_named_function_of_the_facade_exists():
    import sizer.facade as facade

    named = set(re.findall(r"`(estimate_\w+|recommend|answer_owned)`", DOC.read_text(encoding="utf-8")))
    assert named and all(hasattr(facade, name) for name in named), named - {n for n in named if hasattr(facade, n)}
