"""The one guarded reader for every YAML and JSON file the project reads, and the one writer.

Catalog files (``--catalog``, ``SIZER_CATALOG``, the built-in catalog), workload profiles
(``--workload``), calibration files (``--calibration``), validation reports (``sizer
calibrate``) and model configurations all come through here, so that a hostile or broken file
is refused with one :class:`~sizer.errors.InputError` in well under a second instead of
crashing the process or running for minutes. A file is refused when it is

- not a regular file (``/dev/zero``, a pipe, a folder) or larger than its size limit
  (``max_bytes``; read with a bound, so a file that grows while it is read is refused too);
- not UTF-8 text, or not valid YAML / JSON;
- nested deeper than :data:`MAX_DEPTH` levels (libyaml builds nested nodes recursively in C,
  and a 25,000-level file killed the process with SIGSEGV);
- YAML whose aliases expand to more than :data:`MAX_NODES` nodes (an "alias bomb" of 100 bytes
  can stand for 10⁹ nodes);
- JSON with ``NaN``, ``Infinity`` or a number too large for a finite float.

YAML is first scanned for the depth of its flow collections (``[`` and ``{`` outside quotes and
comments) by our own code, before any parser sees it: libyaml's scanner reads a flow collection
ahead of the events it emits, and from PyYAML 6.0.4 on it refuses deep ones with its own error
before the first event reaches us. The text is then read as a flat stream of parser events
(libyaml's parser keeps its own stack) to check block depth and expanded size; only then is it
built into Python objects with the safe loader, which never creates arbitrary objects.

Every file the project writes goes through :func:`write_text`: the text goes to a temporary
file in the same folder, which then replaces the target in one step (``os.replace``), so a
failed write (a full disk, an encoding error, an interrupt) leaves the old file as it was.

>>> parse_yaml("a: [1, 2]", "example", "text")
{'a': [1, 2]}
>>> parse_yaml("a: " + "[" * 100 + "]" * 100, "example", "text")
Traceback (most recent call last):
...
sizer.errors.InputError: example: got 'text'; expected YAML nested at most 64 levels deep
"""
from __future__ import annotations

import json
import math
import re
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from sizer.errors import InputError

# libyaml's safe loader is ten times faster than the pure-Python one; both refuse arbitrary objects.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_BYTES = 5_000_000  # default size limit of a file
MAX_DEPTH = 64  # nesting levels; the project's own files use fewer than 10
MAX_NODES = 1_000_000  # YAML nodes after expanding every alias; the whole built-in catalog has ~20,000
# Characters of a plain YAML number: the catalog's longest is about 20; Python refuses to build an
# integer of more than 4,300 digits with a ValueError, which must not reach the user as a traceback.
MAX_NUMBER_CHARS = 100
_NUMBER = re.compile(r"[-+]?(?:0[xob][0-9a-fA-F_]+|\.?[0-9][0-9_.,:eE+-]*)")

_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def read_text(path: str | os.PathLike, field: str, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` bytes."""
    shown = str(path)
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait forever for a writer
        # before the regular-file check below could refuse it.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise InputError(field, shown, "a regular file (not a device, pipe or folder)")
            data = handle.read(max_bytes + 1)
    except IsADirectoryError:
        raise InputError(field, shown, "a regular file (not a device, pipe or folder)") from None
    except OSError as error:
        raise InputError(field, shown, f"a readable file ({error.strerror or error.__class__.__name__})") from None
    if len(data) > max_bytes:
        raise InputError(field, shown, f"a file of at most {max_bytes:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(field, shown, f"UTF-8 text (byte {error.start} is not)") from None


def load_yaml(path: str | os.PathLike, field: str, max_bytes: int = MAX_BYTES) -> Any:
    """The data of a YAML file, refused with :class:`InputError` when it breaks a limit."""
    return parse_yaml(read_text(path, field, max_bytes), field, str(path))


def load_json(path: str | os.PathLike, field: str, max_bytes: int = MAX_BYTES) -> Any:
    """The data of a JSON file, refused with :class:`InputError` when it breaks a limit."""
    return parse_json(read_text(path, field, max_bytes), field, str(path))


def parse_yaml(text: str, field: str, where: str) -> Any:
    """YAML text checked for depth and alias expansion, then loaded with the safe loader.

    ``where`` names the text in messages (its file, usually).
    """
    if _flow_depth(text) > MAX_DEPTH:
        raise InputError(field, where, f"YAML nested at most {MAX_DEPTH} levels deep")
    try:
        _check_yaml_events(text, field, where)
        return yaml.load(text, Loader=SafeLoader)
    except yaml.YAMLError as error:
        raise InputError(field, where, f"valid YAML ({_one_line(error)})") from None
    except RecursionError:
        raise InputError(field, where, f"YAML nested at most {MAX_DEPTH} levels deep") from None
    except ValueError as error:  # a number the constructor cannot build, in a form the scan above missed
        raise InputError(field, where, f"valid YAML ({_one_line(error)})") from None


# One token of YAML text that matters for flow depth: a bracket, a quoted scalar (whose brackets do
# not count) or a comment (likewise). Anything else is skipped by the regex engine in C.
_FLOW_TOKEN = re.compile(r"""[\[\]{}]|"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|#[^\n]*""")


def _flow_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in ``text``, quoted scalars and comments skipped.

    An apostrophe or ``#`` inside a plain scalar (``it's``, ``a#b``) may hide brackets that
    follow it from this count; such a file still meets libyaml's own limit, and its error is
    refused as invalid YAML, so the count only decides which of our two messages is given.
    """
    depth = deepest = 0
    for match in _FLOW_TOKEN.finditer(text):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _check_yaml_events(text: str, field: str, where: str) -> None:
    depth = 0
    expanded = 0  # nodes of the document with every alias replaced by what it stands for
    open_nodes: list[list] = []  # per open collection: its anchor and its expanded node count
    anchors: dict[str, int] = {}
    for event in yaml.parse(text, Loader=SafeLoader):
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(field, where, f"YAML nested at most {MAX_DEPTH} levels deep")
            open_nodes.append([event.anchor, 1])
            size = 1
        elif isinstance(event, _CLOSE):
            depth -= 1
            anchor, count = open_nodes.pop()
            if anchor is not None:
                anchors[anchor] = count
            if open_nodes:
                open_nodes[-1][1] += count
            continue
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            # plain scalars only (libyaml reports their style as "", PyYAML as None): quoted ones are strings
            if not event.style and len(event.value) > MAX_NUMBER_CHARS and _NUMBER.fullmatch(event.value):
                raise InputError(field, where, f"YAML numbers of at most {MAX_NUMBER_CHARS} characters "
                                               f"(found one of {len(event.value):,})")
            if event.anchor is not None:
                anchors[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            size = anchors.get(event.anchor, 1)
        else:
            continue
        expanded += size
        if expanded > MAX_NODES:
            raise InputError(field, where, f"YAML whose aliases expand to at most {MAX_NODES:,} nodes")
        if open_nodes and not isinstance(event, _OPEN):
            open_nodes[-1][1] += size


def parse_json(text: str, field: str, where: str) -> Any:
    """JSON text with finite numbers only, nested at most :data:`MAX_DEPTH` levels."""

    def refuse_constant(name: str):
        raise InputError(field, where, f"JSON with finite numbers only (found {name})")

    def finite_float(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            raise InputError(field, where, f"JSON with finite numbers only (found {literal[:20]})")
        return value

    try:
        data = json.loads(text, parse_constant=refuse_constant, parse_float=finite_float)
    except RecursionError:
        raise InputError(field, where, f"JSON nested at most {MAX_DEPTH} levels deep") from None
    except ValueError as error:  # JSONDecodeError, and integers with too many digits
        if isinstance(error, InputError):
            raise
        raise InputError(field, where, f"valid JSON ({_one_line(error)})") from None
    if nesting_depth(data) > MAX_DEPTH:
        raise InputError(field, where, f"JSON nested at most {MAX_DEPTH} levels deep")
    return data


def nesting_depth(data: Any) -> int:
    """Levels of lists and mappings in ``data`` (0 for a scalar), counted without recursion."""
    deepest = 0
    pending = [(data, 1)]
    while pending:
        node, level = pending.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break
        pending.extend((child, level + 1) for child in children)
    return deepest


def _one_line(error: Exception) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 160 else text[:157] + "..."


def same_file(first: str | os.PathLike, second: str | os.PathLike) -> bool:
    """Whether two paths name one file (through links, ``..`` and hard links where both exist)."""
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return os.path.realpath(first) == os.path.realpath(second)


def check_writable(path: str | os.PathLike, field: str = "out",
                   inputs: Mapping[str, str | os.PathLike | Iterable[str | os.PathLike] | None] | None = None) -> None:
    """Refuse early a path :func:`write_bytes` could not write: a folder, or one in a missing or read-only folder,
    or one of the command's own ``inputs`` (field name to path or paths): writing the answer over a file the
    command reads would lose that file."""
    shown = str(path)
    for name, given in (inputs or {}).items():
        paths = [given] if isinstance(given, (str, os.PathLike)) else list(given or [])
        for source in paths:
            if source is not None and str(source) and same_file(path, source):
                raise InputError(field, shown, f"a file other than the {name} file the command reads ({source}): "
                                               "writing the answer there would overwrite it")
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise InputError(field, shown, "a file path, not a folder")
    if not target.parent.is_dir():
        raise InputError(field, shown, "a file path in an existing folder")
    if not os.access(target.parent, os.W_OK | os.X_OK) and not (target.exists() and not target.is_file()):
        raise InputError(field, shown, "a file path in a folder you can write to")


def write_text(path: str | os.PathLike, text: str, field: str = "out") -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically (see :func:`write_bytes`)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(field, str(path), f"text that can be written as UTF-8 ({error.reason})") from None
    write_bytes(path, data, field)


def write_bytes(path: str | os.PathLike, data: bytes, field: str = "out") -> None:
    """Write ``data`` to ``path`` atomically: the old file stays whole if anything fails.

    A symbolic link is written through (the file it points to is replaced); a target that is
    not a regular file (``/dev/stdout``, a pipe) is written to directly, as there is nothing to
    replace. A new file gets the usual permissions (0666 less the umask), a replaced one keeps its own.
    """
    shown = str(path)
    target = Path(os.path.realpath(path))
    try:
        existing = target.stat()
    except FileNotFoundError:
        existing = None
    except OSError as error:
        raise InputError(field, shown, f"a writable file path ({error.strerror})") from None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise InputError(field, shown, "a file path, not a folder")
    try:
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            with open(target, "wb") as out:
                out.write(data)
            return
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, stat.S_IMODE(existing.st_mode) if existing is not None else 0o666 & ~_umask())
            os.replace(temporary, target)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
    except OSError as error:
        raise InputError(field, shown, f"a writable file path ({error.strerror or error.__class__.__name__})") from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
