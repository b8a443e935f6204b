"""Which profile a ``--workload`` means: a file, ``mlp:`` widths, a built-in name, or a library model.

The one place the forms are told apart (the engine's job asks :func:`find_profile`; the HTTP service
asks :func:`check_served_workload` first, since over HTTP only the forms that read no file and run no torch
are taken).

>>> find_profile("VGG-16").name, find_profile("mlp:784,512,10").name
('vgg16', 'mlp:784,512,10')
"""
from __future__ import annotations

from sizer.errors import InputError
from sizer.workloads.library_profile import library_profile
from sizer.workloads.mlp_profile import is_mlp, mlp_profile
from sizer.workloads.profile import Profile, builtin_name, library_of, load_profile, profile_for
from sizer.workloads.source import FileRef


def find_profile(source: str | FileRef, seq_len: int | None = None) -> Profile:
    """The profile a workload names, at ``seq_len``.

    Parameters
    ----------
    source : str or FileRef
        A profile file (made where input entered), ``mlp:W1,W2,...``, a built-in name as forgiving
        as a model's (``VGG-16``, ``resnet-101``, ``torchvision:vgg16``), or ``torchvision:NAME``,
        ``timm:NAME``, ``hf:NAME`` of a model with no built-in profile (profiled with torch).
    seq_len : int, optional
        Tokens per sequence [token]; None takes the profile's own.

    Returns
    -------
    Profile
        Per sample, forward pass, FP32 storage.

    Raises
    ------
    InputError
        An unknown name, a malformed width list, a library that is not installed (naming how to
        install it), or a length the profile cannot give.
    """
    if isinstance(source, FileRef):
        return load_profile(source, seq_len)
    if is_mlp(source):
        return profile_for((mlp_profile(source),), seq_len)
    if isinstance(source, str) and library_of(source) is not None and builtin_name(source) is None:
        return library_profile(source, seq_len)
    return load_profile(source, seq_len)


def check_served_workload(source: str | None) -> None:
    """Refuse a workload the HTTP service does not take: it reads no file and runs no torch, so it
    takes built-in names and ``mlp:`` widths only.

    Parameters
    ----------
    source : str or None
        The request's workload; None passes.

    Raises
    ------
    InputError
        A name that is neither built in nor an ``mlp:`` width list, naming the command line for the rest.
    """
    if source is None:
        return
    if not isinstance(source, str):
        raise InputError("workload", str(source), "a built-in workload name (profile files are a command-line feature)")
    if is_mlp(source):
        mlp_profile(source)  # refuses a malformed list
        return
    if builtin_name(source) is None:
        if library_of(source) is not None:
            raise InputError("workload", source, f"a built-in workload (GET /v1/workloads lists them) or mlp:W1,W2,...; "
                                                 f"profiling a library model runs on the command line: "
                                                 f"sizer time --workload {source.strip()}")
        load_profile(source)  # the unknown-name message, with close names
