"""Where a model or a workload profile comes from: a built-in name, or a file the command line named.

The edge decides which (the CLI from what a user typed; HTTP takes names only): the core never
guesses from a string's suffix whether to open a file. A :class:`FileRef` can only be made in
Python, never from a JSON body, so a request over HTTP cannot make the server read its disk.

>>> FileRef("config.json")
FileRef('config.json')
>>> is_file_ref(FileRef("x.yaml")), is_file_ref("llama-2-7b")
(True, False)
"""
from __future__ import annotations

import os
from typing import Annotated, Any

from pydantic import PlainSerializer, WithJsonSchema
from pydantic_core import PydanticCustomError

from sizer.units import ParsedBy

MAX_NAME_LENGTH = 300
# Workload prefixes that make a name, never a path: mlp widths and library models (sizer.workloads.profile).
NAMED_PREFIXES = ("mlp", "torchvision", "timm", "hf")


class FileRef:
    """A file path given where input enters (the CLI's ``--model config.json``, ``--workload p.yaml``)."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = str(path)

    def __repr__(self) -> str:
        return f"FileRef({self.path!r})"

    def __str__(self) -> str:
        return self.path

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileRef) and other.path == self.path

    def __hash__(self) -> int:
        return hash(("file", self.path))


def is_file_ref(value: object) -> bool:
    """Whether a request's model or workload names a file (a :class:`FileRef` the CLI made) rather than a built-in name.

    Parameters
    ----------
    value : object
        A request's ``model`` or ``workload``.

    Returns
    -------
    bool
        True for a :class:`FileRef`.
    """
    return isinstance(value, FileRef)


def _name_or_file(value: object) -> str | FileRef:
    if isinstance(value, FileRef):  # only Python code (the CLI) can pass one: JSON has no such value
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("string_type", "Input should be a valid string")
    if len(value) > MAX_NAME_LENGTH:
        raise PydanticCustomError("string_too_long", "String should have at most {max_length} characters",
                                  {"max_length": MAX_NAME_LENGTH})
    return value


# A request field naming a model or a profile: a name (the schema's string), or a FileRef the CLI made,
# written as ``file:PATH`` where a request is serialised (a cache key, a log line).
Source = Annotated[str | FileRef, ParsedBy(_name_or_file, info=False),
                   PlainSerializer(lambda value: f"file:{value.path}" if isinstance(value, FileRef) else value),
                   WithJsonSchema({"type": "string", "maxLength": MAX_NAME_LENGTH})]


def model_source(value: Any) -> Any:
    """The CLI's reading of ``--model``: a ``.json`` path or an existing file is a file, else a name.

    Parameters
    ----------
    value : Any
        The text given to ``--model`` (anything else is passed on unchanged, for the request to refuse).

    Returns
    -------
    Any
        A :class:`FileRef` for a file, else ``value`` itself.
    """
    return _file_or_name(value, (".json",))


def profile_source(value: Any) -> Any:
    """The CLI's reading of ``--workload``: a ``.yaml``/``.yml`` path or an existing file is a file, else a name;
    ``mlp:`` widths and a library model (``hf:openai/whisper-base``) are names whatever they hold.

    Parameters
    ----------
    value : Any
        The text given to ``--workload`` (anything else is passed on unchanged, for the request to refuse).

    Returns
    -------
    Any
        A :class:`FileRef` for a file, else ``value`` itself.
    """
    prefix, colon, _ = value.strip().partition(":") if isinstance(value, str) else ("", "", "")
    if colon and prefix.lower() in NAMED_PREFIXES and not (isinstance(value, str) and os.path.isfile(value.strip())):
        return value
    return _file_or_name(value, (".yaml", ".yml"))


def _file_or_name(value: Any, suffixes: tuple[str, ...]) -> Any:
    if not isinstance(value, str) or isinstance(value, FileRef):
        return value
    text = value.strip()
    if text.lower().endswith(suffixes) or os.sep in text or os.path.isfile(text):
        return FileRef(text)
    return value
