"""Which device, how many, how long, what cost: the recommendation (spec §3.10).

Every (device, count, ZeRO stage) is evaluated at once by the engine; each device is then shown
at one count: without a deadline at its time-cost knee (the fastest count whose device-hours
stay within 25 % of its cheapest fitting count), with a deadline at the cheapest count that
meets it. Devices that cannot serve get a reason.

>>> result = recommend(RecommendRequest(params=1.3e9, tokens=2.6e10, precision="bf16", optimizer="adamw"))
>>> result.ranked[0].count >= 1 and all(r.reason for r in result.rejected)
True
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from sizer.asked import Asked, on_catalog
from sizer.choices import CATALOG_KINDS, PRICE_BASES, Objective, StorageClass
from sizer.deadline import check_deadline
from sizer.engine import achieved
from sizer.engine.constants import BATCH_ROUNDING
from sizer.engine.devices import DeviceTable, cached_device_table
from sizer.engine.job import Job, resolve_job
from sizer.engine.step_inputs import BOUNDS, RECOMPUTE
from sizer.engine.workload import check_search_grid
from sizer.errors import InputError, SizerError
from sizer.formulas.redundancy import estimate_k1
from sizer.formulas.tco import (
    COST_DEFAULTS,
    RentPrice,
    amortised_capital,
    cheapest_cloud_price,
    check_provider,
    energy_cost,
    hourly_price,
    lifetime_words,
    price_used,
    rent_cost,
)
from sizer.hardware.catalog import Catalog, load_catalog
from sizer.hardware.schema import Device
from sizer.hardware.server_share import owned_price
from sizer.memo import registered_cache
from sizer.plan.layout_basis import Basis, SearchSpace, basis, keep_shares, kept_basis, missing_search, prepare_search
from sizer.plan.layout_basis import search_share as layout_share
from sizer.plan.offer_prices import kept_price_floats
from sizer.results import (
    Assumption,
    finite_json,
    plain_data,
    time_unit,
    unit_factor,
)
from sizer.schemas.base import DEFAULT_WORKLOAD_DESCRIPTION, DEFAULT_WORKLOAD_FIELDS
from sizer.schemas.recommendation import AUTO_SUGGEST, RecommendRequest
from sizer.units import Quantity

if TYPE_CHECKING:
    import numpy.typing as npt  # annotations only: numpy.typing costs ~0.5 ms to import
    from pint import Quantity as PintQuantity

    from sizer.formulas.host import HostResult
    from sizer.schemas.calibration_file import Calibration
    from sizer.schemas.recommendation_result import RecommendResult
    from sizer.schemas.rescaled import Rescaled


def _interruption_factor(request: RecommendRequest, job: Job, table: DeviceTable, device_rows: npt.NDArray[np.intp],
                         seconds: npt.NDArray[np.float64], count: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Per shown row, the expected wall-clock with interruptions over the time without (NaN: not shown)."""
    from sizer.engine import goodput

    if not job.samples or not len(seconds):
        return np.full(len(seconds), np.nan)
    found = goodput.interruptions(seconds, count, goodput.checkpoint_bytes(job, table, device_rows))
    return np.where(goodput.wanted(request.interruptions, seconds, count), np.asarray(found.factor, dtype=float), np.nan)


COUNT_CHOICE = ("without a deadline, each device at its time-cost knee: the fastest power-of-two count whose "
                "device-hours stay within {knee:.0%} of that device's cheapest fitting count; with a deadline, the "
                "cheapest count that meets it")
PRICE_WORD = {"rent": "rent", "buy": "purchase", "any": "rent or purchase"}
_OFFERS = ("from offers that can run each row's count: one instance that large, or a cluster whose stated network "
           "between nodes is at least the time model's")
PRICING_SAID = {"rent": f"cloud rent only, {_OFFERS}",
                "buy": "amortised purchase plus energy (each row says the price's basis: list, street, price-history "
                       "median, analyst estimate or second-hand)",
                "any": f"cloud rent where an offer can run the job ({_OFFERS}), else the amortised purchase plus energy; "
                       "each cost says which, and a ranking by cost puts rents first, then purchases"}
KNEE_COST = 1.25  # device-hours an option may cost over the cheapest, to be chosen for speed


def _counts(max_devices: int) -> tuple[int, ...]:
    return tuple(int(c) for c in np.exp2(np.arange(int(np.log2(max_devices)) + 1)))


@registered_cache(key=lambda catalog, kinds: (catalog.key, kinds))
def _devices(catalog: Catalog, kinds: tuple[str, ...]) -> tuple[Device, ...]:
    return tuple(d for d in catalog if d.kind in kinds)


@registered_cache(key=lambda devices, devices_key, provider, counts, terms=("on-demand",):
             (devices_key, provider, counts, terms))
def _price_arrays(devices: tuple[Device, ...], devices_key: tuple[Hashable, ...], provider: str | None,
                  counts: tuple[int, ...], terms: tuple[str, ...] = ("on-demand",)) -> dict[str, Any]:
    """Per device, NaN where unknown: its purchase [USD], and per device-hour its rent per count of
    ``counts`` (devices x counts: the cheapest offer that can run that many, as :func:`hourly_price`
    chooses it for ``pricing="rent"``), amortised purchase and energy [USD] and energy [kWh], and the offers
    chosen as a row shows them (``rent_offer``, devices x counts: :class:`PriceUsed`'s fields, None where no
    offer runs that many), kept on disk too (:mod:`sizer.plan.offer_prices`).

    The cost formulas are linear in devices, hours, capital and power, so each is evaluated once
    here, at one device for one hour of one USD or one watt, and scaled by the catalog's figures
    (floats read at load); a request scales them by its count and hours (no units per request).
    """
    def floats() -> dict[str, Any]:
        costs, hour = COST_DEFAULTS, Quantity(1.0, "hour")
        amortised_per_usd = amortised_capital(Quantity(1.0, "USD"), hour, costs.lifetime).to("USD").magnitude
        energy_per_watt = energy_cost(Quantity(1.0, "W"), 1, hour, costs.utilisation, costs.pue,
                                      costs.electricity_price).to("USD").magnitude
        kwh_per_watt = (Quantity(1.0, "W") * costs.utilisation * hour * costs.pue).to("kWh").magnitude
        usd_per_hour = rent_cost(Quantity(1.0, "USD/hour"), 1, hour).to("USD").magnitude
        offers = [_rent_by_count(device, provider, counts, terms) for device in devices]
        rent = [[p.hourly.to("USD/hour").magnitude * usd_per_hour if p.hourly is not None else np.nan for p in row]
                for row in offers]
        # per offer (counts share one) its fields, written once; in an array of objects, which a kept answer's
        # read-only walk (sizer.memo) flags at once instead of visiting its ~1,400 cells
        rent_offer = np.empty((len(devices), len(counts)), dtype=object)
        for i, row in enumerate(offers):
            shown: list[tuple[RentPrice, dict[str, object] | None]] = []  # a row's counts share an offer's object
            for j, p in enumerate(row):
                earlier = [f for q, f in shown if q is p]
                fields = earlier[0] if earlier else price_used(p)
                shown.append((p, fields))
                rent_offer[i, j] = fields
        buy = [owned_price(device, device.purchase_price).per_device if device.purchase_price else np.nan
               for device in devices]
        tdp = [device.tdp.si("tdp", "[power]") if device.tdp is not None else np.nan for device in devices]
        buy_usd, tdp_w = np.asarray(buy, dtype=float), np.asarray(tdp, dtype=float)
        return {"rent": np.asarray(rent, dtype=float).reshape(len(devices), len(counts)), "buy": buy_usd,
                "amortised": buy_usd * amortised_per_usd, "energy": tdp_w * energy_per_watt,
                "kwh": tdp_w * kwh_per_watt, "rent_offer": rent_offer}

    # plain numbers and text only are kept on disk (pint quantities in the offers are not): a shown row's offer
    # is read there, its price and label not rendered again in each process (~3 ms of `sizer recommend`)
    return kept_price_floats(devices_key, provider, counts, terms, floats)


def _rent_by_count(device: Device, provider: str | None, counts: tuple[int, ...],
                   terms: tuple[str, ...]) -> list[RentPrice]:
    """:func:`hourly_price` (``pricing="rent"``) at each of ``counts``, worked out once per offer: the
    counts one offer runs share its price (its label and units rendered once, not per count)."""
    if not any(p.term in terms for p in device.cloud_prices):  # no offer at all: one reason for every count
        return [hourly_price(device, provider, pricing="rent", count=1, terms=terms)] * len(counts)
    by_offer: dict[int, RentPrice] = {}
    row: list[RentPrice] = []
    for count in counts:
        offer = cheapest_cloud_price(device, provider, count, terms)
        if offer is None:  # the reason names the count
            row.append(hourly_price(device, provider, pricing="rent", count=count, terms=terms))
            continue
        index = next(i for i, p in enumerate(device.cloud_prices) if p is offer)
        if index not in by_offer:
            by_offer[index] = hourly_price(device, provider, pricing="rent", count=count, terms=terms)
        row.append(by_offer[index])
    return row


def _row_price(prices: dict[str, Any], device: Device, row: int, count_index: int,
               basis: str | None) -> dict[str, Any] | None:
    """The price behind a row's cost (:class:`PriceUsed`'s fields): the rent offer that runs its count (``device``
    at row ``row`` of ``prices``), or the device's purchase; None where the row has no price of its basis."""
    if basis is None:
        return None
    if basis == "buy":
        return price_used(hourly_price(device, pricing="buy"))
    chosen = prices["rent_offer"][row, count_index] if basis == "rent" else None
    return None if chosen is None else dict(chosen)  # a row's own copy: the kept one is shared


def _priced_counts(prices: dict[str, Any], pricing: str, shape: tuple[int, ...]) -> npt.NDArray[np.bool_]:
    """Per device and count, whether a price of the asked basis is known: a rent offer that runs that
    many devices, a purchase price, or either (``any``)."""
    rent = ~np.isnan(prices["rent"])
    buy = np.broadcast_to(~np.isnan(prices["buy"])[:, None], shape)
    priced: npt.NDArray[np.bool_] = {"rent": rent, "buy": buy, "any": rent | buy}[pricing]
    return priced


def _choose(seconds: npt.NDArray[np.float64], count: npt.NDArray[np.float64], ok: npt.NDArray[np.bool_],
            deadline_s: float | None) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    """Per device (rows; columns are counts): the index of the chosen option (module docstring) and
    whether there is one."""
    device_hours = np.where(ok, seconds * count, np.inf)
    if deadline_s is not None:
        meets = ok & (seconds <= deadline_s)
        return np.argmin(np.where(meets, device_hours, np.inf), axis=1), np.asarray(meets.any(axis=1))
    cheapest = device_hours.min(axis=1, keepdims=True)
    near = ok & (device_hours <= cheapest * KNEE_COST)
    return np.argmin(np.where(near, seconds, np.inf), axis=1), np.asarray(ok.any(axis=1))


def _pareto(points: list[tuple[float, float | None]]) -> list[bool]:
    """True where no other point is at least as fast and as cheap and better in one."""
    time = np.asarray([t for t, _ in points], dtype=float).reshape(-1)
    cost = np.asarray([np.nan if c is None else c for _, c in points], dtype=float).reshape(-1)
    return [bool(flag) for flag in _front(time, cost)]


def _front(time: npt.NDArray[np.float64], cost: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """:func:`_pareto` on arrays (a NaN cost is on no front and dominates nothing)."""
    t_other, c_other = time[None, :], cost[None, :]
    t_self, c_self = time[:, None], cost[:, None]
    dominated = ((t_other <= t_self) & (c_other <= c_self) & ((t_other < t_self) | (c_other < c_self))).any(axis=1)
    front: npt.NDArray[np.bool_] = ~dominated & ~np.isnan(cost)
    return front


def recommend(request: RecommendRequest | None = None, catalog: Catalog | None = None) -> RecommendResult:
    """Rank every catalog device for the workload and constraints (spec §3.10).

    With no request, the built-in default workload is used and named in the result. A new question of
    a known shape reuses its layout search (:mod:`sizer.plan.layout_basis`); the HTTP service keeps
    its rendered answers (``api/routers/recommend.py``, :mod:`sizer.memo`).

    Parameters
    ----------
    request : RecommendRequest, optional
        The workload and the constraints: ``deadline`` [time], ``budget`` [USD], ``max_devices`` [1], ...
    catalog : Catalog, optional
        The devices and their prices; default the built-in catalog.

    Returns
    -------
    RecommendResult
        The devices ranked with their training time [the unit given], cost [USD] and energy [kWh],
        those listed apart without a price, and those rejected with a reason.
    """
    return _answer(request or RecommendRequest(), catalog or load_catalog())


def _answer(request: RecommendRequest, catalog: Catalog) -> RecommendResult:
    from sizer.schemas.recommendation_result import RecommendResult  # the answer as models (JSON is written without)

    question = _question(request, catalog)
    fields = _recommend(request, catalog, question)
    result = RecommendResult.model_validate(fields)
    wanted = _suggestions_wanted(request, fields)
    if wanted and question.asked is not None:
        result = suggest_for_rejected(request.model_copy(update={"suggest": wanted}), result, question.asked)
    return result


def _suggestions_wanted(request: RecommendRequest, answer: dict[str, Any]) -> int:
    """How many rejected devices get suggestions: as asked, else :data:`AUTO_SUGGEST` where no device
    serves (the user needs to know what to change), else none (each is the engine run again)."""
    if not any(r["cause"] in ("memory", "deadline") for r in answer["rejected"]):
        return 0
    if request.suggest is not None:
        return request.suggest
    return AUTO_SUGGEST if not (answer["ranked_total"] or answer["unpriced_total"]) else 0


def recommend_json(request: RecommendRequest, catalog: Catalog, indent: int | None = None,
                   question: _Question | None = None) -> bytes:
    """:func:`recommend`'s answer as JSON bytes, written straight from the fields the core built (the
    HTTP service's path: nothing the core made is validated again on its way out); checked finite as
    every result is (:func:`sizer.results.finite_json`), ``indent`` spaces per level (None: compact).
    Where rejected devices get suggestions, the answer with them (:func:`_answer`) is written
    instead. ``question``: ``request`` as :func:`quick_question` checked it.

    Parameters
    ----------
    request : RecommendRequest
        The workload and the constraints.
    catalog : Catalog
        The devices and their prices.
    indent : int, optional
        Spaces per level of the JSON [1]; None: compact.
    question : _Question, optional
        ``request`` already checked (:func:`quick_question`).

    Returns
    -------
    bytes
        The :class:`RecommendResult` as UTF-8 JSON.
    """
    fields = _recommend(request, catalog, question)
    if _suggestions_wanted(request, fields):
        return finite_json(_answer(request, catalog), indent=indent)
    # rows and rejections are built as dicts; models only at MODEL_FIELDS (made plain here, a few dozen values)
    return finite_json({**fields, **{name: plain_data(fields[name]) for name in MODEL_FIELDS}}, plain=True,
                       indent=indent)


# The fields of _recommend's answer that hold models (Assumption, K1Result, HostResult); the rest is plain
# data (tests/sizer/plan/test_recommend_json.py walks an answer to keep this true).
MODEL_FIELDS = ("assumptions", "k1", "host")


def quick_question(request: RecommendRequest, catalog: Catalog) -> tuple[bool, "_Question | None"]:
    """Whether :func:`recommend_json` answers ``request`` in about a millisecond (its layouts are kept, so
    no search runs, and no suggestions are to be worked out; or it is refused at once), and the checked
    question to hand to it (so that it is not checked twice; None where refused: recommend_json refuses
    it again, at once). A service runs a quick question where it arrives instead of in a worker thread.

    Parameters
    ----------
    request : RecommendRequest
        The workload and the constraints.
    catalog : Catalog
        The devices and their prices.

    Returns
    -------
    tuple of (bool, _Question or None)
        Whether the answer is quick, and the checked question (None where the request is refused).
    """
    try:
        question = _question(request, catalog)
    except SizerError:
        return True, None
    if request.suggest or request.deadline is not None or request.budget is not None:
        return False, question  # suggestions may be worked out, or no device may serve (its shape may be kept)
    kept = kept_basis(question.job, _space(question, catalog))
    if kept is None:
        return False, question
    return bool(kept.found.any()), question._replace(kept=kept)


class PendingSearch(NamedTuple):  # a record, not a dataclass: a third of the start-up cost of one (Python 3.11)
    """A new shape's layout search, as a worker process takes it (:func:`search_share`): what
    :func:`sizer.plan.layout_basis.basis` searches, the devices by their kinds in the catalog."""

    key: Hashable  # the search's key: questions with one key wait for one search
    job: Job
    kinds: tuple[str, ...]
    counts: tuple[int, ...]
    headroom: bool
    calibration: Calibration | None

    def space(self, catalog: Catalog) -> SearchSpace:
        """The search's devices (its kinds in ``catalog``), counts, headroom and calibration.

        Parameters
        ----------
        catalog : Catalog
            The catalog the search was asked of.

        Returns
        -------
        SearchSpace
            What :func:`sizer.plan.layout_basis.basis` searches.
        """
        return SearchSpace(_devices(catalog, self.kinds), (catalog.key, self.kinds), self.counts, self.headroom,
                           self.calibration)


def pending_search(question: _Question, catalog: Catalog) -> PendingSearch | None:
    """The layout search ``question`` waits for (a new shape's), or None where its layouts are kept: questions with
    one key wait for one search (a service runs it once, in shares over its worker processes: :func:`search_share`).

    Parameters
    ----------
    question : _Question
        A checked question (:func:`quick_question`'s).
    catalog : Catalog
        The devices and their prices.

    Returns
    -------
    PendingSearch or None
        The search; None where nothing is to be searched.
    """
    key = missing_search(question.job, _space(question, catalog))
    if key is None:
        return None
    request = question.request
    return PendingSearch(key, question.job, question.kinds, question.counts, request.headroom, request.calibration)


def search_share(search: PendingSearch, catalog: Catalog, share: int, shares: int) -> Basis:
    """Share ``share`` of ``shares`` of a pending layout search (a service's worker process runs one;
    :func:`keep_search` joins them where the questions wait), over every ``shares``-th device.

    Parameters
    ----------
    search : PendingSearch
        What :func:`pending_search` found to search.
    catalog : Catalog
        The devices and their prices.
    share, shares : int
        Which share, from 0, of how many [1].

    Returns
    -------
    Basis
        The share's layouts per (device, count) (:func:`sizer.plan.layout_basis.search_share`).
    """
    return layout_share(search.job, search.space(catalog), share, shares)


def keep_search(search: PendingSearch, catalog: Catalog, shares: list[Basis]) -> None:
    """Keep the search that ``shares`` (:func:`search_share`, in order) make up, for every question that waits for
    it: then :func:`quick_question` finds their layouts kept.

    Parameters
    ----------
    search : PendingSearch
        The search the shares are of.
    catalog : Catalog
        The devices and their prices.
    shares : list of Basis
        Every share, in order.
    """
    keep_shares(search.key, search.job, search.space(catalog), shares)


def _space(question: _Question, catalog: Catalog) -> SearchSpace:
    """The devices and counts ``question`` ranks, as its layout search ranges over them."""
    request = question.request
    return SearchSpace(question.devices, (catalog.key, question.kinds), question.counts, request.headroom,
                       request.calibration)


def _achieved_applies(question: _Question) -> bool:
    """Whether the ranking's times are at the achieved pace: a transformer with no MFU given (a what-if MFU replaces
    the fitted pace), as :func:`sizer.engine.achieved.transfers` rules for `time`; a measurement carried over scales
    that pace, as it scales `time`'s answer on the device measured on."""
    return question.request.mfu is None and achieved.transfers(question.job.shape is not None, False)


def _at_achieved_pace(b: Basis, devices: tuple[Device, ...], devices_key: tuple[Hashable, ...]) -> Basis:
    """Every device's steps over its family's achieved factor, MFU times it (:mod:`sizer.engine.achieved`)."""
    return achieved.at_achieved_pace(b, _achieved_factors(devices, devices_key))


@registered_cache(key=lambda devices, devices_key: devices_key)
def _achieved_factors(devices: tuple[Device, ...], devices_key: tuple[Hashable, ...]) -> npt.NDArray[np.float64]:
    """Per device (a column), its family's achieved factor [1]: read from its name once per catalog and kinds, not
    per question (matching ~200 names against the families was half of a new question's time over HTTP)."""
    return np.asarray([achieved.achieved_factor(f"{d.id} {d.name}")[0] for d in devices], dtype=float)[:, None]


class _Question(NamedTuple):
    request: RecommendRequest  # with the defaults it takes
    job: Job
    kinds: tuple[str, ...]
    devices: tuple[Device, ...]
    counts: tuple[int, ...]
    deadline: PintQuantity[Any] | None
    budget: PintQuantity[Any] | None
    carried: Rescaled | None = None  # a measurement on one device, its factor for every device (sizer.measured)
    asked: Asked[RecommendRequest] | None = None  # the request on its catalog: the device measured on found once
    kept: Basis | None = None  # its layouts, where quick_question found them kept (not looked up again)


def _question(request: RecommendRequest | None, catalog: Catalog) -> _Question:
    """The request checked, with its defaults, its job and the devices and counts it ranks."""
    if request is None:
        request = RecommendRequest(**_default_fields())
    elif request.params is None and request.samples is None and request.tokens is None \
            and request.model is None and request.workload is None:
        defaults = _default_fields()
        request = request.model_copy(update={k: v for k, v in defaults.items() if k not in request.model_fields_set})
    cloud = check_provider(request.cloud, catalog)
    if cloud != request.cloud:
        request = request.model_copy(update={"cloud": cloud})
    deadline, budget = request.deadline, request.budget
    if not request.kinds:
        raise InputError("kinds", request.kinds, f"at least one of {', '.join(CATALOG_KINDS)}")
    job = resolve_job(request)
    kinds = tuple(request.kinds)
    devices = _devices(catalog, kinds)
    if not devices:
        raise InputError("kinds", request.kinds, "kinds of device the catalog has")
    check_search_grid(len(devices), request.max_devices, job.batch_size)
    asked = on_catalog(request, catalog)  # the ranking's one join of request and catalog (its device measured on)
    carried = None  # with neither measurement field nothing is carried over and nothing can be refused:
    if request.measured is not None or request.measured_on is not None:  # the time estimate imported only here
        from sizer.measured import carried_to_every_device
        from sizer.schemas.time_and_memory import TimeRequest
        from sizer.training.estimates import time_on

        carried = carried_to_every_device(asked, time_on, TimeRequest)
    return _Question(request, job, kinds, devices, _counts(request.max_devices), deadline, budget, carried, asked)


def _recommend(request: RecommendRequest | None, catalog: Catalog, question: _Question | None = None) -> dict[str, Any]:
    question = question or _question(request, catalog)
    request, job, devices = question.request, question.job, question.devices
    deadline, budget = question.deadline, question.budget
    described = ("default: " + DEFAULT_WORKLOAD_DESCRIPTION) if _is_default(request) else "given: " + job.summary
    pricing = request.pricing or request.purchase
    found = _search(question, catalog, pricing)
    rejected = _unserved(found, devices, request.max_devices)
    options = _options(found, pricing)
    keep, over_budget = _within_budget(options, devices, budget, pricing)
    rejected += over_budget
    order, apart, flags = _rank(options, keep, request.objective)
    unit = time_unit(float(options.run_seconds[keep].max(initial=0.0)))
    ranked, listed_apart = _rows(found, options, order, apart, flags, question, unit)
    k1 = estimate_k1(job.workload.params, job.workload.samples, request.features) if request.features is not None else None
    host = _host(found.basis, options, order, apart, job, request.storage)
    assumptions = _recommend_assumptions(found, options, question, pricing, len(apart), ranked + listed_apart)
    if _achieved_applies(question):
        assumptions.append(Assumption(
            name="achieved, not only possible", value="each device's time is what published runs on its device "
            "family achieved against the best layout sizer finds (sizer.engine.achieved), as `sizer time` answers "
            "with no layout; that layout's own time is the upper bound", source=achieved.SOURCE, verified=False))
    if request.mfu is not None:  # a what-if: said first, and no fitted range
        from sizer.measured import mfu_assumption

        assumptions = [mfu_assumption(request.mfu), *(a for a in assumptions if a.name != "range")]
    if question.carried is not None:  # a measurement carried over: said first, with reference mode's range
        from sizer.measured import rescaled_assumption

        assumptions = [*rescaled_assumption(question.carried), *(a for a in assumptions if a.name != "range")]
    # the fields of a RecommendResult in its order; recommend() validates them into one, recommend_json() writes them
    return dict(workload=described, objective=request.objective, purchase=request.purchase, pricing=pricing,
                ranked=ranked, unpriced=listed_apart, ranked_total=len(order), unpriced_total=len(apart),
                rejected=rejected, k1=k1, host=host, assumptions=assumptions,
                deadline=None if deadline is None else dict(value=float(deadline.to(unit).magnitude), unit=unit),
                budget=None if budget is None else dict(value=float(budget.to("USD").magnitude), unit="USD"),
                limited_by=_limited_by(rejected, len(order), len(apart), request.max_devices, pricing))


def _limited_by(rejected: list[dict[str, Any]], ranked: int, apart: int, max_devices: int, pricing: str) -> str | None:
    """Where nothing is ranked, the limits that hid an answer and what to change: devices listed apart without a
    price of the basis, the deadline at the device cap (the closest device's shortfall over the cap, as the count
    that would meet it with linear scaling: a lower bound, rounded up to a power of two), the budget."""
    if ranked:
        return None
    said = []
    if apart:
        said.append(f"{apart} device(s) serve it without a {PRICE_WORD[pricing]} price: they are listed apart "
                    "(--pricing any or buy prices them by purchase)")
    late = [r for r in rejected if r["cause"] == "deadline" and r["shortfall"]]
    if late:
        closest = min(late, key=lambda r: r["shortfall"])
        needed = 1 << math.ceil(math.log2(max_devices * closest["shortfall"]))
        said.append(f"no device meets the deadline within --max-devices {max_devices}: the closest, {closest['name']}, "
                    f"takes {closest['shortfall'] - 1:.0%} longer than the deadline at that count; try --max-devices {needed} (the count it "
                    "would need if it scaled linearly)")
    if any(r["cause"] == "budget" for r in rejected):
        said.append("some devices meet the rest but cost more than the budget")
    return "; ".join(said) or None


class _Search(NamedTuple):
    """The search's answer for every device (rows) and count (columns), and the count each device is shown at."""

    basis: Basis  # the kept layouts and their figures per step
    prices: dict[str, Any]  # :func:`_price_arrays`
    seconds: np.ndarray  # the run's length [s]
    ok: np.ndarray  # the options a device may be shown at
    pick: np.ndarray  # per device: the column of its chosen count
    served: np.ndarray  # per device: whether it serves the question
    deadline_s: float | None  # the deadline [s]


def _search(question: _Question, catalog: Catalog, pricing: str) -> _Search:
    """Every device at every count (the one layout search, :func:`sizer.plan.layout_basis.basis`) and the
    count each device is shown at (:func:`_choose`).

    Parameters
    ----------
    question : _Question
        The checked request, its job, devices and counts [1].
    catalog : Catalog
        The catalog the devices come from (its key names the kept searches).
    pricing : str
        rent, buy or any: a device is shown at a count some offer of this basis can run, where one is.

    Returns
    -------
    _Search
        Per device and count the run's length [s] and which options may be shown; per device the
        chosen count and whether it serves.
    """
    request, job, devices, kinds = question.request, question.job, question.devices, question.kinds
    b = question.kept or basis(job, _space(question, catalog))
    if request.mfu is not None:  # a given MFU: every time C / (n R_peak MFU)
        from sizer.measured import at_mfu  # a what-if's module, imported only for one (~8 ms of a start-up)

        b = at_mfu(b, request.mfu)
    if _achieved_applies(question):  # each device at what published runs on its family achieved, as `time` answers
        b = _at_achieved_pace(b, devices, (catalog.key, kinds))
    if question.carried is not None:  # a measurement on one device (against `time`'s answer there), carried over
        from sizer.measured import at_speed

        b = at_speed(b, question.carried)
    check_deadline()
    deadline_s = float(question.deadline.to("s").magnitude) if question.deadline is not None else None
    prices = _price_arrays(devices, (catalog.key, kinds), request.cloud, tuple(b.counts.astype(int).tolist()),
                           tuple(request.terms))
    seconds = b.step_expected * b.steps(job)  # per device and count: the run's length applied to the kept layouts
    count_grid = np.broadcast_to(b.counts, seconds.shape)
    # counts that run the asked batch (or one within 2 % of it: a rounded published batch, issue 39) first; a
    # device's others only where none of its counts does, and never for a batch the user gave (such a device is
    # rejected, saying so)
    near = b.exact | (job.batch_given & (np.abs(b.batch / max(1.0, round(job.batch_size)) - 1.0)
                                         <= BATCH_ROUNDING + 1e-12))
    ok = b.found & (near | (not job.batch_given and ~(b.found & near).any(axis=1, keepdims=True)))
    # a device is shown at a count some offer of the asked basis can run, where one is; else at its best count, unpriced
    priced = _priced_counts(prices, pricing, seconds.shape)
    pick, served = _choose(seconds, count_grid, ok & priced, deadline_s)
    pick_any, served_any = _choose(seconds, count_grid, ok, deadline_s)
    pick, served = np.where(served, pick, pick_any), served | served_any
    return _Search(b, prices, seconds, ok, pick, served, deadline_s)


def _unserved(found: _Search, devices: tuple[Device, ...], max_devices: int) -> list[dict[str, Any]]:
    """A rejection (:class:`RejectedDevice`'s fields) for each device that serves at no count: the search's
    reason, else the deadline it misses at its fastest count.

    Parameters
    ----------
    found : _Search
        The search's answer.
    devices : tuple of Device
        The devices searched, in the rows' order.
    max_devices : int
        The most devices tried [1], said in a missed deadline.
    """
    b, seconds, ok = found.basis, found.seconds, found.ok
    rejected: list[dict[str, Any]] = []
    for i in np.flatnonzero(~found.served):
        device = devices[i]
        reason, cause, shortfall = b.unserved[i] or (None, "deadline", None)
        if reason is None and not ok[i].any():  # layouts fit, but none runs the batch the user gave
            near = int(np.argmax(b.found[i]))
            reason = (f"no count up to {int(b.counts[-1]):,} splits the asked batch into whole micro-batches on every "
                      f"replica (the nearest run: {b.batch[i, near]:,.0f} on {int(b.counts[near]):,})")
            cause = "batch"
        elif reason is None:  # something fits: it misses the deadline
            fastest = int(np.argmin(np.where(ok[i], seconds[i], np.inf)))
            reason = (f"misses deadline: {seconds[i, fastest] * unit_factor('s', 'day'):.3g} days expected with "
                      f"{int(b.counts[fastest])} device(s) (max_devices {max_devices})")
            shortfall = float(seconds[i, fastest] / found.deadline_s)
        rejected.append(dict(device=device.id, name=device.name, reason=reason, cause=cause, shortfall=shortfall, suggestions=[]))
    return rejected


class _Options(NamedTuple):  # a record, not a dataclass: a third of the start-up cost of one (Python 3.11)
    """Per device that serves (in the order of ``device_row``), at its chosen count: the run and its costs."""

    device_row: np.ndarray  # the device's row in the search
    column: np.ndarray  # the chosen count's column
    device_count: np.ndarray  # devices [1]
    run_seconds: np.ndarray  # the run's length [s]
    rent: np.ndarray  # rent of the offer that runs this many devices [USD]; NaN: none
    buy: np.ndarray  # amortised purchase plus energy [USD]
    energy_kwh: np.ndarray  # energy [kWh]
    order_cost: np.ndarray  # the one cost the device is ranked by [USD]
    basis_of: np.ndarray  # that cost's basis: "rent" or "buy"
    spent: np.ndarray  # what the budget is checked against [USD]: the rent, or the capital of a purchase


def _options(found: _Search, pricing: str) -> _Options:
    """The costs of every device that serves at its chosen count, and the one cost it is ranked and
    budgeted by, with its basis (never mixed unlabelled).

    Parameters
    ----------
    found : _Search
        The search's answer.
    pricing : str
        rent, buy or any (rent where an offer runs the count, else the amortised purchase).
    """
    prices, b = found.prices, found.basis
    index = np.flatnonzero(found.served)
    column = found.pick[index]
    count = b.counts[column]
    run_seconds = found.seconds[index, column]
    hours = run_seconds * unit_factor("s", "hour")
    device_hours = count * hours
    rent = prices["rent"][index, column] * device_hours  # the offer that runs this many devices
    capital = prices["buy"][index] * count
    buy = (prices["amortised"][index] + prices["energy"][index]) * device_hours
    energy_kwh = prices["kwh"][index] * device_hours
    use_buy = np.full(len(index), pricing == "buy") if pricing != "any" else np.isnan(rent)
    return _Options(device_row=index, column=column, device_count=count, run_seconds=run_seconds, rent=rent, buy=buy,
                    energy_kwh=energy_kwh, order_cost=np.where(use_buy, buy, rent),
                    basis_of=np.where(use_buy, "buy", "rent"), spent=np.where(use_buy, capital, rent))


def _within_budget(options: _Options, devices: tuple[Device, ...], budget: PintQuantity[Any] | None,
                   pricing: str) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Which options stay within ``budget``, and a rejection for each that does not or has no price to
    check it against.

    Parameters
    ----------
    options : _Options
        The devices that serve, at their chosen counts.
    devices : tuple of Device
        The devices searched, in the search's rows' order.
    budget : Quantity or None
        The most money to spend [currency]; None: no budget.
    pricing : str
        rent, buy or any: named where a price is missing.
    """
    keep = np.ones(len(options.device_row), dtype=bool)
    rejected: list[dict[str, Any]] = []
    if budget is None:
        return keep, rejected
    limit = float(budget.to("USD").magnitude)
    spent = options.spent
    for k in np.flatnonzero(np.isnan(spent) | (spent > limit)):
        device = devices[options.device_row[k]]
        if np.isnan(spent[k]):
            reason, cause = f"no {PRICE_WORD[pricing]} price in the catalog to check the budget against", "price"
        else:
            what = "capital" if options.basis_of[k] == "buy" else "rent"
            reason = f"over budget: {what} {spent[k]:,.0f} USD for {int(options.device_count[k])} device(s) against {limit:,.0f} USD"
            cause = "budget"
        rejected.append(dict(device=device.id, name=device.name, reason=reason, cause=cause, shortfall=None, suggestions=[]))
        keep[k] = False
    return keep, rejected


def _rank(options: _Options, keep: np.ndarray, objective: Objective) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ranking: the priced options kept, in the order of ``objective``; the unpriced ones apart, by time;
    and which options are on the Pareto front of their price basis.

    Parameters
    ----------
    options : _Options
        The devices that serve, at their chosen counts.
    keep : numpy.ndarray of bool
        The options within the budget.
    objective : str
        time (fastest first), cost (cheapest first, rents before purchases) or pareto (the front first).

    Returns
    -------
    tuple of numpy.ndarray
        Positions in ``options`` of the ranked and of the unpriced rows, and the Pareto flag of each option.
    """
    order_cost, basis_of, run_seconds = options.order_cost, options.basis_of, options.run_seconds
    priced = keep & ~np.isnan(order_cost)
    unpriced = np.flatnonzero(keep & np.isnan(order_cost))
    candidates = np.flatnonzero(priced)
    flags = np.zeros(len(options.device_row), dtype=bool)
    for side in PRICE_BASES:  # a Pareto front of one basis at a time
        group = candidates[basis_of[candidates] == side]
        flags[group] = _front(run_seconds[group], order_cost[group])
    t, c = run_seconds[candidates], order_cost[candidates]
    if objective == Objective.TIME:
        order = candidates[np.lexsort((c, t))]
    elif objective == Objective.COST:  # one basis per ranked column: rents first, then purchases, each by cost
        order = candidates[np.lexsort((t, c, basis_of[candidates] == "buy"))]
    else:
        order = candidates[np.lexsort((t, ~flags[candidates]))]
    apart = unpriced[np.argsort(run_seconds[unpriced], kind="stable")]
    return order, apart, flags


def _rows(found: _Search, options: _Options, order: np.ndarray, apart: np.ndarray, flags: np.ndarray,
          question: _Question, unit: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The shown rows (:class:`RankedDevice`'s fields): the first ``top`` ranked, and the first ``top``
    unpriced, each ranked from 1.

    Parameters
    ----------
    found : _Search
        The search's answer.
    options : _Options
        The devices that serve, at their chosen counts.
    order, apart : numpy.ndarray
        Positions in ``options`` of the ranked and of the unpriced rows, in order.
    flags : numpy.ndarray of bool
        Per option, whether it is on the Pareto front.
    question : _Question
        The checked request (its ``top``, interruptions) and job.
    unit : str
        The unit the training times are given in.
    """
    b, request = found.basis, question.request
    index, column, count, run_seconds = options.device_row, options.column, options.device_count, options.run_seconds
    # the one summary (sizer.engine.summary, kept with the layouts): each bound at least the physical
    # limit, MFU at the floored step
    step_expected = np.maximum(b.step_expected[index, column], 1e-300)
    floor_low, floor_high = b.step_low[index, column] / step_expected, b.step_high[index, column] / step_expected
    top = request.top if request.top is not None else len(index)

    shown = np.concatenate([order[:top], apart[:top]])
    i_of, j_of = index[shown], column[shown]
    # the shown rows' figures as Python numbers, read out of the arrays at once
    columns = dict(
        count=count[shown], zero=b.zero[i_of, j_of], tp=b.tp[i_of, j_of], pp=b.pp[i_of, j_of], ep=b.ep[i_of, j_of],
        recompute=b.recompute[i_of, j_of], micro_batch=b.micro_batch[i_of, j_of],
        time=run_seconds[shown] * unit_factor("s", unit), rent=options.rent[shown], buy=options.buy[shown],
        kwh=options.energy_kwh[shown], low=floor_low[shown], high=floor_high[shown],
        memory=b.memory_needed[i_of, j_of] * unit_factor("B", "GB"),
        capacity=b.table.memory[i_of] * unit_factor("B", "GB"), fits=b.fits[i_of, j_of], bound=b.bound[i_of, j_of],
        mfu=b.mfu[i_of, j_of], pareto=flags[shown], cost=options.order_cost[shown], basis=options.basis_of[shown],
        lost=_interruption_factor(request, question.job, b.table, i_of, run_seconds[shown], count[shown]))
    values = {name: array.tolist() for name, array in columns.items()}

    def row(n: int, rank: int) -> dict[str, Any]:
        i = i_of[n]
        price = functools.partial(_row_price, found.prices, question.devices[i], i, j_of[n])
        return _row({name: figures[n] for name, figures in values.items()}, rank, question.devices[i],
                    b.table.precisions[i], price, unit)

    first = len(order[:top])
    return [row(n, n + 1) for n in range(first)], [row(n, n - first + 1) for n in range(first, len(shown))]


def _row(v: dict[str, Any], rank: int, device: Device, precision: str,
         price: Callable[[str | None], dict[str, Any] | None], unit: str) -> dict[str, Any]:
    """One shown row (:class:`RankedDevice`'s fields) from its figures ``v`` as Python numbers: times in
    ``unit``, costs [USD], energy [kWh], memory [GB]; ``low`` and ``high`` the range's factors [1];
    ``price(basis)`` the price behind its cost."""
    lo, hi = v["low"], v["high"]

    def span(value: float, u: str) -> dict[str, Any]:
        return dict(low=value * lo, expected=value, high=value * hi, unit=u)

    cost_basis = None if math.isnan(v["cost"]) else v["basis"]
    return dict(
        rank=rank, device=device.id, name=device.name, kind=device.kind, count=int(v["count"]),
        sharding="full" if v["zero"] == 3 else "none", zero=int(v["zero"]), tp=int(v["tp"]), pp=int(v["pp"]),
        ep=int(v["ep"]), recompute=RECOMPUTE[int(v["recompute"])], precision=precision,
        micro_batch=v["micro_batch"], training_time=span(v["time"], unit),
        training_time_with_interruptions=None if math.isnan(v["lost"]) else span(v["time"] * v["lost"], unit),
        cost=dict(rent=None if math.isnan(v["rent"]) else dict(span(v["rent"], "USD"), price_basis="rent"),
                  buy=None if math.isnan(v["buy"]) else dict(span(v["buy"], "USD"), price_basis="buy"),
                  price_basis=cost_basis),
        price_basis=cost_basis, price=price(cost_basis), energy=None if math.isnan(v["kwh"]) else span(v["kwh"], "kWh"),
        memory_per_device=dict(value=v["memory"], unit="GB"), device_memory=dict(value=v["capacity"], unit="GB"),
        fits=v["fits"], bound=BOUNDS[int(v["bound"])], mfu=v["mfu"], pareto=v["pareto"])


def _host(b: Basis, options: _Options, order: np.ndarray, apart: np.ndarray, job: Job,
          storage: StorageClass) -> HostResult | None:
    """The host that keeps the first row fed at the fast end of its range (:func:`estimate_host`), where
    the workload states its sample size and some device serves; else None.

    Parameters
    ----------
    b : Basis
        The kept layouts.
    options : _Options
        The devices that serve, at their chosen counts.
    order, apart : numpy.ndarray
        Positions in ``options`` of the ranked and of the unpriced rows.
    job : Job
        The workload (its samples and sample size [B]).
    storage : StorageClass
        The storage the samples are read from.
    """
    if job.workload.sample_size is None or not (len(order) or len(apart)):
        return None
    k = order[0] if len(order) else apart[0]
    i, j = options.device_row[k], options.column[k]
    fastest_step = b.step_low[i, j]  # the host must keep up with the fast end
    rate = b.batch[i, j] * job.tokens_per_sample / fastest_step
    from sizer.formulas.host import estimate_host  # only where a sample size is given

    return estimate_host(job.samples, job.workload.sample_size, Quantity(rate, "sample/s"), storage)


def _recommend_assumptions(found: _Search, options: _Options, question: _Question, pricing: str, unpriced: int,
                           rows: list[dict[str, Any]]) -> list[Assumption]:
    """The recommendation's assumptions: the job's, interruptions where a row shows them, how counts and
    layouts are chosen, the range, the network, the pricing and costs, and any batch changed.

    Parameters
    ----------
    found : _Search
        The search's answer.
    options : _Options
        The devices that serve, at their chosen counts.
    question : _Question
        The checked request and its job.
    pricing : str
        rent, buy or any.
    unpriced : int
        Devices that serve without a price of the basis [1].
    rows : list of dict
        The shown rows.
    """
    request, job, b = question.request, question.job, found.basis
    assumptions = list(job.assumptions)
    if any(r["training_time_with_interruptions"] for r in rows):
        from sizer.engine.goodput import stated

        assumptions.append(stated())
    assumptions += [
        Assumption(name="device counts", value=COUNT_CHOICE.format(knee=KNEE_COST - 1) + f"; counts 1, 2, 4 ... {request.max_devices}",
                   source="sizer's default criterion"),
        _LAYOUTS,
        Assumption(name="range", value=f"{b.range_low.min():.3g}-{b.range_high.max():.3g} x expected at most, per device by its kind "
                   "and the workload's", source=b.range_source),  # kept with the search: no spread file read here
        _BETWEEN_NODES,
        *([_software_stacks()] if job.arch is not None else []),  # the factors apply to generated transformers
        Assumption(name="pricing", value=PRICING_SAID[pricing] + f"; offer terms: {', '.join(request.terms)}" + (
            f"; {unpriced} device(s) without such a price listed apart (unpriced)" if unpriced else ""),
                   source="--pricing rent|buy|any; sizer/formulas/tco.py hourly_price"),
        *_cost_assumptions(),
    ]
    devices = question.devices
    inexact = ~b.exact[options.device_row, options.column]  # read at once: a question has ~200 options, few of them inexact
    changed = [f"{devices[i].name} x {int(b.counts[j])}: {b.batch[i, j]:,.0f}"
               for i, j in zip(options.device_row[inexact], options.column[inexact], strict=True)]
    if changed:  # the one search's rule (sizer.engine.evaluate): the nearest batch some layout runs, said
        assumptions.append(Assumption(
            name="batch size changed", value=f"{max(1.0, round(job.batch_size)):,.0f} {job.sample_word}s per step "
            + ("asked; " if job.batch_given else "by default; ") +
            f"run instead (the nearest batch whole micro-batches on every replica make): {'; '.join(changed)}",
            source="sizer's layout search" + ("" if job.batch_given else "; the batch is the default: give --batch-size")))
    return assumptions


_LAYOUTS = Assumption(name="layouts", value="per device and count, the fastest that fits (the one layout search: tensor, "
                      "pipeline and context parallel, expert parallel for a mixture of experts, ZeRO 0-3, recomputation, "
                      "whole micro-batches; sizer plan ranks them)", source="sizer's layout search")
_BETWEEN_NODES = Assumption(name="between nodes", value="data-centre parts 8 to a node with a 400 Gb/s NIC per device; other "
                            "GPUs 4 to a host on 100 Gb/s Ethernet; a count larger than one rented instance is priced "
                            "only from a cluster offer whose seller states at least this network (each row's price "
                            "says which)", source="sizer/engine/constants.py (docs/references.md)")


def _software_stacks() -> Assumption:
    """Why devices of one vendor rank below their datasheet peaks against another's: the fitted stack factors."""
    from sizer.engine.constants import stack_factors_said

    return Assumption(name="software stacks", value=stack_factors_said(), verified=False,
                      source="MLPerf Training results against NVIDIA's on the same benchmark (benchmarks/vendor_efficiency.py)")


def warm_up(catalog: Catalog, searches: bool = False) -> None:
    """Build once what every recommendation over ``catalog`` reads, before anyone asks: the device
    tables at the default workload's precision and the price arrays (some 20 ms a process pays once;
    a service does it at start so that its first question does not). Layout searches stay per shape.

    Parameters
    ----------
    catalog : Catalog
        The catalog the service answers from.
    searches : bool, default False
        Also import the layout search (a process that will search: a service's worker; about 60 ms of its
        first search otherwise, with the tables).
    """
    if searches:
        prepare_search()
    request = RecommendRequest()
    kinds = tuple(request.kinds)
    devices = _devices(catalog, kinds)
    _price_arrays(devices, (catalog.key, kinds), request.cloud, _counts(request.max_devices))
    job = resolve_job(RecommendRequest(**_default_fields()))
    for transformer in (True, False):  # a named or generated model; a profiled workload
        cached_device_table(devices, job.precision, transformer)


def _default_fields() -> dict[str, Any]:
    """:func:`sizer.schemas.base.default_workload`'s fields as validated, by the recommendation's own request model:
    the same values (a test compares them) without building the plain workload model's validator, ~5 ms of
    `sizer recommend`'s start-up."""
    return RecommendRequest(**DEFAULT_WORKLOAD_FIELDS).model_dump(exclude_unset=True)


@registered_cache()
def _cost_assumptions() -> tuple[Assumption, ...]:
    """The cost defaults as stated (formatted once: the defaults are constants)."""
    costs = COST_DEFAULTS
    return (Assumption(name="lifetime", value=lifetime_words(costs.lifetime), source=costs.lifetime_source),
            Assumption(name="PUE", value=f"{costs.pue:g}", source=costs.pue_source),
            Assumption(name="electricity price", value=f"{costs.electricity_price:~P}", source=costs.electricity_source))


def _is_default(request: RecommendRequest) -> bool:
    # the default's fields as given: they validate to themselves (a test checks), so none is validated per question
    return all(getattr(request, k) == v for k, v in DEFAULT_WORKLOAD_FIELDS.items()) and request.model is None \
        and request.workload is None and request.batch_size is None and request.seq_len is None


def suggest_for_rejected(request: RecommendRequest, result: RecommendResult,
                         question: Asked[RecommendRequest]) -> RecommendResult:
    """``result`` (a recommendation) with the changes that would make its rejected devices work, for the
    first ``request.suggest`` of those that do not fit or miss the deadline, the nearest to working first
    (``shortfall``); each change is evaluated again at the largest count the search tried.

    Parameters
    ----------
    request : RecommendRequest
        The recommendation's request (``suggest`` [1], ``deadline`` [time], ``max_devices`` [1]).
    result : RecommendResult
        Its answer.
    question : Asked of RecommendRequest
        The request on its catalog (:func:`sizer.asked.on_catalog`): the devices and their prices, the device
        measured on.

    Returns
    -------
    RecommendResult
        ``result`` with ``suggestions`` filled in on the chosen rejected rows (the others unchanged);
        ``result`` itself for the built-in default workload.
    """
    if all(getattr(request, k) is None for k in ("params", "samples", "tokens", "model", "workload")):
        return result  # the built-in default workload: nothing of the user's to change
    from pydantic import ValidationError

    from sizer.plan.owned import Owned, evaluate_training, training_request
    from sizer.plan.suggestions import training_suggestions  # the planner's what-to-change, on a few rows only

    asked = training_request(request)
    deadline_s = None
    if request.deadline is not None:
        deadline_s = float(request.deadline.to("s").magnitude)
    count = 1 << (int(request.max_devices).bit_length() - 1)  # the largest power of two the search tried
    wanted = [r for r in result.rejected if r.cause in ("memory", "deadline") and r.shortfall is not None]
    chosen = {r.device for r in sorted(wanted, key=lambda r: r.shortfall or 0.0)[:request.suggest]}  # all have one
    rows = []
    for row in result.rejected:
        if row.device in chosen:
            device = question.catalog.devices[row.device]  # a row of the ranking: its catalog id, not a user's name
            try:
                outcome = evaluate_training(asked, device, count, question, request.cloud)
                found = training_suggestions(asked, Owned(count=count, device=device), question, outcome,
                                             deadline_s=deadline_s if row.cause == "deadline" else None, cloud=request.cloud)
            except (SizerError, ValidationError):  # this device cannot take the question at that count
                found = []
            row = row.model_copy(update={"suggestions": found})
        rows.append(row)
    return result.model_copy(update={"rejected": rows})
