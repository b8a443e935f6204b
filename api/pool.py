"""Worker processes for long estimates, so that one does not hold the event loop or other clients.

Up to ``size`` processes (one per core by default), each started when first needed (or all at once
with the service, :meth:`WorkerPool.start`). A process runs one estimate at a time: the route's own function (pickled by reference) with the
request body, the catalog standing in as a marker (each worker loads the same catalog once, at
start), and the time left before the request's deadline. The service's process only waits on a pipe.

Abandoned work stops: when the waiting request is cancelled (the client hung up, or the deadline
passed), the worker is told to cancel, which the core's loops notice at their next
:func:`sizer.deadline.check_deadline`; a worker that has not answered ``grace_s`` later is killed and
a fresh one started in its place. Workers run at a lower priority (``nice``) than the service's
process, so that the cheap questions answered there keep their speed while the workers are busy.

Errors come back as the same types (a user's error is still a 422 naming its field); a worker that
dies mid-estimate is answered 500 like any unexpected error, and replaced.
"""
from __future__ import annotations

import asyncio
import importlib
import io
import itertools
import logging
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger("sizer.api")
IDLE_WAIT_S = 10.0  # the longest wait for a replaced worker

# Modules whose functions the service sends here, imported once at a worker's start; named, not imported,
# so that the pool depends on no route (the routes depend on it, through api.deps); relative to this package,
# which is ``api`` in a checkout and ``sizer.api`` installed from the wheel
WORKER_UNREADABLE_EXIT = 70  # a worker's exit status when a job it was sent does not unpickle (EX_SOFTWARE)
WARM_MODULES = (".routers.inference", ".routers.recommend")

# A worker's estimates (a new shape's layout search above all) build and drop numpy temporaries of 0.1-30 MB by the
# hundred; with glibc's default thresholds each is mapped from the system and handed back (and its pages faulted in
# again) every time, about a fifth of a search's time (the 7B shape 46-49 -> 37-39 ms, benchmarks/README.md). Kept in
# the worker's heap instead, at the cost of up to 64 MB it keeps after freeing. Read by glibc at the worker's start
# (another C library ignores it).
WORKER_MALLOC = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864"


@dataclass(frozen=True)
class CatalogMarker:
    """Stands in for the catalog in a job's arguments: the worker puts its own copy there, after checking that
    it is the same catalog (by its fingerprint, :attr:`sizer.hardware.catalog.Catalog.key`)."""

    key: str


def _catalog_for(marker: CatalogMarker, catalog):
    if marker.key != catalog.key:
        raise RuntimeError("the estimate worker's catalog differs from the service's")
    return catalog


class WorkerLost(RuntimeError):
    """The worker process ended while running an estimate."""


class _Pickler(pickle.Pickler):
    """Exceptions travel as (type, args, attributes): the project's errors take other arguments than their message."""

    def reducer_override(self, obj):
        if isinstance(obj, BaseException) and type(obj).__module__ != "pydantic_core._pydantic_core":
            return _rebuild_exception, (type(obj), obj.args, dict(getattr(obj, "__dict__", {})))
        return NotImplemented


def _rebuild_exception(kind: type, args: tuple, attributes: dict) -> BaseException:
    error = kind.__new__(kind)
    error.args = args
    error.__dict__.update(attributes)
    return error


def _dumps(message: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(message)
    return buffer.getvalue()


def _portable(error: BaseException) -> BaseException:
    """An error that can cross the pipe: pydantic's ValidationError becomes FastAPI's RequestValidationError
    with the same field paths (as api.errors answers a ValidationError: under ``body``)."""
    from pydantic import ValidationError

    if isinstance(error, ValidationError):
        from fastapi.exceptions import RequestValidationError

        return RequestValidationError([{"loc": ("body", *e["loc"]), "msg": e["msg"], "type": e["type"]}
                                       for e in error.errors(include_input=False, include_url=False,
                                                             include_context=False)])
    return error


def worker_entry() -> None:
    """A worker process's start (``python -c`` with the socket's descriptor, the catalog file and the niceness):
    a fresh interpreter, not a fork of the service (threads, an event loop) nor a re-import of its main module."""
    descriptor, catalog_file, niceness = sys.argv[1:4]
    _worker_main(Connection(int(descriptor)), catalog_file or None, int(niceness))


def _worker_main(conn, catalog_file: str | None, niceness: int) -> None:
    """A worker process: load the catalog, then run jobs as they come; a listening thread sets the cancel flag."""
    for stop in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C or a group SIGTERM stops the service, which stops its workers
        signal.signal(stop, signal.SIG_IGN)  # (and a worker whose service is gone sees its pipe close and exits)
    from sizer.facade import load_catalog, time_limit, warm_up

    from .heap import freeze_start_up

    catalog = load_catalog(catalog_file)  # the serving estimates that come here build their own tables
    for module in WARM_MODULES:  # the routes whose functions come here (by reference), loaded before the first job
        importlib.import_module(module, __package__)
    if niceness:  # after the start, at the service's priority: a busy machine does not hold the first answer back
        os.nice(niceness)
    warm_up(catalog, searches=True)  # at that priority: what a first search reads (some 60 ms of it otherwise)
    freeze_start_up()  # as the service's own process: else full collections of the start-up's ~100,000 objects,
    # 47-94 ms each, fell inside a search about every second or third new shape
    jobs: queue.Queue = queue.Queue()
    cancel = threading.Event()
    current: list[int | None] = [None]
    cancelled: set[int] = set()
    lock = threading.Lock()

    def listen() -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                os._exit(0)  # the service is gone
            except Exception:  # noqa: BLE001 - a message this process cannot read (nor say which job it was)
                log.exception("an estimate worker could not read its job; it ends, and the service starts another")
                os._exit(WORKER_UNREADABLE_EXIT)  # its job is answered as lost (the reader sees the pipe close)
            if message[0] == "job":
                jobs.put(message)
            elif message[0] == "cancel":
                with lock:
                    if current[0] == message[1]:
                        cancel.set()
                    else:  # a job not started yet (or one just ended)
                        cancelled.add(message[1])

    threading.Thread(target=listen, daemon=True).start()
    while True:
        _, job, function, args, (seconds, limit) = jobs.get()
        with lock:
            current[0] = job
            if job in cancelled:
                cancel.set()
            else:
                cancel.clear()
            cancelled.difference_update([j for j in cancelled if j <= job])  # job numbers only grow: the rest is stale
        try:
            args = tuple(_catalog_for(a, catalog) if isinstance(a, CatalogMarker) else a for a in args)
            with time_limit(seconds, cancel, limit):
                reply = ("ok", job, function(*args))
        except BaseException as error:  # noqa: BLE001 - every error goes back to be answered there
            reply = ("error", job, _portable(error))
        try:
            data = _dumps(reply)
        except Exception as error:  # noqa: BLE001 - an answer that cannot be pickled is the service's fault
            data = _dumps(("error", job, RuntimeError(f"unpicklable answer: {error!r}")))
        with lock:
            current[0] = None
        conn.send_bytes(data)


@dataclass
class _Worker:
    process: Any
    conn: Any
    job: int | None = None
    settle: Callable[[str, Any], None] | None = None  # called from the reader thread
    killed: bool = False
    reader: threading.Thread | None = field(default=None, repr=False)


class WorkerPool:
    """``size`` worker processes; :meth:`run` hands one a job (the caller keeps at most ``size`` in flight)."""

    def __init__(self, size: int, catalog_file: str | None = None, niceness: int = 10, grace_s: float = 1.0):
        self.size = size
        self.catalog_file = catalog_file
        self.niceness = niceness
        self.grace_s = grace_s
        self.idle: list[_Worker] = []
        self.all: list[_Worker] = []
        self.jobs = itertools.count(1)
        self.lock = threading.Lock()
        self.closed = False

    def start(self) -> None:
        """Start every process not running yet (each loads the catalog in the background), rather than each
        when first needed; after :meth:`close`, again (an application's lifespan may end and start again)."""
        with self.lock:
            self.closed = False
            while len(self.all) < self.size:
                worker = self._spawn()
                self.all.append(worker)
                self.idle.append(worker)

    def _spawn(self) -> _Worker:
        ours, theirs = socket.socketpair()
        # The worker imports this module by its own name (`api.pool` in a checkout, `sizer.api.pool` from the
        # wheel) from the folder its top package was imported from
        top = sys.modules[__name__.partition(".")[0]]
        root = str(Path(top.__file__).resolve().parent.parent)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
        env.setdefault("GLIBC_TUNABLES", WORKER_MALLOC)  # a user's own tunables are kept
        process = subprocess.Popen([sys.executable, "-c", f"import {__name__} as pool; pool.worker_entry()",
                                    str(theirs.fileno()), self.catalog_file or "", str(self.niceness)],
                                   pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL)
        theirs.close()
        worker = _Worker(process, Connection(ours.detach()))
        worker.reader = threading.Thread(target=self._read, args=(worker,), daemon=True, name="sizer-estimate-reader")
        worker.reader.start()
        return worker

    def _read(self, worker: _Worker) -> None:
        """Hand each answer of ``worker`` to the waiting request; when the process ends, replace it."""
        while True:
            try:
                message = pickle.loads(worker.conn.recv_bytes())
            except (EOFError, OSError):
                break
            except Exception as error:  # noqa: BLE001 - an answer that cannot be read
                message = ("error", worker.job, error)
            settle = worker.settle
            if settle is not None and message[1] == worker.job:
                settle(message[0], message[2])
        try:
            code = worker.process.wait(1)
        except subprocess.TimeoutExpired:
            code = None
        if not worker.killed:
            log.warning("an estimate worker process ended (exit code %s); starting another", code)
        worker.killed = True
        self._replace(worker)  # before the job is settled: the slot it frees finds an idle worker
        settle = worker.settle
        if settle is not None:
            settle("error", WorkerLost("the estimate's worker process ended; quote the request id when reporting it"))

    def _replace(self, worker: _Worker) -> None:
        with self.lock:
            if worker in self.all:
                self.all.remove(worker)
            if worker in self.idle:
                self.idle.remove(worker)
            if not self.closed and len(self.all) < self.size and worker.job is not None:
                fresh = self._spawn()  # in place of one that died at work (idle ones are started when needed)
                self.all.append(fresh)
                self.idle.append(fresh)

    async def run(self, function: Callable[..., Any], args: tuple, left: tuple[float, float],
                  done: Callable[[], None]) -> Any:
        """``function(*args)`` in a worker within ``left`` (the seconds left [s] and the limit they are of [s]);
        ``done()`` is called once the worker is free again (at once, or after a cancelled job has stopped or its
        worker was killed)."""
        self.closed = False  # after a lifespan's end, a new one may have begun
        loop = asyncio.get_running_loop()
        try:
            worker = await self._idle_worker()
        except BaseException:  # none came (or the request was cancelled meanwhile): the slot is free again
            done()
            raise
        job = next(self.jobs)
        answer: asyncio.Future = loop.create_future()
        freed = threading.Event()

        def settle(kind: str, value: Any) -> None:  # from the reader thread
            worker.settle, worker.job = None, None
            freed.set()
            with self.lock:
                if worker in self.all and not worker.killed:
                    self.idle.append(worker)
            try:
                loop.call_soon_threadsafe(_set, answer, kind, value)
                loop.call_soon_threadsafe(done)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

        worker.job, worker.settle = job, settle
        try:
            worker.conn.send_bytes(_dumps(("job", job, function, args, left)))
        except (OSError, ValueError):
            worker.settle = None
            self._kill(worker)
            done()
            raise WorkerLost("the estimate's worker process could not be reached") from None
        try:
            return await asyncio.shield(answer)
        except asyncio.CancelledError:
            self._cancel(worker, job, freed)
            raise

    async def _idle_worker(self) -> _Worker:
        """An idle worker, or a new one while there are fewer than ``size`` (started as they are first needed);
        one being replaced (killed a moment ago) is waited for."""
        for _ in range(int(IDLE_WAIT_S / 0.01)):
            with self.lock:
                if self.idle:
                    return self.idle.pop()
                if len(self.all) < self.size:
                    worker = self._spawn()
                    self.all.append(worker)
                    return worker
            await asyncio.sleep(0.01)
        raise WorkerLost("no estimate worker process is running; quote the request id when reporting it")

    def _cancel(self, worker: _Worker, job: int, freed: threading.Event) -> None:
        """Ask the worker to stop ``job``; kill it if it has not stopped ``grace_s`` later."""
        try:
            worker.conn.send(("cancel", job))
        except (OSError, ValueError):
            pass

        def watch() -> None:
            if not freed.wait(self.grace_s) and worker.job == job:
                log.warning("an estimate did not stop within %g s of its cancellation; its worker is replaced", self.grace_s)
                self._kill(worker)
        threading.Thread(target=watch, daemon=True, name="sizer-estimate-cancel").start()

    def _kill(self, worker: _Worker) -> None:
        worker.killed = True
        with self.lock:
            if worker in self.idle:
                self.idle.remove(worker)
        try:
            worker.process.kill()  # the reader sees the pipe close, settles the job and starts a replacement
        except (OSError, ValueError, AttributeError):
            pass

    def close(self) -> None:
        """Stop every worker (the service is shutting down)."""
        with self.lock:
            self.closed = True
            workers, self.all, self.idle = list(self.all), [], []
        for worker in workers:
            worker.killed = True
            try:
                worker.process.kill()
                worker.process.wait(1)
                worker.conn.close()
            except (OSError, ValueError, AttributeError, subprocess.TimeoutExpired):
                pass


def _set(answer: asyncio.Future, kind: str, value: Any) -> None:
    if answer.done():
        return
    if kind == "ok":
        answer.set_result(value)
    else:
        answer.set_exception(value)
