"""The docstring check: public functions of the whole core (every module of ``sizer/``) are documented
the pvlib way, and every citation in the code resolves to a key of docs/references.md.

For each public function or method (name without a leading underscore, in a public class) of
``sizer/`` the docstring needs a one-line summary; a ``Parameters``
section naming every argument (``name : type``), with a unit in brackets (``[FLOP/s]``, ``[1]``)
for arguments annotated as numbers or arrays; a ``Returns`` section unless the function returns
``None``; and, where it has a ``References`` section, keys (``[seed-004-eq1]``) that exist.

Across ``sizer/``, ``api/``, ``cli/``, ``validation/`` and ``benchmarks/``, every citation in
the short forms of docs/references.md (``spec §3.8``, ``seed 004 eq. 3``, ``seed 003``,
``docs/references.md [zero]``) must name a key there. The messages say what is missing where, so
whoever adds a function can fix it from the message alone.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = ROOT / "docs" / "references.md"
DOCUMENTED = ("sizer",)  # every module of the core, subpackages included
CITING = ("sizer", "api", "cli", "validation", "benchmarks")
# annotations whose arguments carry a unit: numbers, arrays, quantities
NUMERIC = re.compile(r"\b(float|int|ndarray|NDArray|ArrayLike|Quantity)\b")
SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}\s*$", re.M)

SPEC = re.compile(r"\bspec ?§ ?(\d+(?:\.\d+)*)")
SEED_EQ = re.compile(r"\b[Ss]eed (00[1-9]) eq\. ?(\d+)(?:-(\d+))?")
SEED_SECTION = re.compile(r"\b[Ss]eed (00[1-9]) §(\d+(?:\.\d+)*)(?:-(\d+(?:\.\d+)*))?")
SEED = re.compile(r"\b[Ss]eed (00[1-9])\b(?!['’]?s? (?:eq\.|§))")
KEYED = re.compile(r"references\.md ?\[([a-z0-9.-]+)\]")
KEY_IN_REFERENCES = re.compile(r"\[([a-z0-9][a-z0-9.-]*)\]")


def reference_keys() -> set[str]:
    keys = set()
    for line in REFERENCES.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and re.fullmatch(r"[a-z0-9][a-z0-9.-]*", cells[0]) and cells[0] != "key":
            keys.add(cells[0])
    return keys


def cited_keys(text: str) -> list[str]:
    """The keys a text cites, in the short forms docs/references.md lists."""
    keys = [f"spec-{m.group(1)}" for m in SPEC.finditer(text)]
    for m in SEED_EQ.finditer(text):
        first, last = int(m.group(2)), int(m.group(3) or m.group(2))
        keys += [f"seed-{m.group(1)}-eq{n}" for n in range(first, last + 1)]
    for m in SEED_SECTION.finditer(text):
        keys += [f"seed-{m.group(1)}-{part}" for part in (m.group(2), m.group(3)) if part]
    keys += [f"seed-{m.group(1)}" for m in SEED.finditer(text)]
    keys += KEYED.findall(text)
    return keys


def sections(doc: str) -> dict[str, str]:
    """numpydoc sections by title; the text before the first one is the summary."""
    parts = SECTION.split(doc)
    found = {"Summary": parts[0]}
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        found[title.strip()] = body
    return found


def public_functions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            yield node.name, node, False
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_"):
                    yield f"{node.name}.{item.name}", item, True


def arguments(node: ast.FunctionDef, method: bool) -> list[ast.arg]:
    args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    decorators = {getattr(d, "id", getattr(d, "attr", "")) for d in node.decorator_list}
    if method and "staticmethod" not in decorators:
        args = args[1:]
    for extra in (node.args.vararg, node.args.kwarg):
        if extra is not None:
            args.append(extra)
    return args


def parameter_entry(listed: str, name: str) -> str | None:
    """The lines of a Parameters section that describe ``name`` (``a, b : float`` describes both)."""
    for entry in re.finditer(r"^(\S[^\n]*)(?:\n[ \t]+[^\n]*)*", listed, re.M):
        names = entry.group(1).split(" : ")[0]
        if name in (n.strip().lstrip("*") for n in names.split(",")):
            return entry.group(0)
    return None


def problems_of(node: ast.FunctionDef, method: bool, keys: set[str]) -> list[str]:
    doc = ast.get_docstring(node)
    if not doc:
        return ["no docstring (summary, Parameters, Returns)"]
    found = sections(doc)
    problems = []
    if not found["Summary"].strip():
        problems.append("no one-line summary before the sections")
    args = arguments(node, method)
    decorators = {getattr(d, "id", getattr(d, "attr", "")) for d in node.decorator_list}
    if args:
        listed = found.get("Parameters")
        if listed is None:
            problems.append("no 'Parameters' section (arguments: " + ", ".join(a.arg for a in args) + ")")
        else:
            for arg in args:
                entry = parameter_entry(listed, arg.arg)
                if entry is None:
                    problems.append(f"'Parameters' does not list '{arg.arg}' (as '{arg.arg} : type')")
                elif arg.annotation is not None and NUMERIC.search(ast.unparse(arg.annotation)) \
                        and "bool" != ast.unparse(arg.annotation) and not re.search(r"\[[^\]]+\]", entry):
                    problems.append(f"parameter '{arg.arg}' has no unit in brackets ([FLOP/s], [1], ...)")
    returns_none = node.returns is not None and ast.unparse(node.returns) == "None"
    if not returns_none and "property" not in decorators and "Returns" not in found and "Yields" not in found:
        problems.append("no 'Returns' section")
    if "References" in found:
        named = KEY_IN_REFERENCES.findall(found["References"]) + cited_keys(found["References"])
        if not named:
            problems.append("a 'References' section without a key such as [seed-004-eq1]")
        problems += [f"References key [{key}] is not in docs/references.md" for key in named if key not in keys]
    return problems


def documented_files():
    return sorted(p for folder in DOCUMENTED for p in (ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", documented_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_public_functions_have_pvlib_style_docstrings(path):
    keys = reference_keys()
    missing = [f"{path.relative_to(ROOT)}:{node.lineno} {name}: {problem}"
               for name, node, method in public_functions(path) for problem in problems_of(node, method, keys)]
    assert not missing, "docstrings to complete (see tests/test_docstrings.py):\n" + "\n".join(missing)


def test_every_citation_in_the_code_resolves_to_a_reference_key():
    keys = reference_keys()
    unresolved = []
    for folder in CITING:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                unresolved += [f"{path.relative_to(ROOT)}:{number}: cites '{key}', not a key of docs/references.md"
                               for key in cited_keys(line) if key not in keys]
    assert not unresolved, "\n".join(unresolved)


def test_every_reference_is_cited_by_key_somewhere():
    text = "\n".join(p.read_text(encoding="utf-8") for folder in CITING for p in (ROOT / folder).rglob("*.py"))
    cited = set(cited_keys(text)) | set(KEY_IN_REFERENCES.findall(text))
    uncited = sorted(reference_keys() - cited)
    assert not uncited, f"keys of docs/references.md that no code cites (cite or remove them): {uncited}"


@pytest.mark.parametrize("text, keys", [
    ("(spec §3.8; seed 004 eq. 3)", ["spec-3.8", "seed-004-eq3"]),
    ("seed 003 eq. 2-3 with", ["seed-003-eq2", "seed-003-eq3"]),
    ("seed 004 §3.3.1 and seed 003's 25-30 %", ["seed-004-3.3.1", "seed-003"]),
    ("docs/references.md [zero]", ["zero"]),
])
def test_citations_map_to_keys(text, keys):
    assert sorted(cited_keys(text)) == sorted(keys)


def test_the_check_names_what_is_missing():
    node = ast.parse("def f(x: float, y):\n    '''Summary.\n\n    Parameters\n    ----------\n"
                     "    x : float\n        No unit.\n    '''\n").body[0]
    problems = problems_of(node, False, {"spec-3.1"})
    assert sorted(problems) == sorted(["parameter 'x' has no unit in brackets ([FLOP/s], [1], ...)",
                                       "'Parameters' does not list 'y' (as 'y : type')", "no 'Returns' section"])
