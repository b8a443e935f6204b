"""Each fixed list of names is defined once (ARCHITECTURE.md's invariants, issue 41): no second literal copy of a
vocabulary in sizer/, api/, cli/ or the page, and no choice compared as a string outside the module defining it.

Issue 41 found two wrong answers from vocabularies typed twice: sizer/serving/under_load.py listed 3 of the GGUF
mixes sizer.runtimes.gguf knows (the others fell to tensor parallelism), and sizer/plan/suggestions.py compared the
runtime to "llama.cpp" (so ollama, its alias, was offered FP8 KV caches llama.cpp refuses). These scans read the
source: a literal tuple, list, set or ``Literal[...]`` holding two names of one vocabulary outside the module that
defines it is a second copy; a comparison of a field that holds a choice (``kind``, ``split``, ``runtime`` ...) with
one of its names written as a string is a choice compared as text.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from sizer.choices import PRICINGS, DeviceKind, Objective, ServingObjective, Split
from sizer.runtimes import registry
from sizer.runtimes.gguf import GGUF_MIXES
from sizer.simulator.traffic import LENGTH_DISTRIBUTIONS

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("sizer", "api", "cli")
PAGE = ROOT / "api" / "static"


@dataclass(frozen=True)
class Vocabulary:
    """A fixed list of names: its names (read from its definition), the modules that define it (path prefixes), and
    the names of the fields and variables that hold one of its choices (empty: its comparisons are not scanned)."""

    names: frozenset[str]
    home: tuple[str, ...]
    holders: frozenset[str] = frozenset()


# Pricing is a Literal (sizer.choices.Pricing): its comparisons are checked by mypy's strict equality, not here.
VOCABULARIES = {
    "device kinds": Vocabulary(frozenset(k.value for k in DeviceKind), ("sizer/choices.py",),
                               frozenset({"kind", "kinds", "device_kind", "runtime_kind"})),
    "splits": Vocabulary(frozenset(k.value for k in Split), ("sizer/choices.py",), frozenset({"split"})),
    "prices": Vocabulary(frozenset(PRICINGS), ("sizer/choices.py",)),
    "training objectives": Vocabulary(frozenset(k.value for k in Objective), ("sizer/choices.py",), frozenset({"objective"})),
    "serving objectives": Vocabulary(frozenset(k.value for k in ServingObjective), ("sizer/choices.py",), frozenset({"objective"})),
    "GGUF mixes": Vocabulary(frozenset(m.lower() for m in GGUF_MIXES), ("sizer/runtimes/gguf.py",),
                             frozenset({"weights", "mix", "gguf_mix"})),
    "runtimes": Vocabulary(frozenset(registry()) | {r.name for r in registry().values()}, ("sizer/runtimes/",),
                           frozenset({"runtime", "engine", "local", "chosen"})),
    "length sets": Vocabulary(frozenset(LENGTH_DISTRIBUTIONS), ("sizer/simulator/traffic.py",),
                              frozenset({"lengths"})),
}
# Literal lists that share names with a vocabulary but are another list, each with the reason.
OTHER_LISTS = {
    ("sizer/runtimes/device_class.py", "device kinds"): "the classes local kernels are fitted per (nvidia-consumer, "
                                                        "apple, cpu ...): a vocabulary of its own",
    ("sizer/hardware/variants.py", "device kinds"): "words a chip's name may hold beside it (apple, gpu, unified ...)",
    ("cli/validate_cmd.py", "device kinds"): "the validation suites (cpu, gpu) and torch's devices",
    ("sizer/launch/llama_cpp.py", "runtimes"): "the launch tool's own spellings (sizer.launch.tools is its registry)",
    ("sizer/launch/trtllm.py", "runtimes"): "the launch tool's own spellings (sizer.launch.tools is its registry)",
}


def _strings(node: ast.AST | None) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _holders(node: ast.AST) -> set[str]:
    """The names a compared expression is read through: ``request.split`` -> {request, split}; ``s["split"]`` and
    ``fields.get("runtime")`` -> the key too."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif isinstance(sub, ast.Subscript):
            found.update(_strings(sub.slice))
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "get" and sub.args:
            found.update(_strings(sub.args[0]))
    return found


def _at_home(path: str, vocabulary: Vocabulary) -> bool:
    return any(path == home or (home.endswith("/") and path.startswith(home)) for home in vocabulary.home)


def copies(path: str, source: str) -> list[str]:
    """Literal lists in ``source`` holding two or more names of one vocabulary defined elsewhere."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            names = _strings(node.slice)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = _strings(node)
        else:
            continue
        for label, vocabulary in VOCABULARIES.items():
            hits = sorted(set(names) & vocabulary.names)
            if len(hits) >= 2 and not _at_home(path, vocabulary) and (path, label) not in OTHER_LISTS:
                found.append(f"{path}:{node.lineno} {label}: {hits}")
    return sorted(set(found))  # a Literal's names are its tuple's too: said once


def compared(path: str, source: str) -> list[str]:
    """Comparisons in ``source`` of a field holding a choice with one of its names written as a string."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        names = {name for side in sides for name in _strings(side)}
        holders = set().union(*(_holders(side) for side in sides if not _strings(side)))
        for label, vocabulary in VOCABULARIES.items():
            if names & vocabulary.names and holders & vocabulary.holders and not _at_home(path, vocabulary):
                found.append(f"{path}:{node.lineno} {label}: {ast.unparse(node)}")
    return found


def _python_files() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
            for folder in SOURCES for p in sorted((ROOT / folder).rglob("*.py"))]


def test_the_vocabularies_are_read_from_their_definitions():
    # the scans below are only as good as these sets: each is its definition's, not a list written here
    assert VOCABULARIES["device kinds"].names == {"gpu", "accelerator", "cpu", "apple"}
    assert {"q5_k_m", "q6_k", "iq4_xs", "q4_k_m"} <= VOCABULARIES["GGUF mixes"].names
    assert {"llama.cpp", "ollama", "mlx", "vllm"} <= VOCABULARIES["runtimes"].names
    assert len(VOCABULARIES["length sets"].names) == len(LENGTH_DISTRIBUTIONS) >= 2


def test_the_scans_find_what_issue_41_found():
    # the two wrong answers, as they were written: each scan must find its own
    assert copies("sizer/serving/under_load.py", 'GGUF = ("q4_0", "q4_k_m", "q8_0")')
    assert compared("sizer/plan/suggestions.py", 'gguf = str(fields.get("runtime", "")).lower() == "llama.cpp"')
    assert compared("sizer/plan/launch_answer.py", 'if local.name != "llama.cpp": pass')
    assert compared("sizer/plan/suggestions.py", 'if request.runtime == "llama.cpp": pass')
    assert compared("sizer/serving/estimate.py", 'if device.kind == "cpu": pass')
    assert compared("sizer/local/machine.py", 'if device_kind(device) in ("apple", "cpu"): pass')
    assert compared("sizer/serving/load_search.py", 'x = s["split"] == "layer"')
    assert copies("api/routers/catalog.py", 'def f(kind: Literal["gpu", "accelerator", "cpu"] | None = None): ...')
    # at home, and another list that shares a name, are not copies
    assert copies("sizer/choices.py", 'X = ("tensor", "layer")') == []
    assert compared("sizer/engine/devices.py", 'y = unit == "tensor"') == []


def test_no_vocabulary_is_written_out_a_second_time():
    found = [hit for path, source in _python_files() for hit in copies(path, source)]
    assert not found, "derive these from the vocabulary's definition:\n" + "\n".join(found)


def test_no_choice_is_compared_as_a_string_outside_its_module():
    found = [hit for path, source in _python_files() for hit in compared(path, source)]
    assert not found, "compare the members (or ask the registry), not the names:\n" + "\n".join(found)


def _page_lists() -> list[tuple[str, list[str]]]:
    """Every hard-coded list of the page: each select's option values (a value, else its text) and each JS array."""
    lists = []
    for page in sorted(PAGE.glob("*.html")):
        text = page.read_text(encoding="utf-8")
        for select in re.findall(r"<select\b.*?</select>", text, re.S):
            options = re.findall(r'<option(?:\s+value="([^"]*)")?[^>]*>([^<]*)</option>', select)
            lists.append((f"{page.name}: {select[:60]}", [value or label.strip() for value, label in options]))
    for script in sorted(PAGE.glob("*.js")):
        text = script.read_text(encoding="utf-8")
        for array in re.findall(r"\[[^\[\]]*\]", text):
            quoted = re.findall(r'"([^"\\]*)"|\'([^\'\\]*)\'', array)
            lists.append((f"{script.name}: {array[:60]}", [double or single for double, single in quoted]))
    return lists


def test_the_page_hard_codes_no_list_of_choices():
    # the page fills its selects from GET /v1/choices (api/static/format.js fillChoices)
    found = [f"{where} {label}: {sorted(set(names) & v.names)}" for where, names in _page_lists()
             for label, v in VOCABULARIES.items() if len(set(names) & v.names) >= 2]
    assert not found, "take these from /v1/choices (data-choices=...):\n" + "\n".join(found)


@pytest.mark.parametrize("select, listed", [("catalog.html", "device_kinds"), ("index.html", "price_bases"),
                                            ("index.html", "objectives"), ("index.html", "runtimes"),
                                            ("index.html", "weights"), ("index.html", "lengths")])
def test_the_page_asks_the_api_for_its_lists(select, listed):
    assert f'data-choices="{listed}"' in (PAGE / select).read_text(encoding="utf-8")
