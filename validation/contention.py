"""Contention on a shared machine: what other processes take of the CPU before and during a run.

A CPU run measured beside other work measures the neighbours too: on a 2-core Xeon, half the CPU
taken by other processes made an MLP step 30 times slower (12.5 ms quiet, 380 ms loaded;
``shared/data/validation-runs/intel-xeon-2core-2026-11-26-under-load``). That report counted 5
runs as quiet because they were too short for the sampler to see their neighbours (one to four
samples of 0.1 s). So the suite here

* gives torch one thread per *free* core, counted before the suite starts (:func:`free_cores`);
* measures the foreign load for a moment before each run as well as during it, and trusts a
  "quiet" verdict only from enough samples (:func:`contention_of`);
* re-measures a contended run once after waiting for quiet, and otherwise keeps it out of the
  headline figures with the reason (:func:`headline_exclusions`).
"""
from __future__ import annotations

import time

QUIET_PERCENT = 10.0  # other processes' CPU above this (percent of the whole machine) contend with a run
MIN_SAMPLES = 5  # fewer samples during a run than this cannot show that it ran alone
BEFORE_SECONDS = 0.5  # the look at the machine before a run
QUIET_WAIT_SECONDS = 10.0  # how long a contended run waits for quiet before it is measured again


def foreign_cpu_percent(seconds: float = BEFORE_SECONDS) -> float:
    """CPU taken by other processes over ``seconds``, in percent of the whole machine [%].

    The machine's busy share (psutil) less this process's and its children's.
    """
    import psutil

    process = psutil.Process()
    children = process.children(recursive=True)
    psutil.cpu_percent(None)
    process.cpu_percent(None)
    for child in children:
        try:
            child.cpu_percent(None)
        except psutil.Error:
            pass
    time.sleep(seconds)
    system = psutil.cpu_percent(None)
    own = process.cpu_percent(None)
    for child in children:
        try:
            own += child.cpu_percent(None)
        except psutil.Error:
            pass
    return max(0.0, system - own / (psutil.cpu_count() or 1))


def free_cores(cores: int, foreign_percent: float) -> int:
    """Cores left to a run when other processes take ``foreign_percent`` of the machine [%].

    >>> free_cores(2, 4.0)
    2
    >>> free_cores(2, 51.0)
    1
    >>> free_cores(16, 100.0)
    1
    """
    busy = round(cores * min(max(foreign_percent, 0.0), 100.0) / 100.0)
    return max(1, cores - busy)


def contention_of(before_percent: float, during: dict | None) -> dict:
    """One run's contention: the foreign CPU before and during it, and whether it ran alone.

    Parameters
    ----------
    before_percent : float
        Other processes' CPU in the moment before the run [%].
    during : dict or None
        The sampler's summary of ``other_processes_cpu_percent`` during the run
        (``mean``, ``max``, ``samples``), or None where it took no sample.

    Returns
    -------
    dict
        ``before_percent``, ``during_percent``, ``during_samples``, ``percent`` (the larger of
        the two, the figure a run is judged by) and ``contended``; a run whose time shows too few
        samples is judged by the look before it as well, never by its own silence alone.

    >>> contention_of(2.0, {"mean": 1.0, "max": 3.0, "samples": 20})["contended"]
    False
    >>> contention_of(48.0, {"mean": 0.0, "max": 0.0, "samples": 1})["contended"]
    True
    """
    samples = int(during.get("samples", 0)) if during else 0
    during_percent = float(during["mean"]) if during else None
    percent = max(before_percent, during_percent or 0.0)
    return {"before_percent": before_percent, "during_percent": during_percent, "during_samples": samples,
            "percent": percent, "contended": percent > QUIET_PERCENT}


def _watched_load(run: dict) -> float | None:
    """Foreign CPU during a run that the sampler saw long enough to judge [%], else None."""
    during = run["measured"].get("loads", {}).get("other_processes_cpu_percent")
    return float(during["mean"]) if during and int(during.get("samples", 0)) >= MIN_SAMPLES else None


def recorded_contention(runs: list[dict], index: int) -> dict:
    """The contention of ``runs[index]`` as its report holds it.

    A report from before the look ahead of each run (no ``contention`` field) judges a run whose
    time held too few samples by the nearest well-watched runs measured before and after it
    (the report lists runs in the order they ran); with none, its contention is unknown and it
    counts as contended: the suite cannot say that it ran alone.
    """
    measured = runs[index]["measured"]
    if "contention" in measured:
        return measured["contention"]
    during = measured.get("loads", {}).get("other_processes_cpu_percent")
    if _watched_load(runs[index]) is not None:
        return {**contention_of(0.0, during), "before_percent": None}
    earlier = next((load for run in reversed(runs[:index]) if (load := _watched_load(run)) is not None), None)
    later = next((load for run in runs[index + 1:] if (load := _watched_load(run)) is not None), None)
    around = [load for load in (earlier, later) if load is not None]
    if not around:
        return {**contention_of(0.0, during), "before_percent": None, "contended": True, "unknown": True}
    return {**contention_of(max(around), during), "before_percent": None, "around_percent": max(around)}


def headline_exclusions(runs: list[dict]) -> dict[str, str]:
    """The runs kept out of the headline figures, by id, each with the reason."""
    reasons = {}
    for index, run in enumerate(runs):
        verdict = recorded_contention(runs, index)
        if not verdict["contended"]:
            continue
        if verdict.get("unknown"):
            reasons[run["id"]] = (f"contention unknown: {verdict['during_samples']} load sample(s) during the run "
                                  f"(at least {MIN_SAMPLES} are needed) and no well-watched run beside it")
        else:
            reasons[run["id"]] = (f"ran beside other processes taking {verdict['percent']:.0f} % of the CPU "
                                  f"(quiet is at most {QUIET_PERCENT:.0f} %)")
    return reasons


def wait_for_quiet(timeout: float = QUIET_WAIT_SECONDS) -> float:
    """Wait up to ``timeout`` seconds for the other processes to fall quiet; the last foreign load [%]."""
    deadline = time.monotonic() + timeout
    load = foreign_cpu_percent()
    while load > QUIET_PERCENT and time.monotonic() < deadline:
        load = foreign_cpu_percent()
    return load
