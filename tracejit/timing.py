"""Per-phase compile timings for `tj.config.log_compiles`.

`with collect() as times:` starts a record; `with phase("autodiff"):` anywhere below it adds
the elapsed seconds to that phase, in every record open around it (a benchmark's record sees
the phases of the compile it wraps). Without an active record `phase` costs one lookup.

>>> with collect() as times:
...     with phase("trace"):
...         pass
>>> sorted(times)
['trace']
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from collections.abc import Iterator

from tracejit import progress
from tracejit.config import config

_current: contextvars.ContextVar[tuple[dict, ...]] = contextvars.ContextVar(
    "tracejit_times", default=()
)
# (category, name, start, end, args) of every phase and span while `tj.profile` records
events: list | None = None


@contextlib.contextmanager
def collect() -> Iterator[dict[str, float]]:
    times: dict[str, float] = {}
    token = _current.set((*_current.get(), times))
    try:
        yield times
    finally:
        _current.reset(token)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    progress.enter(name)
    records = _current.get()
    if not records and events is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        t1 = time.perf_counter()
        for times in records:
            times[name] = times.get(name, 0.0) + (t1 - t0)
        if events is not None:
            events.append(("compile", name, t0, t1, {}))


@contextlib.contextmanager
def span(category: str, name: str, **args) -> Iterator[None]:
    """Record `name` as one event of a running `tj.profile` (callers check `events` first)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        if events is not None:
            events.append((category, name, t0, time.perf_counter(), args))


def format_times(times: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds * 1e3:.1f} ms" for name, seconds in times.items())


def log_compile(name: str, times: dict[str, float]) -> None:
    """A backend's compile of `name` took `times` (seconds by phase): logged as a warning
    under `tj.config.log_compiles`."""
    if config.log_compiles:
        logging.getLogger("tracejit").warning("%s: %s", name, format_times(times))
