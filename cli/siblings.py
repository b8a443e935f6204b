"""The packages the command line drives beside the core: ``api`` (``sizer serve``) and ``validation``
(``sizer validate``, ``sizer profile``).

A checkout keeps api/, cli/ and validation/ as top-level folders; the wheel installs them inside the
``sizer`` package (``sizer.api``, ...) so that site-packages gets no top-level package with so common a
name (pyproject.toml). Each is therefore imported relative to where this ``cli`` package itself was
imported from, never by a fixed top-level name that could be another distribution's.
"""
from __future__ import annotations

from importlib import import_module
from types import ModuleType

_ABOVE = __package__.rpartition(".")[0]  # "sizer" when installed from the wheel, "" in a checkout


def sibling(name: str) -> ModuleType:
    """The module ``name`` (``"api.app"``) beside ``cli``: ``sizer.api.app`` installed, ``api.app`` in a checkout."""
    return import_module(f"{_ABOVE}.{name}" if _ABOVE else name)
