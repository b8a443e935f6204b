"""The ``emit`` field of a request: a tool's name, checked where the request is built."""
from __future__ import annotations

from typing import TYPE_CHECKING

from sizer.choices import checked_name
from sizer.launch.tools import tool_named

# To the type checker a str (mypy cannot read a type built at run time; sizer.choices does the same).
if TYPE_CHECKING:
    EmitName = str
else:
    EmitName = checked_name(tool_named)
