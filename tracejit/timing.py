"""Per-phase compile timings for `tj.config.log_compiles`.

`with collect() as times:` starts a record; `with phase("autodiff"):` anywhere below it adds
the elapsed seconds to that phase. Without an active record `phase` costs one lookup.

>>> with collect() as times:
...     with phase("trace"):
...         pass
>>> sorted(times)
['trace']
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator

_current: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "tracejit_times", default=None
)


@contextlib.contextmanager
def collect() -> Iterator[dict[str, float]]:
    times: dict[str, float] = {}
    token = _current.set(times)
    try:
        yield times
    finally:
        _current.reset(token)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    times = _current.get()
    if times is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        times[name] = times.get(name, 0.0) + time.perf_counter() - t0


def format_times(times: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds * 1e3:.1f} ms" for name, seconds in times.items())
