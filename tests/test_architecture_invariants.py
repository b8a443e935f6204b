"""ARCHITECTURE.md's invariants, checked on the source (issue 41 item 4).

Every "**Invariant**" line of ARCHITECTURE.md names the test that holds it; the ones that no other test file
covers live here. They read the source with :mod:`ast` (imports inside functions included), so a lazy import
or a call written on one line cannot hide a breach.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "ARCHITECTURE.md").read_text()


def _python_files(*folders: str) -> Iterator[Path]:
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _imports(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Every module an import statement names (absolute), with its line; relative imports are the folder's own."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno
        elif isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)


def _importers(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    """``path:line module`` for each import under ``folder`` of a module under one of ``forbidden``."""
    found = []
    for path in _python_files(folder):
        for module, line in _imports(ast.parse(path.read_text())):
            if any(module == f or module.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(ROOT)}:{line} {module}")
    return found


# --- Every invariant names its test ---------------------------------------------------------------------------

INVARIANT_LINE = re.compile(r"\*\*[A-Za-z ]*[Ii]nvariant\*\*")


def _invariant_paragraphs() -> list[str]:
    """The paragraph of ARCHITECTURE.md from each "**... invariant**" marker to the next marker or blank line."""
    paragraphs = []
    for match in INVARIANT_LINE.finditer(DOC):
        rest = DOC[match.end():]
        end = min([m.start() for m in (INVARIANT_LINE.search(rest), re.search(r"\n\s*\n|\n- ", rest)) if m] + [len(rest)])
        paragraphs.append(match.group(0) + rest[:end])
    return paragraphs


def test_every_invariant_names_a_test_that_exists():
    paragraphs = _invariant_paragraphs()
    assert len(paragraphs) >= 8, "ARCHITECTURE.md lost its invariants"
    for paragraph in paragraphs:
        tests = re.findall(r"`(tests/[\w/]+\.py)(?:::\w+)?`", paragraph)
        assert tests, f"an invariant without the test that holds it: {paragraph[:160]!r}"
        for test in tests:
            assert (ROOT / test).is_file(), f"{test}, named for an invariant, does not exist"


def test_the_marker_finder_reads_a_paragraph():
    assert INVARIANT_LINE.search("**Invariant**: x") and INVARIANT_LINE.search("**Architecture invariant**: y")


# --- Adapters: the one place errors become exit code 2 ---------------------------------------------------------

def _exit_codes(tree: ast.AST) -> Iterator[int]:
    """Lines that end the process with a code of their own: ``typer.Exit(2)``, ``sys.exit(2)``, ``SystemExit(2)``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name.split(".")[-1] in {"Exit", "exit", "SystemExit"}:
            codes = [*node.args, *(k.value for k in node.keywords if k.arg in {"code", "status"})]
            if any(isinstance(c, ast.Constant) and c.value == 2 for c in codes):
                yield node.lineno


def test_only_the_command_group_turns_errors_into_exit_code_2():
    found = [f"{path.relative_to(ROOT)}:{line}" for path in _python_files("cli")
             if path.name != "main.py" for line in _exit_codes(ast.parse(path.read_text()))]
    assert found == [], f"exit code 2 outside cli/main.py's SizerGroup: {found}"


def test_the_exit_code_finder_finds_one():
    assert list(_exit_codes(ast.parse("raise typer.Exit(code=2)\nsys.exit(2)\nraise typer.Exit(code=1)"))) == [1, 2]


# --- Folders that must not import up --------------------------------------------------------------------------

SERVING_ROOMS = ("sizer.passes", "sizer.simulator", "sizer.serving", "sizer.local")


def test_runtimes_ask_nothing_of_the_rooms_that_ask_them():
    assert _importers("sizer/runtimes", (*SERVING_ROOMS, "sizer.plan", "sizer.facade")) == []


def test_launch_imports_no_engine_planner_or_serving():
    assert _importers("sizer/launch", ("sizer.engine", "sizer.plan", *SERVING_ROOMS, "sizer.facade")) == []


def test_the_simulator_answers_no_question():
    # it is asked by sizer/serving (capacity, under load); it never reaches up into an answer
    assert _importers("sizer/simulator", ("sizer.serving", "sizer.local", "sizer.plan", "sizer.facade")) == []


def test_one_forward_pass_is_below_the_rooms_that_share_it():
    assert _importers("sizer/passes", ("sizer.serving", "sizer.simulator", "sizer.local", "sizer.plan",
                                       "sizer.facade")) == []


def test_only_validation_imports_torch_and_only_inside_functions():
    outside = _importers("sizer", ("torch",)) + _importers("api", ("torch",)) + _importers("cli", ("torch",))
    assert outside == []
    at_top = [f"{path.relative_to(ROOT)}:{node.lineno}" for path in _python_files("validation")
              for node in ast.parse(path.read_text()).body
              if isinstance(node, (ast.Import, ast.ImportFrom)) and "torch" in ast.unparse(node).split()[1].split(".")[0]]
    assert at_top == [], f"torch imported at module level (the suite must import without it): {at_top}"


# --- One time engine --------------------------------------------------------------------------------------------

# A device's time is the roofline's: work divided by a device's peak or memory bandwidth. The engine does it;
# formulas/ holds the seed papers' closed forms (R = 2NC ...); passes/ prices a pass's extra bytes for the engine.
ROOFLINE_HOMES = ("sizer/engine/", "sizer/formulas/", "sizer/passes/")
DEVICE_RATES = {"peak", "bandwidth", "rates", "unit_peaks", "memory_bandwidth", "tflops"}


def _divisions_by_a_device_rate(tree: ast.AST) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            divisor = node.right
            attributes = {n.attr for n in ast.walk(divisor) if isinstance(n, ast.Attribute)}
            if attributes & DEVICE_RATES:
                yield node.lineno


def test_no_second_roofline_outside_the_engine():
    found = [f"{path.relative_to(ROOT)}:{line}" for path in _python_files("sizer")
             if not str(path.relative_to(ROOT)).startswith(ROOFLINE_HOMES)
             for line in _divisions_by_a_device_rate(ast.parse(path.read_text()))]
    assert found == [], f"a time computed from a device's peak or bandwidth outside the engine: {found}"


def test_the_roofline_finder_finds_a_division():
    assert list(_divisions_by_a_device_rate(ast.parse("t = flops / table.peak[i]\nu = a * table.peak"))) == [1]


# --- Frameworks: no name compared outside their folder --------------------------------------------------------

def _framework_names() -> set[str]:
    from sizer.frameworks.framework_name import Framework

    return {member.value for member in Framework}


def _compares_a_framework(tree: ast.AST, names: set[str]) -> Iterator[int]:
    """Lines comparing a value with a framework's name written out (``framework == "megatron"``, ``in ("fsdp", ...)``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            literals = {n.value for side in (node.left, *node.comparators) for n in ast.walk(side)
                        if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            if literals & names:
                yield node.lineno


def test_no_framework_compared_by_name_outside_its_folder():
    names = _framework_names()
    found = [f"{path.relative_to(ROOT)}:{line}" for path in _python_files("sizer", "api", "cli")
             if "sizer/frameworks/" not in str(path)
             for line in _compares_a_framework(ast.parse(path.read_text()), names)]
    assert found == [], found


def test_the_framework_comparison_finder_finds_one():
    assert list(_compares_a_framework(ast.parse('a = x == "megatron"\nb = "framework" in d'), {"megatron"})) == [1]
