"""The house's one caching policy: what is kept, bounded how, keyed by what, and why.

Every cache in ``sizer/``, ``api/`` and ``cli/`` is declared in :data:`POLICIES` (what it keeps,
its bound, its key, what makes it stale and the saving measured for it: ``docs/caching.md``,
``benchmarks/cache_savings.py``) and made by :func:`registered_cache`, which takes its bound from
there and refuses a function that is not declared. Only pure functions are kept, of hashable
values or of a key built from what the answer depends on (names, numbers, a catalog's
:attr:`~sizer.hardware.catalog.Catalog.key`, a device's :attr:`~sizer.hardware.schema.Device.key`),
never of ``id()``: an identity can be reused once its object is freed, and keeping the object
alive to prevent that keeps everything it refers to alive as well. A kept answer is shared by
every caller, so callers never change it: its numpy arrays are made read-only when it is kept.

A catalog change: an answer that depends on a catalog keys it by ``Catalog.key`` or by its
devices' content keys, so a user catalog or an edited device gives new keys, never a stale
answer. The built-in files (catalog, models, profiles, error spreads) are read once per process;
a process that edits them calls :func:`clear_all`. The disk cache
(:mod:`sizer.diskcache`) keys its entries by the files' sizes and times, so the next process
sees an edit.

:func:`clear_all` empties every cache; ``SIZER_CACHES_OFF=name,...`` (or ``all``) builds the named
caches as plain calls, which is how their savings are measured.

>>> calls = []
>>> @keyed_cache(maxsize=2, key=lambda word, repeat: (word, repeat))
... def shout(word, repeat):
...     calls.append(word)
...     return word.upper() * repeat
>>> shout("a", 2), shout("a", 2), len(calls)
('AA', 'AA', 1)
>>> _ = shout("b", 1), shout("c", 1); shout.cache_info().size  # "a" evicted
2
"""
from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, TypeVar

Result = TypeVar("Result")


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    size: int
    maxsize: int


def keyed_cache(maxsize: int, key: Callable[..., Hashable]) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorate a function with an LRU cache of at most ``maxsize`` answers, looked up by
    ``key(*args, **kwargs)``: for arguments that are not hashable themselves (catalogs, profiles).

    Thread-safe; an exception is never cached. A key asked again while its answer is being computed
    waits for that answer instead of computing it a second time (a burst of one new question costs one
    evaluation). The decorated function has ``cache_info()`` and ``cache_clear()`` as
    ``functools.lru_cache`` has, ``peek(*args)``: the kept answer or None, computing nothing, and
    ``unless_running(*args)``: the kept answer, else computed unless another thread is computing it (None).

    Parameters
    ----------
    maxsize : int
        Answers kept at most [entries], the least recently used dropped first.
    key : callable
        Called with the function's arguments; returns the hashable key the answer is kept under.

    Returns
    -------
    callable
        A decorator: the function, its answers kept.
    """
    if maxsize < 1:
        raise ValueError("maxsize must be at least 1")

    def decorate(function: Callable[..., Result]) -> Callable[..., Result]:
        kept: OrderedDict[Hashable, Result] = OrderedDict()
        running: dict[Hashable, threading.Event] = {}  # keys being computed now, and who waits for them
        lock = threading.Lock()
        counts = {"hits": 0, "misses": 0}

        def compute(k: Hashable, done: threading.Event, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Result:
            try:
                value = _read_only(function(*args, **kwargs))  # outside the lock: a slow answer blocks no other key
                with lock:
                    kept[k] = value
                    kept.move_to_end(k)
                    while len(kept) > maxsize:
                        kept.popitem(last=False)
                return value
            finally:
                with lock:
                    running.pop(k, None)
                done.set()

        @functools.wraps(function)
        def cached(*args: Any, **kwargs: Any) -> Result:
            k = key(*args, **kwargs)
            while True:
                with lock:
                    if k in kept:
                        kept.move_to_end(k)
                        counts["hits"] += 1
                        return kept[k]
                    done = running.get(k)
                    if done is None:  # this thread computes it; others asking meanwhile wait for it
                        running[k] = done = threading.Event()
                        counts["misses"] += 1
                        break
                done.wait()  # the same question in flight: its answer, once (or, if it failed, try ourselves)
            return compute(k, done, args, kwargs)

        def unless_running(*args: Any, **kwargs: Any) -> Result | None:
            """The answer kept for these arguments, else computed here, unless another thread is computing it
            (then None): never waits (for a caller that must not block, an event loop)."""
            k = key(*args, **kwargs)
            with lock:
                if k in kept:
                    kept.move_to_end(k)
                    counts["hits"] += 1
                    return kept[k]
                if k in running:
                    return None
                running[k] = done = threading.Event()
                counts["misses"] += 1
            return compute(k, done, args, kwargs)

        def peek(*args: Any, **kwargs: Any) -> Result | None:
            """The answer kept for these arguments, or None; computes nothing (for a caller that
            decides how to run a question by whether its answer is at hand)."""
            k = key(*args, **kwargs)
            with lock:
                return kept.get(k)

        def cache_info() -> CacheInfo:
            with lock:
                return CacheInfo(counts["hits"], counts["misses"], len(kept), maxsize)

        def cache_clear() -> None:
            with lock:
                kept.clear()

        cached.cache_info = cache_info  # type: ignore[attr-defined]
        cached.cache_clear = cache_clear  # type: ignore[attr-defined]
        cached.peek = peek  # type: ignore[attr-defined]
        cached.unless_running = unless_running  # type: ignore[attr-defined]
        return cached

    return decorate


def _read_only(value: Result, depth: int = 3) -> Result:
    """``value`` with every numpy array in it (in tuples, lists, dicts and dataclass fields, ``depth``
    levels down) made read-only, in place: a kept answer is shared, so a caller that writes into one
    gets an error instead of changing every later caller's answer."""
    import dataclasses

    import numpy as np

    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif depth > 0:
        if isinstance(value, (tuple, list)):
            for item in value:
                _read_only(item, depth - 1)
        elif isinstance(value, dict):
            for item in value.values():
                _read_only(item, depth - 1)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for field in dataclasses.fields(value):
                _read_only(getattr(value, field.name, None), depth - 1)
    return value


# --- the policy ---------------------------------------------------------------------------------

OFF_ENV = "SIZER_CACHES_OFF"  # names of caches to build as plain calls (``all`` for every one): for measuring


@dataclass(frozen=True)
class Policy:
    """One cache of the house, as declared: the function it keeps (``module.qualname``) or a disk
    entry kind (``disk:name``), what it keeps, its bound [entries], its key, what makes an answer
    stale, and the saving measured without it (``docs/caching.md``)."""

    name: str
    keeps: str
    maxsize: int
    key: str
    stale_when: str
    saving: str


CATALOG_KEYED = "never: the key holds the catalog's content key (Catalog.key)"
DEVICE_KEYED = "never: the key holds the devices' content keys (Device.key)"
VALUES = "never: a pure function of its arguments"
FILE_ONCE = "the file is edited while the process runs: clear_all()"
FILE_STAMPED = "never: the key holds the files' sizes and times and the code's version"

# Savings: CPU time a workload takes longer without that cache alone (benchmarks/cache_savings.py;
# docs/caching.md has the table, the workloads and the caches removed for saving under 1 %).
POLICIES: tuple[Policy, ...] = (
    # files read once per process (and kept on disk across processes)
    Policy("disk:pint-definitions", "pint's parsed unit definitions", 32, "pint version and definitions text",
           FILE_STAMPED, "sizer peak: 59 ms of 524 ms"),
    Policy("disk:catalog", "the parsed, checked built-in catalog", 32, "catalog, price and schema files' stamps",
           FILE_STAMPED, "sizer peak: 177 ms of 570 ms; sizer recommend: 241 ms of 660 ms"),
    Policy("disk:device-table", "the whole catalog's device table", 32, "devices' keys, precision, code stamps",
           FILE_STAMPED, "sizer recommend, a question of a new shape: 59 ms of 628 ms"),
    Policy("disk:layout-basis", "a whole-catalog layout search", 32, "its key and every core file's stamp",
           FILE_STAMPED, "sizer recommend asked again: 51 ms of 667 ms (a new question pays ~36 ms to write it)"),
    Policy("disk:error-spread", "the parsed error spread file (sizer/engine/error_spread.yaml)", 32,
           "the file's stamp", FILE_STAMPED, "sizer recommend: 29 ms of 487 ms (PyYAML not imported)"),
    Policy("disk:offer-prices", "a recommendation's price floats per device and count", 32,
           "catalog key and kinds, provider, counts, terms, every core file's stamp", FILE_STAMPED,
           "sizer recommend: 22 ms of 487 ms"),
    Policy("disk:layer-graph", "a generated transformer's folded layer table", 32,
           "the architecture's figures, sequence length, flash, the stamps of the code that builds it", FILE_STAMPED,
           "sizer recommend --params 7e9 --tokens 2e10 --json: 16 M of 1,906 M instructions (callgrind)"),
    Policy("disk:library-profile", "a library model's profile (--workload timm:NAME)", 32,
           "library, model, sequence length, torch and library versions, profiler code stamps", FILE_STAMPED,
           "sizer time --workload timm:resnet18 asked again: 0.75 s instead of 8.2 s (torch not even imported)"),
    Policy("sizer.hardware.catalog._builtin", "the built-in catalog", 1, "none (one per process)", FILE_ONCE,
           "Python API, estimate_time + peak: 9.3 ms of 2.8 ms per pair (335 %)"),
    Policy("sizer.hardware.networks.load_networks", "links and node types of catalog/networks", 4,
           "the folder", FILE_ONCE, "/v1/time with a system: 20 ms of 8.3 ms per request (246 %)"),
    Policy("sizer.workloads.registry.builtin_entries", "catalog/models.yaml, checked", 1, "none", FILE_ONCE,
           "/v1/time, an unknown model: 28 ms of 2.6 ms per request (1107 %)"),
    Policy("sizer.workloads.registry._index", "models by every alias", 1, "none", FILE_ONCE,
           "Python API, estimate_time + peak: 0.80 ms of 2.8 ms per pair (29 %)"),
    Policy("sizer.workloads.refused.refused_models", "catalog/model_presets/not-supported.yaml, checked", 1, "none",
           FILE_ONCE, "a refused or unknown model name: 2.9 ms to read and check the file per lookup"),
    Policy("sizer.frameworks._catalog", "sizer/frameworks/frameworks.yaml, checked", 1, "none", FILE_ONCE,
           "a request naming a framework: 14.6 ms to read and check the file per lookup, 3-4 lookups a request "
           "(estimate_memory with --framework torchtune: 18 ms kept)"),
    Policy("sizer.workloads.refused._index", "refused models by every alias", 1, "none", FILE_ONCE,
           "a refused or unknown model name: a dict of ~30 keys rebuilt per lookup (about 0.02 ms)"),
    Policy("sizer.workloads.shipped._names", "shipped configs by hub id, short name and short form", 1, "none",
           FILE_ONCE, "/v1/time of a shipped config (qwen2.5-32b): 0.97 ms of 4.4 ms per request (22 %)"),
    Policy("sizer.workloads.shipped.shipped_architecture", "a shipped config's architecture", 128, "hub id",
           FILE_ONCE, "/v1/time of a shipped config (qwen2.5-32b): 0.34 ms of 4.4 ms per request (8 %)"),
    Policy("sizer.workloads.listing._listing", "the model list's rows (presets and shipped configs)", 1, "none",
           FILE_ONCE, "list_models (GET /v1/models, sizer models): 4.2 ms rebuilt per call, 0.001 ms kept"),
    Policy("sizer.workloads.profile._builtin", "built-in profiles of a workload name", 64, "workload name",
           FILE_ONCE, "/v1/time, a profiled workload: 140 ms of 4.5 ms per request (3116 %)"),
    Policy("sizer.workloads.profile._name_index", "every name a built-in profile answers to", 1, "none",
           FILE_ONCE, "a workload name looked up again: 7 us instead of 32 ms (58 files' headers read)"),
    Policy("sizer.workloads.profile_listing._summaries", "the workload list's rows", 1, "none", FILE_ONCE,
           "GET /v1/workloads asked again: 6 us instead of 1.3 s (58 profile files parsed)"),
    Policy("sizer.engine.time_range.error_spread", "error_spread.yaml (time ranges)", 1, "none", FILE_ONCE,
           "Python API, estimate_time + peak: 0.40 ms of 2.8 ms per pair (15 %)"),
    Policy("sizer.hardware.server_share.catalog_server_share", "the server share derived from the built-in catalog's "
           "paired prices", 1, "none (the built-in catalog, one per process)", FILE_ONCE,
           "a buy-priced answer: the catalog's devices scanned for prices given both ways once, not per device priced"),
    Policy("sizer.engine.stacks.stack_fit", "single_device_fit.yaml (one-device training efficiencies)", 1, "none",
           FILE_ONCE, "one YAML parse per process instead of one per device efficiency looked up"),
    Policy("sizer.serving.estimate.speed_spread", "error_spread.yaml (speed ranges)", 1, "none", FILE_ONCE,
           "/v1/recommend, task inference: 311 ms of 653 ms per request (48 %)"),
    Policy("sizer.serving.serving_ranges._table", "serving_ranges.yaml (ranges under load)", 1, "none", FILE_ONCE,
           "recommend --inference --rate 5 (8B, gpu, bf16, 1 device; 440 hits): 3.3 s of 4.8 s (68 %)"),
    Policy("sizer.runtimes.serving_mechanisms.generations", "serving_mechanisms.yaml (engine generations), checked", 1,
           "none", FILE_ONCE, "a replica built for a stated runtime version: 2.1 ms to read and check the file each time"),
    Policy("sizer.simulator.benchmark_lengths.sharegpt_as_sampled", "vLLM's ShareGPT sample solved for a run's means",
           256, "the two means", VALUES, "an answer drawing sharegpt-vllm-sample: 36 ms per solve (up to 12 passes "
           "over 20,000 draws), once per pair of means"),
    Policy("sizer.simulator.traffic._filtered_means", "a filtered length set's means", 64, "the distribution (a frozen "
           "value)", VALUES, "a filtered set's means asked again: 3.8 ms of 20,000 draws each time"),
    Policy("api.server._limits", "the server's settings", 1, "none (environment read once)",
           "the environment changes: clear_all()",
           "uvicorn server, per connection: 4.6 ms (Settings() read again) beside ~4 ms a request"),
    # units
    Policy("sizer.units._parse_units", "pint's parse of a unit expression ('FLOP/s')", 4096,
           "expression text and flags", "pint definitions change: define() clears it",
           "GET /v1/catalog: 56 ms of 23 ms per request (244 %)"),
    Policy("sizer.units._parse_quantity", "a successful parse of a short quantity text", 4096,
           "text, dimension, default unit, bounds", VALUES,
           "/v1/time with a system: 0.27 ms of 8.3 ms per request (3.2 %)"),
    Policy("sizer.units.describe_dimension", "wording of a dimension for messages", 256, "dimension", VALUES,
           "/v1/time with a system: 0.19 ms of 8.3 ms per request (2.3 %)"),
    Policy("sizer.results.unit_factor", "a conversion factor between two units", 256, "unit pair", VALUES,
           "/v1/recommend, task inference: 156 ms of 653 ms per request (24 %)"),
    # devices and prices
    Policy("sizer.formulas.peaks.derived_fp32_peak", "a device's derived FP32 peak", 4096, "Device.key",
           DEVICE_KEYED, "/v1/peak: 0.19 ms of 2.5 ms per request (7.4 %)"),
    Policy("sizer.formulas.peaks._supported", "a device's precisions", 4096, "Device.key", DEVICE_KEYED,
           "GET /v1/catalog: 0.54 ms of 23 ms per request (2.3 %)"),
    Policy("sizer.engine.devices.cached_device_table", "the whole catalog's device table", 64,
           "devices' keys, precision, transformer", DEVICE_KEYED,
           "/v1/recommend, new shapes: 2.4 ms of 53 ms per request (4.6 %)"),
    Policy("sizer.hardware.catalog._name_index", "per catalog: device names and label words", 64, "Catalog.key",
           CATALOG_KEYED, "/v1/memory: 24 ms of 9.4 ms per request (249 %)"),
    Policy("sizer.hardware.catalog._matches", "the devices a name means", 1024, "Catalog.key and the name",
           CATALOG_KEYED, "/v1/peak: 0.88 ms of 2.5 ms per request (35 %)"),
    Policy("sizer.plan.recommend._devices", "a catalog's devices of some kinds", 32, "Catalog.key, kinds",
           CATALOG_KEYED, "/v1/recommend, new questions: 0.12 ms of 4.0 ms per request (3.0 %)"),
    Policy("sizer.plan.recommend._price_arrays", "per device and count: rent, purchase, energy", 32,
           "devices' keys, provider, counts, terms", DEVICE_KEYED,
           "/v1/recommend, new questions: 17 ms of 4.0 ms per request (431 %)"),
    Policy("sizer.passes.arithmetic._serving_table", "the serving device table", 32,
           "devices' keys, precision, efficiencies", DEVICE_KEYED,
           "/v1/recommend, task inference: 108 ms of 653 ms per request (17 %)"),
    # workloads and graphs
    Policy("sizer.workloads.decoder_shape._shape_params", "a generated shape's parameter count", 4096, "shape", VALUES,
           "/v1/recommend, new questions: 0.26 ms of 4.0 ms per request (6.6 %)"),
    Policy("sizer.workloads.decoder_shape._decoder", "a generated decoder", 256, "shape", VALUES,
           "/v1/recommend, new questions: 0.07 ms of 4.0 ms per request (1.8 %)"),
    Policy("sizer.workloads.decoder_shape.decoder_for_params", "the decoder for a parameter count", 256,
           "parameter count", VALUES, "/v1/tco: 0.17 ms of 6.8 ms per request (2.4 %)"),
    Policy("sizer.engine.job._build_graph", "a transformer's folded layer table", 32,
           "architecture, sequence length, flash", VALUES,
           "/v1/plan: 3.5 ms of 7.6 ms per request (46 %)"),
    # 512: about 4 KB an entry (folded tables); a scorer's pass over the 361 local-inference benchmark cases fits, and
    # its second pass (leave one source out) and tests/sizer/local's refits find them kept (16 rebuilt every one)
    Policy("sizer.passes.arithmetic._graphs", "a serving case's prefill and decode graphs", 512, "serving case",
           VALUES, "/v1/inference: 14 ms of 21 ms per request (65 %)"),
    Policy("sizer.simulator.simulate._decode_layers", "decode layers at a context", 64,
           "architecture, context, KV bytes, idle share", VALUES,
           "sizer recommend --inference --rate 2: 184 ms of 1446 ms (13 %)"),
    Policy("sizer.simulator.simulate._widest_layer_bytes", "the widest prefill layer's bytes", 64,
           "architecture, tokens", VALUES, "sizer recommend --inference --rate 2: 280 ms of 1446 ms (19 %)"),
    Policy("sizer.simulator.simulate.iteration_grid", "iteration times over a grid", 256,
           "replica's content, mean context", DEVICE_KEYED, "/v1/inference: 1.7 ms of 21 ms per request (8.1 %)"),
    Policy("sizer.runtimes.gguf.gguf_bytes", "a GGUF file's tensor bytes", 64, "architecture, mix, imatrix",
           VALUES, "/v1/inference on llama.cpp: 1.2 ms of 34 ms per request (3.4 %)"),
    Policy("sizer.plan.recommend._cost_assumptions", "the cost defaults as stated", 1, "none", VALUES,
           "/v1/recommend, new questions: 0.09 ms of 4.0 ms per request (2.2 %)"),
    Policy("sizer.plan.recommend._achieved_factors", "per device, its family's achieved factor", 32,
           "Catalog.key, kinds", CATALOG_KEYED, "/v1/recommend, new questions: 1.0 ms of ~2.5 ms per request (40 %)"),
    Policy("sizer.plan.layout_basis.core_stamps", "a digest of the core files' names, sizes and times", 1, "none (once per process)",
           FILE_ONCE, "/v1/recommend, a shape a worker process searched: 3.2 ms of each check of the disk"),
    # answers
    Policy("sizer.plan.layout_basis._kept", "a whole-catalog layout search", 64,
           "job's layout key, devices' keys, counts, headroom, calibration", DEVICE_KEYED,
           "/v1/recommend, new questions of a known shape: 2.4 ms of 4.4 ms per request (54 %)"),
    Policy("api.routers.recommend._ranked_bytes", "a recommendation rendered as JSON bytes", 256,
           "canonical body, Catalog.key", CATALOG_KEYED,
           "/v1/recommend, the same body again: 1.7 ms of 2.4 ms per request (73 %)"),
)

_BY_NAME = {policy.name: policy for policy in POLICIES}
# name -> the cached function (with cache_info and cache_clear), once its module is imported
_LIVE: dict[str, Any] = {}


# The house's folders the wheel installs under the sizer namespace (``api`` as ``sizer.api``): a cache
# is declared by its name in the repository.
_NAMESPACED = ("sizer.api.", "sizer.cli.", "sizer.validation.")


def cache_name(function: Callable[..., Any]) -> str:
    """The declared name of a cached function: ``module.qualname`` as the repository names the module.

    Parameters
    ----------
    function : callable
        The cached function.

    Returns
    -------
    str
        ``api.routers.recommend._ranked_bytes`` whether the module was imported from the checkout or,
        installed, as ``sizer.api.routers.recommend``.

    >>> def f(): pass
    >>> f.__module__ = "sizer.api.routers.recommend"
    >>> cache_name(f)
    'api.routers.recommend.f'
    """
    module = function.__module__
    if module.startswith(_NAMESPACED):
        module = module.removeprefix("sizer.")
    return f"{module}.{function.__qualname__}"


def policy(name: str) -> Policy:
    """The declared policy of a cache; an undeclared name is a LookupError naming where to declare it.

    Parameters
    ----------
    name : str
        ``module.qualname`` of the cached function, or ``disk:kind``.

    Returns
    -------
    Policy
        What it keeps, its bound, key, staleness and measured saving.
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise LookupError(f"cache {name!r} is not declared: add its Policy to sizer.memo.POLICIES "
                          "(what it keeps, bound, key, measured saving)") from None


def is_off(name: str) -> bool:
    """Whether ``SIZER_CACHES_OFF`` names this cache (or says ``all``): it is then a plain call.

    Parameters
    ----------
    name : str
        The cache's declared name.

    Returns
    -------
    bool
        True where the cache is to be built as a plain call.
    """
    wanted = {part.strip() for part in os.environ.get(OFF_ENV, "").split(",") if part.strip()}
    return "all" in wanted or name in wanted


def registered_cache(key: Callable[..., Hashable] | None = None
                     ) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Keep a declared function's answers, bounded by its :class:`Policy`.

    Without ``key`` the arguments are the key (they must be hashable: ``functools.lru_cache``);
    with it, ``key(*args, **kwargs)`` is (:func:`keyed_cache`). The result has ``cache_info()``,
    ``cache_clear()`` (and ``peek(*args)`` where ``key`` is given). Raises LookupError for a
    function not in :data:`POLICIES`.

    Parameters
    ----------
    key : callable, optional
        Called with the function's arguments; returns the hashable key (default: the arguments).

    Returns
    -------
    callable
        A decorator: the declared function, its answers kept within its bound.
    """
    def decorate(function: Callable[..., Result]) -> Callable[..., Result]:
        name = cache_name(function)
        maxsize = policy(name).maxsize
        if is_off(name):
            kept = _uncached(function)
        elif key is None:
            kept = functools.lru_cache(maxsize=maxsize)(function)
        else:
            kept = keyed_cache(maxsize, key)(function)
        _LIVE[name] = kept
        return kept

    return decorate


def live_caches() -> dict[str, Any]:
    """The registered caches of the modules imported so far, by name.

    Returns
    -------
    dict of str to callable
        Each cached function (with ``cache_info`` and ``cache_clear``) under its declared name.
    """
    return dict(_LIVE)


def clear(name: str) -> None:
    """Empty one registered cache, by its declared name (a no-op before its module is imported).

    Parameters
    ----------
    name : str
        The cache's declared name; an undeclared one is a LookupError.
    """
    policy(name)
    if name in _LIVE:
        _LIVE[name].cache_clear()


def clear_all() -> None:
    """Empty every registered in-memory cache (the disk cache keys by content and needs no clearing)."""
    for kept in list(_LIVE.values()):
        kept.cache_clear()


def _uncached(function: Callable[..., Result]) -> Callable[..., Result]:
    @functools.wraps(function)
    def plain(*args: Any, **kwargs: Any) -> Result:
        return function(*args, **kwargs)

    plain.cache_info = lambda: CacheInfo(0, 0, 0, 0)  # type: ignore[attr-defined]
    plain.cache_clear = lambda: None  # type: ignore[attr-defined]
    plain.peek = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    plain.unless_running = plain  # type: ignore[attr-defined]
    return plain

