"""A workload's layers as arrays: the rows of the roofline.

Identical layers (the blocks of a transformer) are folded into one row with a multiplicity, so
a 96-block model costs the engine as much as a one-block model.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import

    from sizer.workloads.profile import Layer, Profile  # a table kept on disk is read without the profile models

MATRIX, CONV, VECTOR, ATTENTION = 0, 1, 2, 3  # the unit a layer's FLOP run on (columns of DeviceTable.rates)


def unit_of(kind: str) -> int:
    """The unit a layer kind's FLOP run on.

    Parameters
    ----------
    kind : str
        A profile layer kind (``linear``, ``conv``, ``attention``, ``norm``, ...).

    Returns
    -------
    int
        ``CONV`` for convolutions, ``ATTENTION`` for attention scores (the matrix unit, but at the
        16-bit rate under FP8 training), ``MATRIX`` for the other matrix kinds, else ``VECTOR``.
    """
    from sizer.workloads.profile import MATRIX_KINDS  # where a profile is folded, so already imported

    if kind == "conv":
        return CONV
    if kind == "attention":
        return ATTENTION
    return MATRIX if kind in MATRIX_KINDS else VECTOR


# eq and repr left out: arrays have no truth value to compare by, nor a readable repr (and each generated
# method costs start-up: Python 3.11 compiles them one by one)
@dataclass(frozen=True, eq=False, repr=False)
class LayerTable:
    """Per distinct layer, per sample, forward pass, FP32 storage (the profile convention)."""

    name: str
    sample: str  # what one sample is: "sequence", "image", "sample"
    seq_len: int | None
    kinds: tuple[str, ...]
    unit: npt.NDArray[np.int64]  # MATRIX, CONV or VECTOR
    forward_flops: npt.NDArray[np.float64]
    bytes: npt.NDArray[np.float64]
    params: npt.NDArray[np.float64]
    activation_bytes: npt.NDArray[np.float64]
    kernels: npt.NDArray[np.float64]
    multiplicity: npt.NDArray[np.float64]
    layer_count: int  # layers before folding
    source: str
    trained: npt.NDArray[np.bool_] | None = None  # bool per row where only some rows are trained (LoRA adapters); None: all
    expert: npt.NDArray[np.bool_] | None = None  # bool per row: routed experts of a mixture (split over EP ranks); None: none

    @functools.cached_property
    def content_key(self) -> str:
        """A digest of every figure of the table (not its name or source), worked out once: what a
        cache keys a table by (:mod:`sizer.memo`).

        Returns
        -------
        str
            Hexadecimal digest; equal for tables with equal figures.
        """
        digest = hashlib.blake2b(digest_size=16)
        for f in dataclasses.fields(self):
            if f.name not in ("name", "source"):
                part = getattr(self, f.name)
                digest.update(f.name.encode())
                digest.update(np.ascontiguousarray(part).tobytes() if isinstance(part, np.ndarray) else repr(part).encode())
        return digest.hexdigest()

    @property
    def expert_rows(self) -> npt.NDArray[np.bool_]:
        """True for every row of routed-expert work (a mixture of experts)."""
        return np.zeros(len(self.unit), dtype=bool) if self.expert is None else self.expert

    @property
    def expert_params(self) -> float:
        """Parameters of the routed experts (held ``1/ep`` per expert-parallel rank)."""
        return float((self.params * self.expert_rows) @ self.multiplicity)

    @property
    def trained_rows(self) -> npt.NDArray[np.bool_]:
        """Which rows' weights the optimizer updates.

        Returns
        -------
        numpy.ndarray of bool
            True per trained row (every row unless the table has a frozen part).
        """
        return np.ones(len(self.unit), dtype=bool) if self.trained is None else self.trained

    @property
    def total_params(self) -> float:
        """Parameters of all layers, multiplicities included.

        Returns
        -------
        float
            Parameters [1].
        """
        return float(self.params @ self.multiplicity)

    @property
    def total_forward_flops(self) -> float:
        """Forward FLOP of one sample through all layers.

        Returns
        -------
        float
            FLOP per sample [FLOP].
        """
        return float(self.forward_flops @ self.multiplicity)

    @property
    def total_activation_bytes(self) -> float:
        """Activation bytes one sample keeps through all layers, at FP32 storage.

        Returns
        -------
        float
            Bytes per sample [B].
        """
        return float(self.activation_bytes @ self.multiplicity)


def fold_layers(profile: Profile, mark: Callable[[Layer], bool] | None = None) -> tuple[LayerTable, npt.NDArray[np.bool_]]:
    """Fold a profile's identical layers into rows with a multiplicity, keeping marked layers apart.

    Parameters
    ----------
    profile : Profile
        Layers per sample, forward pass, FP32 storage [FLOP, B, count].
    mark : callable, optional
        A per-layer flag that must survive folding (serving: an expert layer of a mixture of
        experts); layers that differ only in their mark stay in separate rows.

    Returns
    -------
    table : LayerTable
        One row per distinct layer.
    marks : numpy.ndarray
        The mark of each row [bool].

    References
    ----------
    [roofline]
    """
    rows: dict[tuple[str, float, float, float, float, float, bool, bool], int] = {}
    for layer in profile.layers:
        key = (layer.kind, layer.forward_flops, layer.bytes, layer.params, layer.activation_bytes, layer.kernels,
               layer.expert, bool(mark(layer)) if mark is not None else False)
        rows[key] = rows.get(key, 0) + 1
    keys = list(rows)

    def column(i: int) -> npt.NDArray[np.float64]:
        return np.asarray([k[i] for k in keys], dtype=float)

    table = LayerTable(name=profile.name, sample=profile.sample, seq_len=profile.seq_len,
                       kinds=tuple(k[0] for k in keys), unit=np.asarray([unit_of(k[0]) for k in keys], dtype=np.int64),
                       forward_flops=column(1), bytes=column(2), params=column(3), activation_bytes=column(4),
                       kernels=column(5), multiplicity=np.asarray(list(rows.values()), dtype=float),
                       layer_count=len(profile.layers), source=profile.generated_by,
                       expert=np.asarray([k[6] for k in keys], dtype=bool) if any(k[6] for k in keys) else None)
    return table, np.asarray([k[7] for k in keys], dtype=bool)


def layer_table(profile: Profile) -> LayerTable:
    """Fold a profile's identical layers into rows with a multiplicity (:func:`fold_layers`, no marks).

    Parameters
    ----------
    profile : Profile
        Per-layer forward FLOP, bytes, parameters, activation bytes and kernels per sample.

    Returns
    -------
    LayerTable
        One row per distinct layer, FLOP [FLOP], bytes [B] and parameters [1] per sample.

    References
    ----------
    [roofline]
    """
    return fold_layers(profile)[0]


def with_trained_rows(frozen: LayerTable, trained: LayerTable) -> LayerTable:
    """A frozen table's rows followed by a trained table's (a fine-tuned base and its adapters).

    Parameters
    ----------
    frozen : LayerTable
        Rows whose weights are not updated.
    trained : LayerTable
        Rows the optimizer updates (LoRA adapters).

    Returns
    -------
    LayerTable
        Both, with ``trained`` marking the second part.
    """
    return LayerTable(name=frozen.name, sample=frozen.sample, seq_len=frozen.seq_len, kinds=frozen.kinds + trained.kinds,
                      unit=np.concatenate([frozen.unit, trained.unit]),
                      forward_flops=np.concatenate([frozen.forward_flops, trained.forward_flops]),
                      bytes=np.concatenate([frozen.bytes, trained.bytes]),
                      params=np.concatenate([frozen.params, trained.params]),
                      activation_bytes=np.concatenate([frozen.activation_bytes, trained.activation_bytes]),
                      kernels=np.concatenate([frozen.kernels, trained.kernels]),
                      multiplicity=np.concatenate([frozen.multiplicity, trained.multiplicity]),
                      layer_count=frozen.layer_count + trained.layer_count, source=frozen.source,
                      trained=np.concatenate([np.zeros(len(frozen.unit), dtype=bool), np.ones(len(trained.unit), dtype=bool)]),
                      expert=None if frozen.expert is None and trained.expert is None
                      else np.concatenate([frozen.expert_rows, trained.expert_rows]))
