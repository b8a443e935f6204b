"""The validation suite's optional dependencies, and the message shown when they are missing.

torch, psutil and matplotlib come with the ``validation`` extra. They are imported lazily,
inside functions, so that ``import sizer`` and ``sizer --help`` never load torch.
"""
from __future__ import annotations

import importlib

INSTALL_COMMAND = "pip install -e '.[validation]'"
REQUIRED_MODULES = ("torch", "psutil", "matplotlib")


class MissingDependency(RuntimeError):
    """A package of the ``validation`` extra is not installed."""


def missing_modules() -> list[str]:
    """Names of the required modules that cannot be imported."""
    missing = []
    for name in REQUIRED_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def require_validation_extra() -> None:
    """Raise :class:`MissingDependency` with the install command when a package is missing."""
    missing = missing_modules()
    if missing:
        raise MissingDependency(
            f"sizer validate needs {', '.join(missing)} (the 'validation' extra); install it with: {INSTALL_COMMAND}")
