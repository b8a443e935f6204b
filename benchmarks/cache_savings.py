"""What each declared cache saves: representative commands and requests with it and without it.

    python benchmarks/cache_savings.py hits [--out benchmarks/results/cache_savings.json]
    python benchmarks/cache_savings.py table RUN.json [RUN.json ...]
    python benchmarks/cache_savings.py ab NAME[,NAME...] [--rounds 5] [--service WORKLOAD,...]

``hits``: each workload runs in a fresh process with every cache of :data:`sizer.memo.POLICIES`
counted: its hits, and the CPU time that recomputing a hit's answer takes (the cached function
called again, uncached, on the first hits' arguments, with the other caches as they are). The
saving of a cache in a workload is its hits times that mean recompute time: the time the
workload would take longer without that cache alone. Counting is exact and the recompute time is
measured at once, in the same process, so a shared machine's load moves both sides alike. The
workloads:

- the CLI commands ``peak "Tesla P40"``, ``recommend --params 7e9 --tokens 2e10`` (the contract
  check's question), ``time --model llama-2-7b ...``, ``inference --model llama-2-7b --rate 2``,
  ``sweep``, ``inference`` of a GGUF on an RTX 4090 (llama.cpp), ``models``, ``plan`` and
  ``recommend --inference`` (with and without ``--rate 2``), each a whole start-up (imports included, from a warm disk cache);
- a warm service (``TestClient``, after one request of each kind): every route, new questions
  where a route takes a body (``/v1/recommend`` as shared/checks/contract-engine asks them) and
  the same question 40 times; CPU time per request;
- the Python API: ``facade.estimate_time`` and ``facade.peak`` asked without a catalog, per pair.

A kept answer taken with ``peek`` (the layout search, the rendered recommendation) is counted but
not timed: its saving is measured with ``ab``.

``ab``: whole commands and the service with the named caches on and off (``SIZER_CACHES_OFF``),
interleaved round by round, CPU time (user + system); for the disk cache kinds and to check a
removal end to end (command ``recommend_new``: a question of a new shape each run). The load average is recorded beside every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from sizer.datafile import load_json, parse_json, write_text  # noqa: E402 (the checkout's core, after its path)

PYTHON = sys.executable
CLI = {
    "peak": ["peak", "Tesla P40", "--json"],
    "recommend": ["recommend", "--params", "7e9", "--tokens", "2e10", "--json"],
    "time": ["time", "--model", "llama-2-7b", "--tokens", "1e9", "--device", "H100 SXM", "--count", "8",
             "--precision", "bf16", "--json"],
    "inference": ["inference", "--model", "llama-2-7b", "--device", "H100 SXM", "--rate", "2", "--json"],
    "sweep": ["sweep", "--params", "7e9", "--tokens", "1e9", "--device", "H100 SXM", "--count", "8",
              "--precision", "bf16", "--format", "csv"],
    "local": ["inference", "--model", "llama-2-7b", "--weights", "q4_k_m", "--device", "RTX 4090", "--json"],
    "models": ["models", "--json"],
    "plan": ["plan", "--model", "llama-2-70b", "--tokens", "1e11", "--device", "H100 SXM", "--count", "64", "--json"],
    "recommend_inference": ["recommend", "--inference", "--model", "llama-2-7b", "--json"],
    "recommend_inference_rate": ["recommend", "--inference", "--model", "llama-2-7b", "--rate", "2", "--json"],
}
SAMPLED_HITS = 5  # hits per cache whose answer is recomputed to time it

# Counts every registered cache of the process: installed before the workload runs.
COUNTER = r'''
import functools, importlib, json, sys, time
from pathlib import Path
from sizer import memo

def _modules():
    root = Path(memo.__file__).resolve().parent.parent
    for folder in ("sizer", "api", "cli"):
        for path in sorted((root / folder).rglob("*.py")):
            if "registered_cache" in path.read_text(encoding="utf-8") and path.name != "memo.py":
                yield ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")

for name in _modules():
    importlib.import_module(name)
STATS = {}
RECOMPUTING = []  # a recompute in progress: the caches it calls are not counted

def _counted(name, kept):
    plain = kept.__wrapped__
    stats = STATS[name] = {"calls": 0, "hits": 0, "recompute_s": [], "maxsize": kept.cache_info().maxsize}

    @functools.wraps(kept)
    def counting(*args, **kwargs):
        if RECOMPUTING:
            return kept(*args, **kwargs)
        before = kept.cache_info().hits
        value = kept(*args, **kwargs)
        stats["calls"] += 1
        if kept.cache_info().hits > before:
            stats["hits"] += 1
            if len(stats["recompute_s"]) < SAMPLED_HITS:
                RECOMPUTING.append(name)
                start = time.process_time()
                try:
                    plain(*args, **kwargs)
                finally:
                    stats["recompute_s"].append(time.process_time() - start)
                    RECOMPUTING.pop()
        return value
    for attribute in ("cache_info", "cache_clear"):
        setattr(counting, attribute, getattr(kept, attribute))
    if hasattr(kept, "peek"):  # a kept answer taken without a call: counted, not timed (see the ab mode)
        stats["peek_hits"] = 0

        def peek(*args, **kwargs):
            found = kept.peek(*args, **kwargs)
            if found is not None and not RECOMPUTING:
                stats["peek_hits"] += 1
            return found
        counting.peek = peek
    return counting

live = memo.live_caches()
wrappers = {id(kept): _counted(name, kept) for name, kept in live.items()}
for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").split(".")[0] in ("sizer", "api", "cli"):
        for attribute, value in list(vars(module).items()):
            if id(value) in wrappers:
                setattr(module, attribute, wrappers[id(value)])

def report(total_s, requests=1):
    out = {name: {"calls": s["calls"], "hits": s["hits"], "peek_hits": s.get("peek_hits", 0), "maxsize": s["maxsize"],
                  "recompute_ms": 1000 * sum(s["recompute_s"]) / len(s["recompute_s"]) if s["recompute_s"] else 0.0,
                  "saving_ms": s["hits"] * 1000 * (sum(s["recompute_s"]) / len(s["recompute_s"]) if s["recompute_s"] else 0.0) / requests}
           for name, s in STATS.items() if s["calls"] or s.get("peek_hits")}
    print("RESULT " + json.dumps({"total_ms": 1000 * total_s / requests, "caches": out}))
'''

# The same workloads uncounted: their CPU time as users meet it.
NO_COUNTER = r'''
import json
STATS = {}
def report(total_s, requests=1):
    print("RESULT " + json.dumps({"total_ms": 1000 * total_s / requests}))
'''

RUN_CLI = r'''
import time
_start = time.process_time()
#COUNTER#
from typer.main import get_command
from cli.main import app
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    try:
        get_command(app)(#ARGS#, standalone_mode=False)
    except SystemExit:
        pass
report(time.process_time() - _start)
'''

RUN_SERVICE = r'''
#COUNTER#
import os, time
os.environ["SIZER_API_ESTIMATE_WORKERS"] = "0"  # every estimate in this process, where it is counted
from fastapi.testclient import TestClient
from api.app import create_app

client = TestClient(create_app())
def ask(path, body):
    r = client.get(path) if body is None else client.post(path, json=body)
    assert r.status_code == 200 or "-9-z" in str(body), (path, r.status_code, r.text[:300])
ask("/v1/recommend", {"params": 6e9, "tokens": 1e10}); ask("/v1/peak", {"device": "A100 80GB SXM4"})
ask("/v1/time", {"model": "llama-2-13b", "tokens": 1e9, "device": "A100 80GB SXM4", "count": 8})
ask("/v1/inference", {"model": "llama-2-13b", "device": "A100 80GB SXM4", "rate": 1})
for stats in STATS.values():
    stats.update(calls=0, hits=0, recompute_s=[], **({"peek_hits": 0} if "peek_hits" in stats else {}))
bodies = #BODIES#
ask(#PATH#, bodies[0])  # the route warmed; the rest are timed
for stats in STATS.values():
    stats.update(calls=0, hits=0, recompute_s=[], **({"peek_hits": 0} if "peek_hits" in stats else {}))
start = time.process_time()
for body in bodies[1:]:
    ask(#PATH#, body)
report(time.process_time() - start, len(bodies) - 1)
'''

SERVICE = {
    "http_recommend_new": ("/v1/recommend", [{"params": 7e9 + i * 1e6, "tokens": 2e10 + i * 1e7} for i in range(41)]),
    "http_recommend_same": ("/v1/recommend", [{"params": 7e9, "tokens": 2e10}] * 41),
    "http_peak": ("/v1/peak", [{"device": "Tesla P40"}] * 41),
    "http_time_new": ("/v1/time", [{"model": "llama-2-7b", "tokens": 1e9 + i * 1e7, "device": "H100 SXM", "count": 8,
                                    "precision": "bf16"} for i in range(11)]),
    "http_inference_new": ("/v1/inference", [{"model": "llama-2-7b", "device": "H100 SXM", "rate": 1 + i * 0.25}
                                             for i in range(7)]),
    "http_local_new": ("/v1/inference", [{"model": "llama-2-7b", "weights": "q4_k_m", "device": "RTX 4090",
                                          "prompt_len": 512 + i} for i in range(7)]),
    "http_recommend_inference_new": ("/v1/recommend", [{"task": "inference", "model": "llama-2-7b", "output_len": 200 + i}
                                                       for i in range(3)]),
    "http_memory_new": ("/v1/memory", [{"params": 7e9 + i * 1e6, "device": "H100 SXM", "precision": "bf16"}
                                       for i in range(10)]),
    "http_plan_new": ("/v1/plan", [{"model": "llama-2-70b", "tokens": 1e11 + i * 1e9, "device": "H100 SXM", "count": 64}
                                   for i in range(3)]),
    "http_tco_new": ("/v1/tco", [{"params": 7e9, "tokens": 2e10 + i * 1e8, "device": "H100 SXM", "count": 8}
                                 for i in range(10)]),
    "http_recommend_shapes": ("/v1/recommend", [{"params": (1 + i) * 1e9, "tokens": 2e10} for i in range(11)]),
    "http_time_profiled_new": ("/v1/time", [{"workload": "resnet50", "samples": 1.28e6 + i * 1e4, "epochs": 2,
                                             "batch_size": 1024, "device": "H100 SXM", "count": 8} for i in range(11)]),
    "http_time_system_new": ("/v1/time", [{"model": "llama-2-70b", "tokens": 1e10 + i * 1e8, "device": "H100 SXM",
                                           "count": 16, "system": "DGX H100"} for i in range(11)]),
    "http_bad_model": ("/v1/time", [{"model": f"llama-9-z{i}", "tokens": 1e10, "device": "H100 SXM"} for i in range(11)]),
    "http_models": ("/v1/models", [None] * 11),
    "http_catalog": ("/v1/catalog", [None] * 11),
    "http_catalog_device": ("/v1/catalog/h100-sxm5-80gb", [None] * 11),
}
# The Python API (sizer.facade, the one door): new questions asked without a catalog, in one process.
RUN_LIBRARY = r'''
#COUNTER#
import time
from sizer import facade
from sizer.training.estimates import TimeRequest
facade.estimate_time(TimeRequest(model="llama-2-13b", tokens=1e9, device="A100 80GB SXM4", count=8))
facade.peak(facade.PeakRequest(device="A100 80GB SXM4"))
for stats in STATS.values():
    stats.update(calls=0, hits=0, recompute_s=[], **({"peek_hits": 0} if "peek_hits" in stats else {}))
start = time.process_time()
for i in range(10):
    facade.estimate_time(TimeRequest(model="llama-2-7b", tokens=1e9 + i * 1e7, device="H100 SXM", count=8))
    facade.peak(facade.PeakRequest(device="Tesla P40"))
report(time.process_time() - start, 10)
'''


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def _env(cache_dir: str, off: str | None = None) -> dict:
    env = {**os.environ, "SIZER_CACHE_DIR": cache_dir, "PYTHONPATH": str(ROOT)}
    env.pop("SIZER_CACHES_OFF", None)
    if off:
        env["SIZER_CACHES_OFF"] = off
    return env


def _code(template: str, counter: str, **values: object) -> str:
    """A workload's program: ``template`` with its #COUNTER# and #NAME# placeholders filled."""
    code = template.replace("#COUNTER#", counter)
    for name, value in values.items():
        code = code.replace(f"#{name.upper()}#", repr(value))
    return code


def _python(code: str, env: dict) -> dict:
    done = subprocess.run([PYTHON, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    found = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not found:
        raise SystemExit(f"workload failed: {done.stderr[-1500:]}")
    return parse_json(found[-1][len("RESULT "):], "workload", "a measuring process's RESULT line")


def hits(out: Path) -> None:
    """Each workload counted, and once more without the counter: ``plain_ms``, its CPU time as users
    meet it (the counter's own calls and recomputes make ``total_ms`` larger), the share's denominator."""
    counter = COUNTER.replace("SAMPLED_HITS", str(SAMPLED_HITS))
    workloads = {name: (RUN_CLI, {"args": args}) for name, args in CLI.items()}
    workloads.update({name: (RUN_SERVICE, {"bodies": bodies, "path": path}) for name, (path, bodies) in SERVICE.items()})
    workloads["library_time_and_peak"] = (RUN_LIBRARY, {})
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        cache_dir, after_cli = Path(scratch) / "cache", Path(scratch) / "after-cli"
        env = _env(str(cache_dir))
        for name, (template, values) in workloads.items():
            counted, plain = _code(template, counter, **values), _code(template, NO_COUNTER, **values)
            if name in CLI:  # a command run before, its entries on disk as a user's second run finds them
                _python(plain, env)
                results[name] = {"load": loadavg(), **_python(counted, env), "plain_ms": _python(plain, env)["total_ms"]}
                continue
            if not after_cli.exists():
                shutil.copytree(cache_dir, after_cli)
            # new questions are new to the disk cache too: each run starts from the commands' entries
            found = {}
            for label, code in (("counted", counted), ("plain", plain)):
                shutil.rmtree(cache_dir)
                shutil.copytree(after_cli, cache_dir)
                found[label] = _python(code, env)
            results[name] = {"load": loadavg(), **found["counted"], "plain_ms": found["plain"]["total_ms"]}
            print(name, round(results[name]["plain_ms"], 2), "ms", flush=True)
    write_text(out, json.dumps(results, indent=1) + "\n")


def _cpu(command: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-800:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


_NEW_QUESTIONS = iter(range(1, 10**6))


def _command_line(command: str) -> list[str]:
    """The CLI arguments of ``command``; ``recommend_new`` is a question of a shape not asked before
    (its layout search is on no disk: what a user's own question costs)."""
    if command == "recommend_new":
        return ["recommend", "--params", f"{5e9 + next(_NEW_QUESTIONS) * 2.5e8:.6g}", "--tokens", "2e10", "--json"]
    return CLI[command]


def ab(off: str, rounds: int, commands: list[str], cache_dir_off: bool) -> dict:
    """Median CPU time [s] of each command with every cache on and with ``off`` off, interleaved."""
    sizer = str(Path(PYTHON).with_name("sizer"))
    times: dict[str, dict[str, list[float]]] = {c: {"on": [], "off": []} for c in commands}
    loads = []
    with tempfile.TemporaryDirectory() as cache_dir:
        on_env = _env(cache_dir)
        off_env = _env("off" if cache_dir_off else cache_dir, None if cache_dir_off else off)
        for command in commands:
            _cpu([sizer, *_command_line(command)], on_env)
        for _ in range(rounds):
            loads.append(loadavg())
            for command in commands:
                times[command]["on"].append(_cpu([sizer, *_command_line(command)], on_env))
                times[command]["off"].append(_cpu([sizer, *_command_line(command)], off_env))
    return {"off": "SIZER_CACHE_DIR=off" if cache_dir_off else off, "rounds": rounds, "load": statistics.median(loads),
            **{c: {"on_ms": 1000 * statistics.median(t["on"]), "off_ms": 1000 * statistics.median(t["off"]),
                   "paired_diff_ms": 1000 * statistics.median(b - a for a, b in zip(t["on"], t["off"], strict=True))}
               for c, t in times.items()}}


def ab_service(off: str, rounds: int, workloads: list[str]) -> dict:
    """Median CPU time per request [ms] of service workloads with every cache on and with ``off`` off."""
    times: dict[str, dict[str, list[float]]] = {w: {"on": [], "off": []} for w in workloads}
    loads = []
    with tempfile.TemporaryDirectory() as cache_dir:
        envs = {"on": _env(cache_dir), "off": _env(cache_dir, off)}
        for _ in range(rounds):
            loads.append(loadavg())
            for workload in workloads:
                path, bodies = SERVICE[workload]
                code = _code(RUN_SERVICE, NO_COUNTER, bodies=bodies, path=path)
                for side in ("on", "off"):
                    times[workload][side].append(_python(code, envs[side])["total_ms"])
    return {"off": off, "rounds": rounds, "load": statistics.median(loads),
            **{w: {"on_ms": statistics.median(t["on"]), "off_ms": statistics.median(t["off"]),
                   "paired_diff_ms": statistics.median(b - a for a, b in zip(t["on"], t["off"], strict=True))}
               for w, t in times.items()}}


KEEP_SHARE = 0.01  # a cache is kept where it saves at least 1 % of some workload's CPU time


def table(paths: list[Path]) -> str:
    """A markdown table of the medians over ``hits`` runs: per cache, where it saves most."""
    from sizer.memo import POLICIES

    runs = []
    for path in paths:  # a run of hits, or the recorded {"runs": [...]} of benchmarks/results
        found = load_json(path, "runs")
        runs += found["runs"] if "runs" in found else [found]
    workloads = list(dict.fromkeys(w for r in runs for w in r))
    # the share's denominator: the workload uncounted where recorded (the counter adds its own time)
    total = {w: statistics.median(r[w].get("plain_ms", r[w]["total_ms"]) for r in runs if w in r) for w in workloads}
    loads = ", ".join(f"{r[workloads[0]]['load']:.1f}" for r in runs)
    lines = [f"Medians of {len(runs)} runs (load average at their start: {loads}).",
             "", "| cache | bound | hits (workload) | saving, most | share of that workload |", "| --- | --- | --- | --- | --- |"]
    names = list(dict.fromkeys(name for r in runs for w in r.values() for name in w["caches"]))
    bounds = {p.name: p.maxsize for p in POLICIES}
    for name in sorted(names, key=lambda n: list(bounds).index(n) if n in bounds else len(bounds)):
        best = None
        for w in workloads:
            found = [r[w]["caches"][name] for r in runs if w in r and name in r[w]["caches"]]
            if not found:
                continue
            saving = statistics.median(f["saving_ms"] for f in found)
            hits = statistics.median(f["hits"] + f.get("peek_hits", 0) for f in found)
            if hits and (best is None or saving / total[w] > best[2] / total[best[0]]):
                best = (w, hits, saving)
        bound = bounds.get(name, "removed")
        if best is None:
            lines.append(f"| `{name}` | {bound} | 0 | 0 | 0 |")
        else:
            w, hits, saving = best
            per = " per request" if w.startswith(("http", "library")) else ""
            lines.append(f"| `{name}` | {bound} | {hits:g} ({w}) | {saving:.2f} ms{per} | "
                         f"{100 * saving / total[w]:.1f} % of {total[w]:.1f} ms |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    counted = sub.add_parser("hits")
    counted.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cache_savings.json"))
    shown = sub.add_parser("table")
    shown.add_argument("runs", nargs="+", type=Path, help="JSON files written by hits")
    paired = sub.add_parser("ab")
    paired.add_argument("off", help="cache names, comma-separated (or 'disk' for SIZER_CACHE_DIR=off)")
    paired.add_argument("--rounds", type=int, default=5)
    paired.add_argument("--commands", default="peak,recommend,time,inference")
    paired.add_argument("--service", help="service workloads instead of commands, comma-separated")
    args = parser.parse_args()
    if args.mode == "hits":
        hits(Path(args.out))
    elif args.mode == "table":
        print(table(args.runs))
    elif args.service:
        print(json.dumps(ab_service(args.off, args.rounds, args.service.split(","))), flush=True)
    else:
        print(json.dumps(ab(args.off, args.rounds, args.commands.split(","), args.off == "disk")), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
