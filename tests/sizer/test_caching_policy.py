"""sizer/memo.py as the house's one caching policy: every cache declared, bounded, clearable, and
keyed so that a catalog change gives a fresh answer."""
import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sizer import memo
from sizer.hardware.catalog import load_catalog
from sizer.plan.recommend import recommend
from sizer.schemas.recommendation import RecommendRequest

ROOT = Path(__file__).resolve().parents[2]
HOUSE = ("sizer", "api", "cli")
POLICY_MODULE = ROOT / "sizer" / "memo.py"
UNMANAGED_ATTRIBUTES = {("functools", "lru_cache"), ("functools", "cache"), ("memo", "keyed_cache")}
UNMANAGED_NAMES = {"lru_cache", "keyed_cache"}


def _house_files():
    for folder in HOUSE:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _name_of(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        return _name_of(node.func)
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _registered_uses(tree: ast.Module, module: str):
    """(name the cache is declared under, line) of every registered_cache use in a module: a decorated
    function (module.Class.function) or ``registered_cache(...)(function)``."""
    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if any(_name_of(d) == "registered_cache" for d in getattr(child, "decorator_list", [])):
                    yield f"{prefix}.{child.name}", child.lineno
                yield from visit(child, f"{prefix}.{child.name}" if isinstance(child, ast.ClassDef)
                                 else f"{prefix}.{child.name}.<locals>")
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Call) \
                    and _name_of(child.func) == "registered_cache" and child.args:
                yield f"{prefix}.{_name_of(child.args[0])}", child.lineno
            else:
                yield from visit(child, prefix)
    yield from visit(tree, module)


def test_every_cache_in_the_house_is_made_by_the_policy_and_declared():
    declared = {policy.name for policy in memo.POLICIES}
    unmanaged, undeclared, disk_undeclared = [], [], []
    for path in _house_files():
        if path == POLICY_MODULE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            # functools.lru_cache / functools.cache / keyed_cache, as a decorator or a call (a
            # functools.cached_property lives and dies with its frozen object: not a house cache)
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and (node.value.id, node.attr) in UNMANAGED_ATTRIBUTES) \
                    or (isinstance(node, ast.Name) and node.id in UNMANAGED_NAMES):
                unmanaged.append(f"{where}:{node.lineno} {_name_of(node)}")
            # the disk cache: cached("kind", key, build) names a declared disk kind
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cached" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                if f"disk:{node.args[0].value}" not in declared:
                    disk_undeclared.append(f"{where}:{node.lineno} {node.args[0].value}")
        undeclared += [f"{where}:{line} {name}" for name, line in _registered_uses(tree, _module(path))
                       if name not in declared]
    assert unmanaged == [], "make these caches with sizer.memo.registered_cache and declare them in POLICIES"
    assert undeclared == [], "declare these caches in sizer.memo.POLICIES"
    assert disk_undeclared == [], "declare these disk cache kinds in sizer.memo.POLICIES as disk:NAME"


def test_no_function_imports_functools_lru_cache_by_name():
    found = [f"{path.relative_to(ROOT)}:{node.lineno}" for path in _house_files() if path != POLICY_MODULE
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.ImportFrom) and node.module == "functools"
             and any(alias.name in ("lru_cache", "cache") for alias in node.names)]
    assert found == []


def _imported_live():
    """Every registered cache: each module that makes one imported (some load only when asked)."""
    for path in _house_files():
        if path != POLICY_MODULE and "registered_cache" in path.read_text(encoding="utf-8"):
            importlib.import_module(_module(path))
    return memo.live_caches()


def test_every_declared_cache_exists_and_is_bounded_as_declared():
    live = _imported_live()
    in_memory = {p.name: p for p in memo.POLICIES if not p.name.startswith("disk:")}
    assert set(live) == set(in_memory), "a declared cache that no module makes is a stale declaration"
    for name, kept in live.items():
        assert 1 <= in_memory[name].maxsize <= 4096, name
        assert kept.cache_info().maxsize == in_memory[name].maxsize, name
    assert len({p.name for p in memo.POLICIES}) == len(memo.POLICIES)
    assert all(p.keeps and p.key and p.stale_when and p.saving for p in memo.POLICIES)


def test_an_undeclared_function_cannot_be_cached():
    def undeclared(x):
        return x

    with pytest.raises(LookupError, match="POLICIES"):
        memo.registered_cache()(undeclared)


def _size(kept) -> int:
    info = kept.cache_info()
    return getattr(info, "size", getattr(info, "currsize", None))


def test_clear_all_empties_every_cache(catalog):
    live = _imported_live()
    recommend(RecommendRequest(params=7e5, samples=6e4, epochs=4, precision="fp32", max_devices=1, kinds=["cpu"]), catalog)
    filled = [name for name, kept in live.items() if _size(kept)]
    assert "sizer.plan.layout_basis._kept" in filled and "sizer.units._parse_units" in filled
    memo.clear_all()
    assert [name for name, kept in live.items() if _size(kept)] == []


def test_a_catalog_change_gives_a_fresh_answer(tmp_path, catalog):
    # The same question against the built-in catalog and against one with a GPU rented at a hundredth
    # of a cent an hour: the cheapest row must change, not be read from the answer kept for the first.
    question = RecommendRequest(params=7e5, samples=6e4, epochs=4, precision="fp32", max_devices=1, kinds=["gpu"],
                                objective="cost")
    before = recommend(question, catalog)
    path = tmp_path / "cheap.yaml"
    template = (ROOT / "catalog" / "templates" / "device.yaml").read_text(encoding="utf-8")
    path.write_text(template.replace("0.45 USD/hour", "0.0001 USD/hour"), encoding="utf-8")
    changed = load_catalog(path)
    assert changed.key != catalog.key
    after = recommend(question, changed)
    assert before.ranked[0].device != "example-gpu" and after.ranked[0].device == "example-gpu"
    assert recommend(question, catalog).ranked[0].device == before.ranked[0].device  # and back again


def test_a_cache_named_off_is_a_plain_call():
    env = {**os.environ, memo.OFF_ENV: "sizer.results.unit_factor", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", "from sizer.results import unit_factor as f; f('hour', 's'); "
                           "f('hour', 's'); print(f.cache_info().hits, f.cache_info().maxsize)"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["0", "0"], done.stderr[-500:]


# Module-level containers that functions write are state, not caches, only where named here with why.
STATE = {
    ("sizer/memo.py", "_LIVE"): "the registry of caches itself",
    ("api/server.py", "_CLIENT_CONNECTIONS"): "open connections per client address",
    ("api/server.py", "_AWAITING_HEADERS"): "connections still sending their headers",
    ("api/server.py", "_AWAITING_BODY"): "connections past their headers still sending their body",
    ("api/deps.py", "_default_lanes"): "the execution lanes of a route called outside the middleware",
    ("sizer/units.py", "_pint_parse_units"): "pint's own parse, set once when the registry is built",
    ("sizer/diskcache.py", "_SWEPT"): "cache folders whose stale temporary files this process has pruned (once each)",
}
MUTABLE_MAKERS = {"dict", "OrderedDict", "defaultdict", "WeakValueDictionary", "WeakKeyDictionary", "set", "list"}


def _module_containers(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        maker = _name_of(value) if isinstance(value, ast.Call) else ""
        if isinstance(value, (ast.Dict, ast.Set, ast.List)) or maker in MUTABLE_MAKERS:
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _written_in_functions(tree: ast.Module, names: set[str]) -> set[str]:
    written = set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                written |= set(node.names)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
            written |= {t.value.id for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                        and t.value.id in names}
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id in names and node.func.attr in ("setdefault", "update", "append", "add", "pop", "clear"):
                written.add(node.func.value.id)
    return written


def test_no_module_keeps_a_memo_of_its_own():
    # a module-level dict a function fills, or a global a function sets, is a cache outside the policy
    found = []
    for path in _house_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(ROOT))
        found += [f"{where}: {name}" for name in sorted(_written_in_functions(tree, _module_containers(tree)))
                  if (where, name) not in STATE]
    assert found == [], "declare these as caches in sizer.memo.POLICIES, or as state in STATE with why"
