"""The service's settings, in one place: read from ``SIZER_API_*`` environment variables.

>>> Settings().max_body_bytes
65536
"""
from __future__ import annotations

import os
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .proxies import TrustedProxies

KIB = 1024


class Settings(BaseSettings):
    """How the HTTP service runs. ``sizer serve`` options override them; each is also ``SIZER_API_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix="SIZER_API_", extra="ignore")

    host: str = Field("127.0.0.1", description="interface to listen on; loopback unless you mean to expose it")
    port: int = Field(8000, ge=1, le=65535)
    workers: int = Field(1, ge=1, le=256, description="uvicorn worker processes; the service is stateless")
    max_body_bytes: int = Field(64 * KIB, ge=KIB, le=16 * KIB * KIB,
                                description="larger request bodies are refused with 413")
    timeout_s: float = Field(20.0, gt=0, le=600, description="a request running longer is answered 503, and its "
                                                             "estimate stops")
    body_timeout_s: float = Field(10.0, gt=0, le=600, description="a request body arriving slower is answered 408")
    header_timeout_s: float = Field(10.0, gt=0, le=600,
                                    description="a connection that sends no complete request headers within this is "
                                                "answered 408 and closed")
    keep_alive_s: float = Field(5.0, gt=0, le=600, description="an idle keep-alive connection is closed after this")
    max_connections: int = Field(1000, ge=1, le=100_000,
                                 description="open connections per worker process; one more is answered 503 and "
                                             "closed at once")
    max_client_connections: int = Field(32, ge=1, le=100_000,
                                        description="open connections per client address and worker process; one "
                                                    "more from that address is answered 503 and closed, so that a "
                                                    "handful of addresses cannot hold every connection (keep it well "
                                                    "under max_connections)")
    estimate_workers: int = Field(default_factory=lambda: os.cpu_count() or 1, ge=0, le=256,
                                  description="worker processes for long estimates (default: one per core); 0: every "
                                              "estimate in the service's process, one at a time")
    prestart_workers: bool = Field(False, description="start the worker processes with the service (`sizer serve` "
                                                      "does), not with the first long estimate")
    gc_freeze: bool = Field(False, description="at start, move what the start-up built (modules, catalog, tables) out of "
                                               "the garbage collector's reach (gc.freeze; `sizer serve` does), so that "
                                               "a full collection scans only what requests made: 80-160 ms holding "
                                               "the interpreter otherwise, every answer in flight waiting")
    worker_nice: int = Field(10, ge=0, le=19, description="how much lower the workers' CPU priority is than the "
                                                          "service's, so that cheap questions stay fast")
    inline_budget_s: float = Field(0.05, ge=0, le=60,
                                   description="a question priced at more CPU-seconds (sizer.work_price: devices "
                                               "ranked, have entries, layouts, simulated iterations) runs in a worker "
                                               "process, where a client hanging up stops it; cheaper ones are "
                                               "answered in the service's process, one at a time")
    max_serving_iterations: float = Field(2_000_000, gt=0, description="a serving question priced at more simulated "
                                                                       "iterations is refused with 422 naming the "
                                                                       "fields that lower the price")
    max_client_waiting: int = Field(32, ge=1, le=100_000, description="estimates one client may have waiting for a "
                                                                      "slot; one more is answered 503")
    max_waiting: int = Field(256, ge=1, le=100_000, description="estimates waiting for a slot, all clients "
                                                                "together, per lane; one more is answered 503 with "
                                                                "Retry-After, so that a burst cannot grow the "
                                                                "service's memory without bound")
    memory_trim_interval_s: float = Field(10.0, ge=0, le=3600,
                                          description="every this many seconds the heaps' free pages go back to "
                                                      "the system (glibc's malloc_trim), so that memory returns "
                                                      "after a burst; 0: never")
    forwarded_allow_ips: str | None = Field(None, max_length=2000,
                                            description="comma-separated addresses or networks of trusted reverse "
                                                        "proxies ('*': any): from them, X-Forwarded-For names the "
                                                        "client (for fair queueing), and the per-address connection "
                                                        "cap does not apply; default none (the header is ignored)")
    fair_key_header: str | None = Field(None, max_length=100,
                                        description="a request header that names the client for fair queueing (e.g. "
                                                    "x-api-key set by an authenticating proxy); else its address")
    cancel_grace_s: float = Field(1.0, gt=0, le=60, description="a cancelled estimate's worker that has not stopped "
                                                                "this long after is killed and replaced")
    log_flood_interval_s: float = Field(10.0, ge=0, le=3600,
                                        description="a repeated warning (refused connections, timeouts) is logged at "
                                                    "most once per this interval, with a count")
    catalog_file: str | None = Field(None, description="a YAML file adding or overriding devices (else SIZER_CATALOG)")
    log_level: Literal["critical", "error", "warning", "info", "debug", "trace"] = Field(
        "info", description="uvicorn's log level; a bad value is refused before the server starts")

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_case(cls, value):
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _addresses(cls, value):
        TrustedProxies.parse(value)  # a bad address is refused at start, naming it
        return value

    def trusted_proxies(self) -> TrustedProxies:
        """The proxies whose X-Forwarded-For names the client (:mod:`api.proxies`)."""
        return TrustedProxies.parse(self.forwarded_allow_ips)
