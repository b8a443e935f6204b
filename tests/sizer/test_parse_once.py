"""Parse once (issue 41, item 1 and its "done when"): a request's counts, quantities and choices are read where the
request model is built; past that edge the core reads typed values, and plan/ edits typed requests, never dicts.

Read from the source with ``ast``, so that a parse call or a ``fields`` dict added anywhere in ``sizer/`` fails
here, naming the file and line.
"""
from __future__ import annotations

import ast
from pathlib import Path

SIZER = Path(__file__).resolve().parents[2] / "sizer"

# The parsers of request text: sizer/units.py's, the batch's and the choices'.
PARSERS = frozenset({"parse_quantity", "parse_count", "parse_batch_size", "parse_choice"})

# The modules that may call them, each with the reason it is an edge (or reads no request at all).
EDGE = {
    "sizer/units.py": "defines parse_quantity and parse_count, and the request fields' validators that call them",
    "sizer/choices.py": "defines parse_choice and the choice fields' validator",
    "sizer/workloads/batch.py": "defines parse_batch_size and the batch field's validator",
    "sizer/schemas/measurement.py": "the --measured field's validator (parse_measured), where the request is built",
    # catalog and data files: their text is not a request's
    "sizer/hardware/schema.py": "catalog YAML figures ('1.531 GHz'), parsed where the catalog is read",
    "sizer/hardware/networks.py": "catalog YAML (node types, links)",
    "sizer/hardware/precision.py": "a precision named in the catalog's YAML",
    "sizer/engine/calibration.py": "a calibration file written by sizer calibrate",
    "sizer/frameworks/apply.py": "a framework recipe's knobs in frameworks.yaml",
    "sizer/frameworks/__init__.py": "the framework registry's lookup by name (frameworks.yaml's names; a member reads as itself)",
    "sizer/runtimes/formats.py": "the KV-cache registry's lookup by name (runtime tables name formats; a member reads as itself)",
    # functions that are their own edge: no request model stands in front of them
    "sizer/plan/sweep.py": "sweep() takes its precisions and shardings as plain lists, not a request model",
    "sizer/formulas/cells.py": "estimate_cells, a public formula documented to take counts as text (its doctests)",
    "sizer/formulas/redundancy.py": "estimate_k1, a public formula documented to take counts as text",
    "sizer/formulas/complexity.py": "estimate_complexity, a public formula documented to take widths and a time as text",
    "sizer/formulas/peaks.py": "estimate_peak, a public formula documented to take cores and a clock as text",
    "sizer/formulas/tco.py": "estimate_tco, hourly_price and CostAssumptions.given, public and documented to take "
                             "prices and periods as text",
}


def _calls(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else None
            if name in PARSERS:
                found.append((node.lineno, name))
    return found


def _relative(path: Path) -> str:
    return path.relative_to(SIZER.parent).as_posix()


def test_request_text_is_parsed_only_at_the_edge():
    outside = {f"{_relative(path)}:{line} {name}" for path in SIZER.rglob("*.py") if _relative(path) not in EDGE
               for line, name in _calls(path)}
    assert outside == set(), "parse calls past the edge (the request's values are typed already): " + ", ".join(sorted(outside))


def test_the_edge_list_names_only_modules_that_parse():
    # an allowance no longer used is removed, so the list stays the true edge
    unused = {module for module in EDGE if not _calls(SIZER.parent / module)}
    assert unused == set()


def test_the_request_path_modules_parse_nothing():
    # the modules that read requests past the edge: none may hold an allowance (the count the issue asks for)
    request_path = ("sizer/engine/workload.py", "sizer/schemas/base.py", "sizer/engine/job.py", "sizer/training/estimates.py", "sizer/plan/recommend.py",
                    "sizer/plan/owned.py", "sizer/plan/owned_choice.py", "sizer/plan/owned_answer.py",
                    "sizer/plan/suggestions.py", "sizer/serving/estimate.py", "sizer/serving/recommend_devices.py",
                    "sizer/serving/under_load.py", "sizer/passes/layer_offload.py", "sizer/facade.py",
                    "sizer/workloads/registry.py")
    assert {module: _calls(SIZER.parent / module) for module in request_path} == {m: [] for m in request_path}
    assert not set(request_path) & set(EDGE)


def _untyped_fields_parameters(path: Path, shown: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            for argument in arguments:
                annotation = ast.unparse(argument.annotation) if argument.annotation is not None else ""
                if argument.arg == "fields" and (not annotation or any(word in annotation for word in ("dict", "Mapping", "Any"))):
                    found.append(f"{shown}:{node.lineno} {node.name}({argument.arg}: {annotation or '?'})")
    return found


def test_no_function_takes_an_untyped_fields_dict():
    found = [entry for path in SIZER.rglob("*.py") for entry in _untyped_fields_parameters(path, _relative(path))]
    assert found == [], "functions taking request data as a dict (take the typed request): " + ", ".join(found)


def test_the_scans_see_a_parse_call_and_a_fields_dict(tmp_path):
    # the scans above would pass on any tree if they found nothing: they find these
    sample = tmp_path / "sample.py"
    sample.write_text("def f(fields: dict[str, int], n: int) -> float:\n    return parse_count('params', fields['params'])\n"
                      "def g(fields) -> None:\n    pass\n", encoding="utf-8")
    assert _calls(sample) == [(2, "parse_count")]
    assert _untyped_fields_parameters(sample, "sample.py") == ["sample.py:1 f(fields: dict[str, int])", "sample.py:3 g(fields: ?)"]


# --- Registry entries (issue 41 item 1): runtime, weights and lengths are the entries past the edge --------------------
# A request's ``runtime``, ``weights`` and ``lengths`` hold the Runtime, WeightFormat and length set found where the
# request is built (sizer.choices.entry_named); a lookup of one of them by name past that edge is a second parse.

LOOKUPS = frozenset({"weight_format", "runtime", "length_distribution"})
ENTRY_FIELDS = frozenset({"weights", "runtime", "lengths"})


def _is_request(node: ast.AST) -> bool:
    """Whether ``node`` names a request: ``request``, ``req``, ``served.request`` (any name holding "request")."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "request" in name.lower() or name == "req"


def _reads_entry_field(node: ast.AST) -> bool:
    """Whether ``node`` reads a request's runtime, weights or lengths: ``request.weights``, ``getattr(request,
    "runtime", ...)`` or ``given(request, "lengths", ...)``."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in ENTRY_FIELDS and _is_request(sub.value):
            return True
        if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in ("getattr", "given")
                and len(sub.args) >= 2 and _is_request(sub.args[0]) and isinstance(sub.args[1], ast.Constant)
                and sub.args[1].value in ENTRY_FIELDS):
            return True
    return False


def _entry_lookups(tree: ast.AST, shown: str) -> list[str]:
    """Each lookup by name of a request's entry field in ``tree``: called on the field itself, or on a local name
    assigned from it in the same function (``name = getattr(request, "runtime", None)``, then ``runtime(name)``)."""
    found = []
    for function in [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        held = {target.id for node in ast.walk(function) if isinstance(node, ast.Assign) and _reads_entry_field(node.value)
                for target in node.targets if isinstance(target, ast.Name)}
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else None
            if name in LOOKUPS and (_reads_entry_field(node.args[0]) or any(
                    isinstance(sub, ast.Name) and sub.id in held for sub in ast.walk(node.args[0]))):
                found.append(f"{shown}:{node.lineno} {ast.unparse(node)}")
    return sorted(set(found))


def test_no_request_entry_is_looked_up_by_name_past_the_edge():
    found = [entry for path in SIZER.rglob("*.py") for entry in _entry_lookups(ast.parse(path.read_text(encoding="utf-8")),
                                                                                _relative(path))]
    assert found == [], "the request's field is the entry already (read it, do not look it up): " + ", ".join(found)


def test_the_entry_scan_sees_each_way_of_looking_one_up():
    sample = ast.parse(
        "def f(request, served, name):\n"
        "    fmt = weight_format(request.weights)\n"
        "    dist = length_distribution(served.request.lengths)\n"
        "    asked = getattr(request, 'runtime', None) or 'vllm'\n"
        "    entry = runtime(asked)\n"
        "    other = runtime(str(given(request, 'runtime')))\n"
        "    fine = weight_format(name), runtime(tool.runtime), weight_format(result.weights)\n")
    assert [line.split(" ", 1)[0] for line in _entry_lookups(sample, "s.py")] == ["s.py:2", "s.py:3", "s.py:5", "s.py:6"]
