"""Models refused by name: ``catalog/model_presets/not-supported.yaml`` lists models that are no preset and
no shipped config because their architecture holds a mechanism sizer does not cost (LFM2's short
convolutions, Gemma 3n's per-layer embeddings ...) or leaves out a width no cited source states. A name
of one is refused with an :class:`~sizer.errors.InputError` naming the model's config field and the reason,
never "unknown model" and never answered as a plain decoder.

The file is read only when a name is no preset and no shipped config, or when the models are listed.

>>> refusal("lfm2-1.2b").field
'model.layer_types'
>>> refusal("llama-2-7b") is None
True
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sizer.datafile import load_yaml
from sizer.errors import CatalogError, InputError
from sizer.memo import registered_cache
from sizer.workloads.names import name_key

MAX_FILE_BYTES = 200_000
REFUSED_FILE_NAME = "not-supported.yaml"  # beside the preset files, which sizer.workloads.registry reads without it
# What sizer does cost, said after each mechanism it does not (as sizer.workloads.hf_config's refusals say it).
COSTED = ("sizer costs transformer blocks of softmax attention (full, sliding-window or multi-head latent) with a "
          "dense or mixture-of-experts FFN")


class RefusedModel(BaseModel):
    """One entry of ``catalog/model_presets/not-supported.yaml``: a hub id, its other names, the config field that
    holds what sizer lacks, and either the mechanism or the width no source states."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=3, max_length=200)  # the hub id, org/name
    aliases: list[str] = []
    field: str = Field(pattern=r"^model\.[A-Za-z_][\w.]*$")  # the config key, as hf_config's refusals name it
    mechanism: str | None = Field(None, min_length=10)  # what the model has that sizer does not cost
    unstated: str | None = Field(None, min_length=10)  # what no cited source states, that sizer would guess
    source: str = Field(min_length=10)

    @model_validator(mode="after")
    def _one_reason(self) -> RefusedModel:
        if (self.mechanism is None) == (self.unstated is None):
            raise ValueError("give exactly one of mechanism and unstated")
        return self

    @property
    def reason(self) -> str:
        """What the refusal expects instead, in the words :mod:`sizer.workloads.hf_config` uses."""
        if self.mechanism is not None:
            return f"a model without {self.mechanism}, which sizer does not cost: {COSTED} ({self.source})"
        return (f"a model whose {self.unstated} a cited source states; sizer does not guess an architecture's widths "
                f"({self.source})")

    def error(self, given: str) -> InputError:
        """The refusal of this model for the name a user gave.

        Parameters
        ----------
        given : str
            The name as given.

        Returns
        -------
        InputError
            Naming :attr:`field`, with :attr:`reason`.
        """
        return InputError(self.field, f"{given} ({self.name})" if given != self.name else given, self.reason)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    not_supported: list[RefusedModel]


def refused_file() -> Path:
    """The table of refused models, ``catalog/model_presets/not-supported.yaml`` (no preset file).

    Returns
    -------
    Path
        The file's path.
    """
    from sizer.hardware.catalog import builtin_catalog_dir

    return builtin_catalog_dir() / "model_presets" / REFUSED_FILE_NAME


@registered_cache()
def refused_models() -> tuple[RefusedModel, ...]:
    """Every entry of :func:`refused_file`, checked, read once per process.

    Returns
    -------
    tuple of RefusedModel
        In file order.

    Raises
    ------
    CatalogError
        A malformed file, or one name that stands for two entries.
    """
    path = refused_file()
    try:
        entries = _File.model_validate(load_yaml(path, "model", MAX_FILE_BYTES)).not_supported
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"models file {path}: field {where}: {first['msg']}", "model") from None
    seen: dict[str, str] = {}
    for entry in entries:
        for alias in (entry.name, *entry.aliases):
            if seen.setdefault(name_key(alias), entry.name) != entry.name:
                raise CatalogError(f"models file {path}: name {alias!r} of {entry.name} also names "
                                   f"{seen[name_key(alias)]}", "model")
    return tuple(entries)


@registered_cache()
def _index() -> dict[str, RefusedModel]:
    return {name_key(alias): entry for entry in refused_models() for alias in (entry.name, *entry.aliases)}


def refusal(name: str) -> InputError | None:
    """The refusal of a model the table lists, by hub id, short name or alias (compared by :func:`name_key`).

    Parameters
    ----------
    name : str
        A model name as given.

    Returns
    -------
    InputError or None
        The error naming the config field and the reason, or None for a name the table does not list.
    """
    entry = _index().get(name_key(name))
    return None if entry is None else entry.error(name)
