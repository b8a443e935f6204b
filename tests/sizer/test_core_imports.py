"""The core must stay importable without torch, fastapi or typer (spec §1)."""
import subprocess
import sys


def test_import_sizer_pulls_in_no_framework():
    code = ("import sys, sizer, sizer.plan.recommend, sizer.facade; "
            "print(','.join(m for m in ('torch', 'fastapi', 'typer', 'uvicorn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


# --- No import cycles (issue 18 item 4) ------------------------------------------------------------
# Read from the source (every import statement, including those inside functions; only `if TYPE_CHECKING:`
# blocks are left out, they never run), so a lazy import cannot hide a cycle.

import ast  # noqa: E402
from pathlib import Path  # noqa: E402

SIZER = Path(__file__).resolve().parents[2] / "sizer"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SIZER.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in SIZER.rglob("*.py")}


def _runtime_imports(tree: ast.AST):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in _runtime_imports(ast.Module(body=[child], type_ignores=[])))
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        yield from _runtime_imports(node)


def import_graph() -> dict[str, set[str]]:
    """Module -> the sizer modules it imports."""
    return {name: {target for target in _runtime_imports(ast.parse(path.read_text())) if target in MODULES and target != name}
            for name, path in MODULES.items()}


# A module with its own place in the layers, apart from its package: the serving requests hold the runtime registry's
# entries, the weight formats and the length sets (found where a request is built), so they sit above the runtimes and
# the simulator, while the rest of sizer.schemas sits below the engine that the runtime registry reads (ARCHITECTURE.md)
OWN_PLACE = ("sizer.schemas.serving_requests",)


def _package(module: str) -> str:
    if module in OWN_PLACE:
        return module
    return ".".join(module.split(".")[:2])  # sizer.engine.roofline -> sizer.engine; sizer.units -> sizer.units


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_module_imports_itself_back():
    assert _cycle(import_graph()) is None


def test_no_cycle_between_sizer_subpackages():
    packages: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        # the package `sizer` itself (its __init__) is the root every module lives under, not a layer
        if module == "sizer":
            continue
        packages.setdefault(_package(module), set()).update(
            _package(t) for t in targets if t != "sizer" and _package(t) != _package(module))
    assert _cycle(packages) is None


def test_the_facade_imports_the_engine_planner_and_serving_only_when_used():
    # issue 18 item 8: `sizer peak` started in 1.7-1.8x pint's start-up, most of it importing modules
    # peak never uses; the facade now loads them on first use (benchmarks/startup.py measures the time)
    code = ("import sys, sizer.facade as f; heavy = ('sizer.training.time_answer', 'sizer.engine.evaluate', "
            "'sizer.plan.recommend', 'sizer.plan.planner', 'sizer.serving.estimate', 'sizer.workloads.registry', 'sizer.plan.suggestions', 'sizer.plan.owned', "
            "'sizer.schemas.time_and_memory', 'sizer.schemas.recommendation', 'sizer.schemas.serving'); "
            "print(','.join(m for m in heavy if m in sys.modules)); f.recommend_json; f.TimeResult; "
            "print('sizer.plan.recommend' in sys.modules, 'sizer.schemas.time_and_memory' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["", "True True"], out


def test_one_command_runs_in_an_app_holding_that_command_alone():
    from cli.main import app, app_for

    assert app_for(["--help"]) is app and app_for([]) is app and app_for(["catalog", "list"]) is app
    single = app_for(["peak", "Tesla P40"])
    assert [c.callback.__name__ for c in single.registered_commands] == ["peak"]
    assert [c.callback.__name__ for c in app_for(["k1"]).registered_commands] == ["cells", "k1", "complexity"]


# --- Type-only imports count too; no package imports from one above it (issue 41 item 2) ----------------------------
# An `if TYPE_CHECKING:` import names a type the module needs: a circle through one is a circle in the design, dodged
# only at run time (issue 41 found answer types named `Any` to dodge them). These read every import statement.

def _every_import(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def full_import_graph() -> dict[str, set[str]]:
    """Module -> the sizer modules it imports, type-only (``if TYPE_CHECKING:``) and function-level imports included."""
    return {name: {target for target in _every_import(ast.parse(path.read_text())) if target in MODULES and target != name}
            for name, path in MODULES.items()}


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module != "sizer":  # the root every module lives under, not a layer
            packages.setdefault(_package(module), set()).update(
                _package(t) for t in targets if t != "sizer" and _package(t) != _package(module))
    return packages


def test_type_only_imports_are_read():
    code = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sizer.units import ureg\n"
                     "def f():\n    import sizer.results\n")
    assert {"sizer.units", "sizer.results"} <= set(_every_import(code))
    assert "sizer.units" not in set(_runtime_imports(code))  # the run-time graph above leaves it out


def test_no_module_imports_itself_back_type_only_imports_included():
    assert _cycle(full_import_graph()) is None


def test_no_cycle_between_sizer_subpackages_type_only_imports_included():
    assert _cycle(_package_graph(full_import_graph())) is None


# The packages of sizer/, lowest first. A module may import from its own tier and the tiers below it, never from one
# above (ARCHITECTURE.md's code map); a new package takes its place here.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("sizer.errors", "sizer.memo"),  # the user's errors; the one caching policy
    ("sizer.choices", "sizer.deadline", "sizer.diskcache", "sizer.datafile", "sizer.units", "sizer.request_edits"),  # parsing, files, request edits
    ("sizer.results", "sizer.hardware"),  # the answers' parts; what devices are
    ("sizer.workloads", "sizer.formulas", "sizer.frameworks"),  # what is trained or served; the closed forms
    ("sizer.launch", "sizer.device_view"),  # the --emit setups and tools; catalog views
    ("sizer.schemas", "sizer.asked"),  # the request and result models every question shares; a request on its catalog
    ("sizer.engine", "sizer.measured"),  # the one time and memory engine; an answer rescaled by a measurement
    ("sizer.runtimes",),  # runtimes as named parts of the model
    ("sizer.passes",),  # one forward pass of a served model
    ("sizer.simulator", "sizer.local"),  # the discrete-event model; a user's machine
    ("sizer.schemas.serving_requests",),  # the serving requests, whose fields hold runtime and length-set entries
    ("sizer.serving", "sizer.training", "sizer.vocabularies"),  # the serving and training answers; the lists of names
    ("sizer.plan", "sizer.work_price"),  # the answers built on the engine and serving; what a question costs
    ("sizer.facade", "sizer.__main__"),  # the one door of cli/ and api/
)
TIER = {package: tier for tier, packages in enumerate(LAYERS) for package in packages}


def test_every_package_has_a_place_in_the_layers():
    packages = {_package(module) for module in MODULES if module != "sizer"}
    assert packages == set(TIER), sorted(packages ^ set(TIER))


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` from a package in a tier above the importing module's."""
    return sorted(f"{module} -> {target}" for module, targets in graph.items() if module != "sizer"
                  for target in targets if target != "sizer" and TIER[_package(target)] > TIER[_package(module)])


def test_no_module_imports_from_a_package_above_it():
    assert _upward(full_import_graph()) == []


def test_the_layer_check_names_an_upward_import():
    graph = {"sizer.schemas.time_and_memory": {"sizer.engine.summary", "sizer.results"}, "sizer.engine.job": {"sizer.schemas.base"}}
    assert _upward(graph) == ["sizer.schemas.time_and_memory -> sizer.engine.summary"]
