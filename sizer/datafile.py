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
failed write (a full disk, an encoding error, an interrupt) leaves the old file as it was. A
write killed before its rename leaves its temporary file; the next write of the same file removes
it (by its name, once older than :data:`TEMPORARY_MAX_AGE_S`). A dangling symbolic link is refused,
not written through: it would create a file wherever the link points.

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
import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NoReturn

from sizer.errors import InputError

if TYPE_CHECKING:
    from types import ModuleType

MAX_BYTES = 5_000_000  # default size limit of a file
MAX_DEPTH = 64  # nesting levels; the project's own files use fewer than 10
MAX_NODES = 1_000_000  # YAML nodes after expanding every alias; the whole built-in catalog has ~20,000
# Characters of a plain YAML number: the catalog's longest is about 20; Python refuses to build an
# integer of more than 4,300 digits with a ValueError, which must not reach the user as a traceback.
MAX_NUMBER_CHARS = 100
_NUMBER = re.compile(r"[-+]?(?:0[xob][0-9a-fA-F_]+|\.?[0-9][0-9_.,:eE+-]*)")



def _yaml() -> tuple[ModuleType, Any]:
    """PyYAML and its safe loader, imported when a YAML text is first read: a command that reads none (the
    catalog comes from the disk cache) does not pay for importing it at start-up (benchmarks/startup.py).
    libyaml's safe loader is ten times faster than the pure-Python one; both refuse arbitrary objects."""
    import yaml

    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def __getattr__(name: str) -> Any:  # PEP 562: ``yaml`` and ``SafeLoader`` (the loader parse_yaml uses) when first asked
    if name in ("yaml", "SafeLoader"):
        return _yaml()[name == "SafeLoader"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_text(path: str | os.PathLike[str], field: str, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` bytes.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.
    field : str
        The option or request field that named the file (``"catalog"``), named in the error.
    max_bytes : int
        The largest file accepted [B]; read with this bound, so a file that grows while it is read
        is refused too.

    Returns
    -------
    str
        The file's text.

    Raises
    ------
    InputError
        A file that is missing or unreadable, not a regular file (a device, pipe or folder), larger
        than ``max_bytes`` or not UTF-8.
    """
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


def load_yaml(path: str | os.PathLike[str], field: str, max_bytes: int = MAX_BYTES) -> Any:
    """The data of a YAML file, refused with :class:`InputError` when it breaks a limit.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.
    field : str
        The option or request field that named the file, named in the error.
    max_bytes : int
        The largest file accepted [B].

    Returns
    -------
    Any
        The document as plain data (dicts, lists, strings, numbers) from the safe loader.
    """
    return parse_yaml(read_text(path, field, max_bytes), field, str(path))


def load_json(path: str | os.PathLike[str], field: str, max_bytes: int = MAX_BYTES) -> Any:
    """The data of a JSON file, refused with :class:`InputError` when it breaks a limit.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.
    field : str
        The option or request field that named the file, named in the error.
    max_bytes : int
        The largest file accepted [B].

    Returns
    -------
    Any
        The document as plain data, with finite numbers only.
    """
    return parse_json(read_text(path, field, max_bytes), field, str(path))


def parse_yaml(text: str, field: str, where: str) -> Any:
    """YAML text checked for depth and alias expansion, then loaded with the safe loader.

    Parameters
    ----------
    text : str
        The YAML text.
    field : str
        The option or request field it came from, named in the error.
    where : str
        What the text is, for the message (its file, usually).

    Returns
    -------
    Any
        The document as plain data.

    Raises
    ------
    InputError
        Invalid YAML, nesting deeper than :data:`MAX_DEPTH`, aliases that expand to more than
        :data:`MAX_NODES` nodes, or a plain number longer than :data:`MAX_NUMBER_CHARS`.
    """
    if _flow_depth(text) > MAX_DEPTH:
        raise InputError(field, where, f"YAML nested at most {MAX_DEPTH} levels deep")
    yaml, loader = _yaml()
    try:
        _check_yaml_events(text, field, where)
        return yaml.load(text, Loader=loader)
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


@dataclass
class _OpenCollection:
    """A YAML collection whose end event has not come yet."""

    anchor: str | None
    nodes: int = 1  # expanded nodes in it so far, itself included


def _check_yaml_events(text: str, field: str, where: str) -> None:
    """Refuse YAML nested deeper than :data:`MAX_DEPTH`, whose aliases expand past :data:`MAX_NODES`
    nodes, or with an over-long plain number, from libyaml's parser events (no objects built)."""
    depth = 0
    expanded = 0  # nodes of the document with every alias replaced by what it stands for
    open_nodes: list[_OpenCollection] = []
    anchors: dict[str, int] = {}
    yaml, loader = _yaml()
    opening = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, opening):
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(field, where, f"YAML nested at most {MAX_DEPTH} levels deep")
            open_nodes.append(_OpenCollection(event.anchor))
            size = 1
        elif isinstance(event, closing):
            depth -= 1
            closed = open_nodes.pop()
            if closed.anchor is not None:
                anchors[closed.anchor] = closed.nodes
            if open_nodes:
                open_nodes[-1].nodes += closed.nodes
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
        if open_nodes and not isinstance(event, opening):
            open_nodes[-1].nodes += size


def parse_json(text: str, field: str, where: str, *, spell_nonfinite: bool = False) -> Any:
    """JSON text with finite numbers only, nested at most :data:`MAX_DEPTH` levels.

    Parameters
    ----------
    text : str
        The JSON text.
    field : str
        The option or request field it came from, named in the error.
    where : str
        What the text is, for the message (its file, usually).
    spell_nonfinite : bool, default False
        Keep ``NaN``, ``Infinity`` and overflowing numbers as the string that spells them (at most 20
        characters) instead of refusing them: for files whose writers emit them in values sizer never reads as
        numbers (transformers' config.json); a key read as a number is then refused where it is read.

    Returns
    -------
    Any
        The document as plain data.

    Raises
    ------
    InputError
        Invalid JSON, ``NaN`` or ``Infinity``, a number too large for a finite float, or nesting
        deeper than :data:`MAX_DEPTH`.
    """

    def refuse_constant(name: str) -> NoReturn:
        raise InputError(field, where, f"JSON with finite numbers only (found {name})")

    def finite_float(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            raise InputError(field, where, f"JSON with finite numbers only (found {literal[:20]})")
        return value

    def spelled_float(literal: str) -> float | str:
        value = float(literal)
        return value if math.isfinite(value) else literal[:20]

    constant: Callable[[str], Any] = str if spell_nonfinite else refuse_constant
    number: Callable[[str], Any] = spelled_float if spell_nonfinite else finite_float
    try:
        data = json.loads(text, parse_constant=constant, parse_float=number)
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
    """Levels of lists and mappings in ``data`` (0 for a scalar), counted without recursion.

    Parameters
    ----------
    data : Any
        Plain data as a JSON or YAML parser builds it.

    Returns
    -------
    int
        The deepest nesting of dicts and lists [1]; the count stops a level past :data:`MAX_DEPTH`.
    """
    deepest = 0
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        node, level = pending.pop()
        children: Iterable[Any]
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


def same_file(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (through links, ``..`` and hard links where both exist).

    Parameters
    ----------
    first, second : str or os.PathLike
        The paths to compare; either may not exist yet.

    Returns
    -------
    bool
        True where both are the same existing file, or, where one is missing, where they resolve to
        the same path.
    """
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return os.path.realpath(first) == os.path.realpath(second)


def check_writable(path: str | os.PathLike[str], field: str = "out",
                   inputs: Mapping[str, str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None] | None = None) -> None:
    """Refuse early a path :func:`write_bytes` could not write, before any work is done.

    Parameters
    ----------
    path : str or os.PathLike
        Where the command will write its answer.
    field : str
        The option that named it (``"out"``), named in the error.
    inputs : Mapping or None
        The command's own input files: field name to a path, paths, or None. Writing the answer over
        a file the command reads would lose that file.

    Raises
    ------
    InputError
        Where ``path`` is a folder, a dangling symbolic link, lies in a missing or read-only folder, or is
        one of ``inputs``.
    """
    shown = str(path)
    refuse_dangling_link(path, field)
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


def write_text(path: str | os.PathLike[str], text: str, field: str = "out") -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically (see :func:`write_bytes`).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    text : str
        Its new content.
    field : str
        The option that named the file, named in the error.

    Raises
    ------
    InputError
        Text that cannot be encoded as UTF-8 (a lone surrogate), or a path that cannot be written.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(field, str(path), f"text that can be written as UTF-8 ({error.reason})") from None
    write_bytes(path, data, field)


def write_bytes(path: str | os.PathLike[str], data: bytes, field: str = "out") -> None:
    """Write ``data`` to ``path`` atomically: the old file stays whole if anything fails.

    A symbolic link to an existing file is written through (the file it points to is replaced); a
    dangling one is refused. A target that is not a regular file (``/dev/stdout``, a pipe) is written
    to directly, as there is nothing to replace. A new file gets the usual permissions (0666 less the
    umask), a replaced one keeps its own. Temporary files of this target that killed writes left are
    removed first (:func:`prune_temporary`).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    data : bytes
        Its new content.
    field : str
        The option that named the file, named in the error.

    Raises
    ------
    InputError
        A folder, a dangling symbolic link, or a path that cannot be written (the message gives the
        system's reason).
    """
    shown = str(path)
    refuse_dangling_link(path, field)
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
        prune_temporary(target)
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


def refuse_dangling_link(path: str | os.PathLike[str], field: str = "out") -> None:
    """Refuse a path that is a symbolic link to nothing (or a loop of links).

    Writing through such a link creates a file where the link points, perhaps far from where the
    user looked; nobody means that.

    Parameters
    ----------
    path : str or os.PathLike
        Where the command will write.
    field : str
        The option that named it, named in the error.

    Raises
    ------
    InputError
        Where ``path`` is a link whose target does not exist.
    """
    if os.path.islink(path) and not os.path.exists(path):
        try:
            points = os.readlink(path)
        except OSError:
            points = "?"
        raise InputError(field, str(path), f"a file path, not a dangling symbolic link (it points to {points!r}, "
                                           "which does not exist)")


TEMPORARY_MAX_AGE_S = 3600.0  # a write takes seconds at most; a temporary file this old was left by a killed one


def prune_temporary(target: Path, max_age_s: float = TEMPORARY_MAX_AGE_S) -> None:
    """Remove the temporary files that killed writes of ``target`` left beside it: only the names
    :func:`write_bytes` gives them (``.NAME.XXXXXXXX.tmp``), only regular files of this user, only those
    older than ``max_age_s`` [s] (another process's write in progress is kept). Failures are ignored.

    Parameters
    ----------
    target : Path
        The file about to be written (its real path).
    max_age_s : float
        Age [s] past which a temporary file is a leftover.
    """
    pattern = re.compile(re.escape(f".{target.name}.") + r"[a-z0-9_]{8}\.tmp")
    oldest = time.time() - max_age_s
    owner = os.getuid() if hasattr(os, "getuid") else None  # None: no POSIX user ids (Windows)
    try:
        with os.scandir(target.parent) as entries:
            for entry in entries:
                if not pattern.fullmatch(entry.name):
                    continue
                found = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(found.st_mode) and owner in (None, found.st_uid) and found.st_mtime < oldest:
                    os.unlink(entry.path)
    except OSError:  # an unreadable folder, a file removed meanwhile: the write itself goes on
        pass


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
