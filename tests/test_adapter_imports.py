"""cli/ and api/ reach the core through sizer.facade and sizer.schemas only (issue 41 item 2; ARCHITECTURE.md's API
boundary): every import statement of the two folders is read, function-level and type-only ones included."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ("api", "cli")
ALLOWED = ("sizer.facade", "sizer.schemas")


def _core_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of each import of the core (``sizer``...) in ``tree``; relative imports are the folder's own."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "sizer":  # `from sizer import facade`: each name is a module
                found += [(node.lineno, f"sizer.{alias.name}") for alias in node.names]
            elif node.module.startswith("sizer."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "sizer"]
    return found


def _allowed(module: str) -> bool:
    return any(module == door or module.startswith(door + ".") for door in ALLOWED)


def _bypasses() -> tuple[list[str], int]:
    bad, seen = [], 0
    for folder in ADAPTERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, module in _core_imports(ast.parse(path.read_text())):
                seen += 1
                if not _allowed(module):
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return bad, seen


def test_cli_and_api_import_the_core_through_the_facade_and_the_schemas_only():
    bad, seen = _bypasses()
    assert seen > 50  # the two folders do import the core: the scan reads their imports
    assert bad == []


def test_the_boundary_check_finds_a_bypass_inside_a_function():
    code = ast.parse("import sizer.facade\nfrom sizer.schemas.time_and_memory import TimeRequest\nfrom sizer import facade\n"
                     "def f():\n    from sizer.memo import registered_cache\n    import sizer.units\n")
    found = _core_imports(code)
    assert [m for _, m in found if not _allowed(m)] == ["sizer.memo", "sizer.units"]
    assert len(found) == 5
