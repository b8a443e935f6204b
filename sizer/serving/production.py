"""What a production serving ranking (`sizer recommend --inference`) searches, and how hard it loads a deployment.

**Devices**: data-centre devices by default (:mod:`sizer.serving.segment`); consumer and workstation
cards and machines only when asked (``consumer``, the CLI's ``--consumer``), or when named with ``have``
(an answer on the hardware one has, which searches nothing). The answer says which segments were
searched and how many devices each left out, and why.

**Headroom**: a deployment under load is sized so that the offered load is at most ``max_utilisation``
of what its replicas sustain within the SLOs (their bisected capacity; without SLOs the saturated
throughput), never the whole of it. The capacity is found at a steady Poisson rate; a service also
sees the rate itself vary above its stated mean, loses a replica now and then, and sizer's own
throughput is a range (on another source's serving runs it was 38 % optimistic, issue 38:
1 / 1.38 = 0.72 of the predicted capacity). Near saturation a queue's mean wait grows as
rho / (1 - rho) service times (M/M/1, docs/references.md [kleinrock1975]): 2.3 at 70 %, 19 at 95 %,
so a few per cent more load multiplies the queueing delay at 95 % and barely moves it at 70 %. The
default 0.7 keeps 30 % headroom for both reasons; ``max_utilisation`` (``--max-utilisation``) changes it.

>>> replicas_for(10.0, 7.0, 0.7)  # 10 req/s on replicas that sustain 7 req/s each, loaded to at most 70 %
3
>>> replicas_for(10.0, 7.0, 1.0)
2
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from sizer.errors import InputError
from sizer.hardware.schema import Device
from sizer.results import Assumption
from sizer.schemas.serving import DeviceSegmentsOut, LeftOut
from sizer.serving.segment import LEFT_OUT_REASON, SEGMENTS, SOURCE, Segment, segment

DEFAULT_MAX_UTILISATION = 0.7
HEADROOM_SOURCE = ("M/M/1 wait rho/(1-rho): docs/references.md [kleinrock1975]; sizer's throughput 38 % optimistic on "
                   "another source's serving runs (issue 38); --max-utilisation")


def max_utilisation(request: object) -> float:
    """The share of capacity a request lets the offered load reach [1]: its ``max_utilisation``, else the default.

    Parameters
    ----------
    request : object
        A serving request (its ``max_utilisation`` [1] or None).

    Returns
    -------
    float
        In (0, 1].
    """
    given = getattr(request, "max_utilisation", None)
    return float(given) if given is not None else DEFAULT_MAX_UTILISATION


def replicas_for(demand: float, per_replica: float, share: float) -> int:
    """The fewest replicas that carry ``demand`` with each loaded to at most ``share`` of ``per_replica``.

    Parameters
    ----------
    demand : float
        Requests/s (or users) offered in all [1/s or 1].
    per_replica : float
        What one replica sustains within the SLOs [1/s or 1]; positive.
    share : float
        Most utilisation allowed [1], in (0, 1].

    Returns
    -------
    int
        At least 1.
    """
    return max(1, math.ceil(demand / (per_replica * share) - 1e-9))


def headroom_assumption(share: float, given: bool) -> Assumption:
    """The headroom as an answer's assumption.

    Parameters
    ----------
    share : float
        Most utilisation allowed [1].
    given : bool
        Whether the request gave it.

    Returns
    -------
    Assumption
    """
    return Assumption(name="headroom", value=(
        f"replicas sized so that the offered load is at most {share:.0%} of their capacity within the SLOs "
        f"({1 - share:.0%} headroom) for rate peaks above the stated mean, a replica lost and sizer's own error: near "
        "saturation a queue's wait grows as rho/(1 - rho); each row says its utilisation (load / capacity) and the "
        "headroom left" + ("" if given else "; --max-utilisation to change")),
        source="given" if given else HEADROOM_SOURCE)


def production_devices(devices: Sequence[Device], consumer: bool) -> tuple[tuple[Device, ...], DeviceSegmentsOut]:
    """The devices a production ranking searches: data-centre ones, or every one with ``consumer``.

    Parameters
    ----------
    devices : sequence of Device
        The catalog's devices of the kinds asked.
    consumer : bool
        Also search consumer and workstation devices.

    Returns
    -------
    tuple
        The devices kept (in order) and the segments searched and left out.

    Raises
    ------
    InputError
        Naming ``consumer`` where no data-centre device of the kinds asked is in the catalog.
    """
    if consumer:
        return tuple(devices), DeviceSegmentsOut(searched=list(SEGMENTS), left_out=[])
    kept = tuple(d for d in devices if segment(d) == "data-centre")
    if not kept:
        raise InputError("consumer", False, "true: the catalog has no data-centre device of the kinds asked (consumer "
                                            "ranks consumer and workstation devices too)")
    counts: dict[Segment, int] = {}
    for d in devices:
        if (s := segment(d)) != "data-centre":
            counts[s] = counts.get(s, 0) + 1
    left = [LeftOut(segment=s, devices=counts[s], reason=LEFT_OUT_REASON[s]) for s in SEGMENTS if s in counts]
    return kept, DeviceSegmentsOut(searched=["data-centre"], left_out=left)


def segments_assumption(out: DeviceSegmentsOut) -> Assumption:
    """Which segments a ranking searched, as an answer's assumption.

    Parameters
    ----------
    out : DeviceSegmentsOut
        From :func:`production_devices`.

    Returns
    -------
    Assumption
    """
    if not out.left_out:
        return Assumption(name="devices", value="every segment: data-centre, workstation and consumer (consumer)",
                          source="given")
    left = "; ".join(f"{x.devices} {x.segment} devices left out: {x.reason}" for x in out.left_out)
    return Assumption(name="devices", value=f"data-centre devices only (a production ranking); {left}; --consumer "
                      "(HTTP consumer: true) ranks them too, --have answers on hardware one has", source=SOURCE)
