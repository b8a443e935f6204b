"""The `sizer` command line: parses options, calls the core, renders. No formula lives here."""
from __future__ import annotations

import sys

import typer

from cli import catalog_cmd, compute_cmd, memory_cmd, peak_cmd, recommend_cmd, seed003_cmd, tco_cmd, time_cmd

app = typer.Typer(name="sizer", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Which GPU, how many, how long, what cost, will it fit: sizing for neural-network training.")
app.add_typer(catalog_cmd.app, name="catalog")
for module in (peak_cmd, compute_cmd, time_cmd, memory_cmd, seed003_cmd, tco_cmd, recommend_cmd):
    module.register(app)


def main() -> None:
    """Entry point: every user error is one line on stderr and exit status 2."""
    from pydantic import ValidationError

    from sizer.errors import SizerError

    try:
        app(standalone_mode=True)
    except SizerError as error:
        sys.stderr.write(f"error: {error.message}\n")
        sys.exit(2)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        sys.stderr.write(f"error: {where}: {first['msg']}\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
