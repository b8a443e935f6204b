"""`sizer profile`: profile a torch model layer by layer into a workload YAML (needs the validation extra)."""
from __future__ import annotations

import inspect
import shlex
import sys
from typing import Annotated, Optional

import typer

from . import output

MAX_SHAPE_DIMENSIONS = 8
MAX_SAMPLE_ELEMENTS = 100_000_000  # 400 MB of FP32 per sample: more than any model profiled here needs


def _shape(text: str) -> list[int]:
    """``3,224,224`` as a list of whole positive numbers."""
    from sizer.facade import InputError

    parts = [part.strip() for part in text.split(",")]
    expected = (f"1 to {MAX_SHAPE_DIMENSIONS} whole positive numbers, comma-separated, e.g. 3,224,224, "
                f"with at most {MAX_SAMPLE_ELEMENTS:,} elements in all")
    if not 1 <= len(parts) <= MAX_SHAPE_DIMENSIONS or not all(part.isascii() and part.isdigit() and len(part) <= 9 for part in parts):
        raise InputError("input_shape", text, expected)
    shape = [int(part) for part in parts]
    elements = 1
    for size in shape:
        elements *= size
    if min(shape) < 1 or elements > MAX_SAMPLE_ELEMENTS:
        raise InputError("input_shape", text, expected)
    return shape


def profile(target: Annotated[str, typer.Argument(help="MODULE:FACTORY returning a torch model, e.g. validation.model_zoo:resnet50; "
                                                     "or a library's model: torchvision:NAME, timm:NAME, hf:NAME.")],
            out: Annotated[str, typer.Option("--out", help="YAML file to write.")],
            input_shape: Annotated[Optional[str], typer.Option("--input-shape", help="Shape of one sample, e.g. 3,224,224 (random floats).")] = None,
            seq_len: Annotated[Optional[int], typer.Option("--seq-len", min=1, max=1_000_000, help="Sequence length, passed to the factory.")] = None,
            batch: Annotated[int, typer.Option("--batch", min=1, max=64, help="Samples in the profiled batch.")] = 2,
            name: Annotated[Optional[str], typer.Option("--name", help="Workload name (default: the factory's).")] = None,
            description: Annotated[Optional[str], typer.Option("--description", help="One line about the model.")] = None) -> None:
    """Count FLOP and bytes per layer with torch's FLOP counter and a dispatch-level byte count."""
    from sizer.facade import InputError, check_writable, write_text

    with output.progress("profile") as bar:  # on standard error; loading torch alone takes seconds
        task = bar.add_task("loading torch", total=4)
        from .siblings import sibling

        profiler = sibling("validation.profiler")
        try:
            profiler.require_torch()
        except ImportError:
            raise InputError("profile", target, "the validation extra installed: pip install -e '.[validation]'") from None
        import yaml
        load_factory, profile_model = profiler.load_factory, profiler.profile_model

        library_models = sibling("validation.library_models")
        library, _, library_name = target.partition(":")
        from_library = library in library_models.LIBRARIES
        if not from_library:
            check_writable(out, "out", {"target": _module_file(profiler.own_module(target))})  # before minutes of profiling
        bar.update(task, description=f"building {output.terminal_text(target)}", advance=1)  # a path may hold [..]
        shape = _shape(input_shape) if input_shape else None
        try:
            factory = _library_factory(library_models, library, library_name) if from_library else load_factory(target)
        except InputError:
            raise
        except (ImportError, AttributeError, TypeError, ValueError) as error:
            raise InputError("target", target, f"an importable MODULE:FACTORY ({error})") from None
        if not callable(factory):
            raise InputError("target", target, "MODULE:FACTORY naming a function or class that builds a torch model")
        try:
            parameters = inspect.signature(factory).parameters
        except (TypeError, ValueError):
            parameters = {}
        kwargs = {"seq_len": seq_len} if seq_len is not None and "seq_len" in parameters else {}
        library_source = {"source": target, "versions": library_models.library_versions(library)} if from_library else {}
        if seq_len is not None and not kwargs:
            raise InputError("seq_len", seq_len, f"a factory that takes seq_len ({target} does not)")
        command = "sizer profile " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if len(sys.argv) > 2 else f"sizer profile {target}"
        model = profiler.build_model(factory, kwargs, target=target, seq_len=seq_len)
        bar.update(task, description="counting FLOP and bytes", advance=1)
        try:
            example = profiler.example_input(model, shape, batch)
            result = profile_model(model, example, name=name or target.split(":")[-1].replace("_", "-"),
                                   description=description or (inspect.getdoc(factory) or target).splitlines()[0],
                                   sample=getattr(model, "sample", "sequence" if seq_len else "sample"),
                                   seq_len=getattr(model, "seq_len", seq_len), generated_by=command, **library_source)
        except (RuntimeError, ValueError, MemoryError) as error:  # torch's shape mismatches, batch-norm of one value, failed allocations
            raise InputError("input_shape", input_shape, f"an input the model accepts and memory can hold ({_first_line(error)})") from None
        bar.update(task, description=f"writing {out}", advance=1)
        write_text(out, f"# Generated by: {command}\n# Regenerate with the same command; do not edit by hand.\n"
                   + yaml.safe_dump(result, sort_keys=False, width=120))
        bar.update(task, description=f"wrote {out}", advance=1)
    total = sum(layer["forward_flops"] for layer in result["layers"])
    params = sum(layer["params"] for layer in result["layers"])
    output.say(f"{out}: {len(result['layers'])} layers, {output.qty(output.Value(total, 'FLOP'))} forward per "
               f"{result['sample']}, {output.count(params)} parameters")


def _library_factory(library_models, library: str, name: str):
    """A factory of ``name`` from ``library`` (``torchvision``, ``timm``, ``hf``), its package checked first."""
    from importlib.util import find_spec

    from sizer.facade import InputError

    package = library_models.LIBRARIES[library]
    if find_spec(package) is None:
        raise InputError("target", f"{library}:{name}", f"the {package} package installed beside torch (pip install {package})")
    if not name:
        raise InputError("target", f"{library}:", f"{library}:NAME, a model name of {package}")

    def factory(seq_len: int | None = None):
        try:
            return library_models.build(library, name, seq_len)
        except (ValueError, KeyError, OSError, RuntimeError) as error:  # an unknown name, a config not to be had
            raise InputError("target", f"{library}:{name}", f"a model name {package} knows ({_first_line(error)})") from None

    factory.__doc__ = f"{name} ({package} {library_models.library_versions(library).get(package, '')}, random weights)"
    return factory


def _module_file(target: str) -> str | None:
    """The source file of MODULE in MODULE:FACTORY, where one is found (the profile must not overwrite it)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(target.split(":")[0])
    except (ImportError, ValueError, AttributeError):
        return None
    return spec.origin if spec is not None and spec.origin and spec.has_location else None


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines() or [error.__class__.__name__]
    return lines[0][:200]


def register(app: typer.Typer) -> None:
    app.command()(profile)
