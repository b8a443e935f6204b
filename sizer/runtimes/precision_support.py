"""Which serving engine runs which low precision on which NVIDIA generation: the one support matrix.

Each cell says how an engine runs a weight format (or stores a KV cache) on a device generation:

* ``native``: the matrix products at the format's own tensor rate (FP8 W8A8 on Ada and newer, NVFP4 on Blackwell);
* ``weight-only``: the weights stored in the format and dequantised in the kernel, the products at the 16-bit rate
  (vLLM's FP8 Marlin W8A16 on Ampere; NVFP4 and MXFP4 Marlin W4A16 before Blackwell);
* ``refused``: the engine has no kernel for it there (TensorRT-LLM's FP8 before Ada, NVFP4 before Blackwell).

Every cell carries its source: the engines' own quantization / support-matrix pages as recalled (``verified:
false``: not read from a saved copy in ../shared/data). Generations not listed for a format keep what the catalog
says (a W8A8 format needs its peak; a weight-only one computes at 16 bits). Non-NVIDIA devices are not in the
matrix: their formats are decided by the catalog's peaks alone.

>>> weight_mode("tensorrt-llm", "nvfp4", "Hopper").mode, weight_mode("vllm", "nvfp4", "Hopper").mode
('refused', 'weight-only')
>>> weight_mode("vllm", "fp8", "Ampere (GA100)").mode, weight_mode("vllm", "fp8", "Hopper").mode
('weight-only', 'native')
>>> kv_mode("tensorrt-llm", "fp8", "Ampere").mode
'refused'
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["native", "weight-only", "refused"]
# NVIDIA generations oldest first, as the catalog's architecture names begin (Ada Lovelace, Blackwell Ultra ...)
GENERATIONS = ("kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")
SERVING_ENGINES = ("vllm", "sglang", "tensorrt-llm")

_VLLM_QUANT = ("vLLM docs, 'Quantization: Supported Hardware' table and vllm/model_executor/layers/quantization "
               "(fp8.py: 'Your GPU does not have native support for FP8 computation ... Weight-only FP8 compression "
               "will be used leveraging the Marlin kernel'; modelopt.py NVFP4 with cutlass_scaled_fp4_mm on sm_100/"
               "sm_120, FP4 Marlin (marlin_utils_fp4.py) elsewhere; mxfp4.py: FlashInfer on Blackwell, triton "
               "matmul_ogs on Hopper, Marlin on Ampere), v0.10-v0.11; recalled, verified: false")
_SGLANG_QUANT = ("SGLang docs, 'Quantization' (fp8 with vLLM's Marlin W8A16 fallback before sm_89; modelopt_fp4 on "
                 "Blackwell only; gpt-oss MXFP4 on Ampere and newer), v0.4-v0.5; recalled, verified: false")
_TRTLLM_MATRIX = ("TensorRT-LLM docs, 'Support Matrix' and 'Numerical Precision' (FP8 W8A8 and FP8 KV cache on "
                  "Ada, Hopper and Blackwell; NVFP4 on Blackwell; INT8 SmoothQuant, INT8 KV cache and INT4/INT8 "
                  "weight-only on Ampere and newer; gpt-oss MXFP4 on Hopper and Blackwell), v0.17-v1.0; recalled, "
                  "verified: false")
_VLLM_KV = ("vLLM docs, 'Quantized KV Cache' (kv_cache_dtype auto, fp8, fp8_e4m3, fp8_e5m2: stored in FP8, "
            "dequantised inside the attention kernel, which computes in 16 bits where the device has no FP8 units; "
            "no int8), v0.6-v0.11; recalled, verified: false")
_SGLANG_KV = ("SGLang server arguments, --kv-cache-dtype auto, fp8_e5m2, fp8_e4m3 (no int8), v0.4-v0.5; recalled, "
              "verified: false")


# The oldest NVIDIA generation an engine runs at all, with its source: a device older than that is no candidate,
# whatever the format (a ranking would otherwise offer a P100 under vLLM).
OLDEST_GENERATION: dict[str, tuple[str, str]] = {
    "vllm": ("volta", "vLLM docs, 'Installation: GPU' requirements: compute capability 7.0 or higher (V100, T4, RTX 20xx, "
                      "A100, L4, H100 ...), v0.6-v0.11; recalled, verified: false"),
}


def generation_refusal(engine: str, architecture: str) -> str | None:
    """Why ``engine`` runs nothing on a device of ``architecture`` (older than its oldest generation), or None.

    Parameters
    ----------
    engine : str
        The serving engine's name.
    architecture : str
        The device's architecture as the catalog names it.

    Returns
    -------
    str or None
        The reason with its source; None where the engine runs there or the device is not NVIDIA.

    >>> generation_refusal("vllm", "Pascal") is not None, generation_refusal("vllm", "Volta")
    (True, None)
    """
    oldest = OLDEST_GENERATION.get(engine)
    found = generation(architecture)
    if oldest is None or found is None or GENERATIONS.index(found) >= GENERATIONS.index(oldest[0]):
        return None
    return f"{engine} runs on {oldest[0].title()} and newer NVIDIA GPUs, not {architecture} ({oldest[1]})"


@dataclass(frozen=True)
class Cell:
    """How an engine runs a format on a generation, and where that was read."""

    mode: Mode
    source: str
    note: str = ""


def generation(architecture: str) -> str | None:
    """The NVIDIA generation a catalog architecture names (``"Ada Lovelace"`` -> ``"ada"``), or None for others.

    Parameters
    ----------
    architecture : str
        The device's architecture as the catalog writes it.

    Returns
    -------
    str or None
        One of :data:`GENERATIONS`, or None (AMD, Intel, TPU ...: not in the matrix).
    """
    words = architecture.strip().lower().split()
    return words[0] if words and words[0] in GENERATIONS else None


def _from(first: str, source: str, below: Mode = "refused", at: Mode = "native", note: str = "") -> dict[str, Cell]:
    """Cells for every generation: ``at`` from ``first`` on, ``below`` before it."""
    start = GENERATIONS.index(first)
    return {g: Cell(at if i >= start else below, source, note) for i, g in enumerate(GENERATIONS)}


def _steps(source: str, *steps: tuple[str, Mode], note: str = "") -> dict[str, Cell]:
    """Cells by thresholds: each (first generation, mode) holds until the next; refused before the first."""
    out = {g: Cell("refused", source, note) for g in GENERATIONS}
    for first, mode in steps:
        for g in GENERATIONS[GENERATIONS.index(first):]:
            out[g] = Cell(mode, source, note)
    return out


_MARLIN_FP8 = "FP8 Marlin (W8A16): weights at 8 bits, products at the 16-bit rate"
_MARLIN_FP4 = "FP4 Marlin (W4A16): weights at 4.5 bits, products at the 16-bit rate"
_MXFP4_NOTE = ("the routed experts' MXFP4 weights dequantised in the kernel, products at the 16-bit rate (on "
               "Blackwell the engines' W4A8 path with MXFP8 activations is not modelled: no measured row checks it)")

# (engine, weight format) -> generation -> cell; formats not listed here are decided elsewhere (serving_runtimes)
WEIGHTS: dict[tuple[str, str], dict[str, Cell]] = {
    ("vllm", "fp8"): _steps(_VLLM_QUANT, ("ampere", "weight-only"), ("ada", "native"), note=_MARLIN_FP8),
    ("sglang", "fp8"): _steps(_SGLANG_QUANT, ("ampere", "weight-only"), ("ada", "native"), note=_MARLIN_FP8),
    ("tensorrt-llm", "fp8"): _from("ada", _TRTLLM_MATRIX),
    ("vllm", "nvfp4"): _steps(_VLLM_QUANT, ("ampere", "weight-only"), ("blackwell", "native"), note=_MARLIN_FP4),
    ("sglang", "nvfp4"): _from("blackwell", _SGLANG_QUANT),
    ("tensorrt-llm", "nvfp4"): _from("blackwell", _TRTLLM_MATRIX),
    ("vllm", "mxfp4"): _steps(_VLLM_QUANT, ("ampere", "weight-only"), note=_MXFP4_NOTE),
    ("sglang", "mxfp4"): _steps(_SGLANG_QUANT, ("ampere", "weight-only"), note=_MXFP4_NOTE),
    ("tensorrt-llm", "mxfp4"): _steps(_TRTLLM_MATRIX, ("hopper", "weight-only"), note=_MXFP4_NOTE),
    ("tensorrt-llm", "w8a8"): _from("ampere", _TRTLLM_MATRIX),
}
# (engine, KV-cache type) -> generation -> cell; types not listed are stored on every generation the engine runs
KV_CACHES: dict[tuple[str, str], dict[str, Cell]] = {
    ("tensorrt-llm", "fp8"): _from("ada", _TRTLLM_MATRIX, note="it stores an int8 KV cache on Ampere instead"),
    ("tensorrt-llm", "int8"): _from("ampere", _TRTLLM_MATRIX),
    ("vllm", "fp8"): _steps(_VLLM_KV, ("volta", "weight-only"), ("ada", "native"),
                            note="stored in FP8, attention computed in 16 bits"),
    ("sglang", "fp8"): _steps(_SGLANG_KV, ("ampere", "weight-only"), ("ada", "native"),
                              note="stored in FP8, attention computed in 16 bits"),
}
# Engines that store no int8 KV cache at all (their options name none)
NO_INT8_KV = {"vllm": _VLLM_KV, "sglang": _SGLANG_KV}


def weight_mode(engine: str, weights: str, architecture: str) -> Cell:
    """How ``engine`` runs ``weights`` on a device of ``architecture``.

    Parameters
    ----------
    engine : str
        A serving engine's name (``vllm``, ``sglang``, ``tensorrt-llm``).
    weights : str
        A weight format name (sizer.runtimes.formats).
    architecture : str
        The device's architecture as the catalog writes it.

    Returns
    -------
    Cell
        ``native`` where neither the matrix nor the generation says otherwise (the catalog's peaks decide).
    """
    gen = generation(architecture)
    cells = WEIGHTS.get((engine, weights))
    if gen is None or cells is None:
        return Cell("native", "the catalog's peaks (no cell in the support matrix)")
    return cells[gen]


def kv_mode(engine: str, kv_cache: str, architecture: str) -> Cell:
    """How ``engine`` stores a ``kv_cache`` KV cache on a device of ``architecture``.

    Parameters
    ----------
    engine : str
        A serving engine's name.
    kv_cache : str
        A KV-cache type (``fp16``, ``fp8``, ``int8`` ...).
    architecture : str
        The device's architecture as the catalog writes it.

    Returns
    -------
    Cell
        ``refused`` where the engine does not store it there; ``weight-only`` where it stores it but computes
        attention in 16 bits; ``native`` otherwise.
    """
    if kv_cache == "int8" and engine in NO_INT8_KV:
        return Cell("refused", NO_INT8_KV[engine], "it stores fp8, not int8")
    gen = generation(architecture)
    cells = KV_CACHES.get((engine, kv_cache))
    if gen is None or cells is None:
        return Cell("native", "no cell in the support matrix")
    return cells[gen]


def weight_only_somewhere(weights: str, architecture: str) -> bool:
    """Whether some serving engine runs ``weights`` weight-only on ``architecture`` (FP8 on Ampere under vLLM):
    the data-centre answer, with no engine named, then computes at the 16-bit rate instead of refusing.

    Parameters
    ----------
    weights : str
        A weight format name.
    architecture : str
        The device's architecture as the catalog writes it.

    Returns
    -------
    bool
    """
    return any(weight_mode(e, weights, architecture).mode == "weight-only" for e in SERVING_ENGINES
               if (e, weights) in WEIGHTS)


def no_engine_runs(weights: str, architecture: str) -> bool:
    """Whether every serving engine of the matrix refuses ``weights`` on ``architecture`` (NVFP4 on a V100).

    Parameters
    ----------
    weights : str
        A weight format name.
    architecture : str
        The device's architecture as the catalog writes it.

    Returns
    -------
    bool
        False where the matrix has no cell for the format (the catalog decides).
    """
    engines = [e for e in SERVING_ENGINES if (e, weights) in WEIGHTS]
    return bool(engines) and all(weight_mode(e, weights, architecture).mode == "refused" for e in engines)


def refusal_words(engine: str, doing: str, cell: Cell, architecture: str) -> str:
    """A refusal in words: the engine, what it lacks on the generation, what it offers instead, the source.

    Parameters
    ----------
    engine : str
        The engine's name.
    doing : str
        What was asked, as a verb phrase (``"run nvfp4 weights"``, ``"store an fp8 KV cache"``).
    cell : Cell
        The refused cell.
    architecture : str
        The device's architecture.

    Returns
    -------
    str
    """
    note = f"; {cell.note}" if cell.note else ""
    return f"{engine} does not {doing} on {architecture}{note} ({cell.source})"


def kv_words(kv_cache: str) -> str:
    """``"an fp8 KV cache"``, ``"a bf16 KV cache"``: the type with its article.

    Parameters
    ----------
    kv_cache : str
        A KV-cache type.

    Returns
    -------
    str
    """
    return f"{'an' if kv_cache[:1] in 'fi' else 'a'} {kv_cache} KV cache"
