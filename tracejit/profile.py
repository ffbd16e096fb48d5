"""`tj.profile()`: record compiles and calls of jitted functions to a Chrome/Perfetto trace.

    with tj.profile("trace.json"):
        step(params, batch)          # compile phases and the call are recorded

Open the file in https://ui.perfetto.dev or chrome://tracing: each compile phase (trace,
autodiff, passes, fusion, codegen, C++ compiler, cache) and each call of a jitted function is
a bar on the timeline of the thread that ran it; a call's arguments show its signature.

>>> import json, os, tempfile, numpy as np, tracejit as tj
>>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
>>> with tj.profile(path) as prof:
...     _ = tj.jit(lambda x: x * 2.0)(np.ones(3, np.float32))
>>> any(e.get("cat") == "call" for e in json.load(open(path))["traceEvents"])
True
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator

from tracejit import timing
from tracejit.errors import TracejitError


class ProfileError(TracejitError, RuntimeError):
    """Profiles do not nest (one trace file at a time)."""


class Profile:
    """The events of one `tj.profile` block; `trace()` is the Chrome trace-event JSON object."""

    def __init__(self):
        self.events: list = []
        self.origin = time.perf_counter()

    def _event(self, cat, name, t0, t1, args) -> dict:
        return {
            "name": name,
            "cat": cat,
            "ph": "X",
            "ts": round((t0 - self.origin) * 1e6, 3),
            "dur": round((t1 - t0) * 1e6, 3),
            "pid": os.getpid(),
            "tid": 0,
            "args": {k: str(v) for k, v in args.items()},
        }

    def trace(self) -> dict:
        events = [self._event(*e) for e in self.events]
        meta = {"name": "process_name", "ph": "M", "pid": os.getpid(), "tid": 0}
        meta["args"] = {"name": f"tracejit (pid {os.getpid()})"}
        return {"traceEvents": [meta, *events], "displayTimeUnit": "ms"}

    def summary(self) -> dict[str, float]:
        """Total seconds per (category, name), largest first."""
        totals: dict[str, float] = {}
        for cat, name, t0, t1, _ in self.events:
            key = f"{cat}: {name}"
            totals[key] = totals.get(key, 0.0) + (t1 - t0)
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


_lock = threading.Lock()


@contextlib.contextmanager
def profile(path: str | os.PathLike | None = "tracejit-trace.json") -> Iterator[Profile]:
    """Record compile phases and calls of jitted functions; write a trace to `path` at exit
    (`path=None`: keep it in memory only, see `Profile.trace()` and `Profile.summary()`)."""
    with _lock:
        if timing.events is not None:
            raise ProfileError("tj.profile() is already recording: profiles do not nest")
        prof = Profile()
        timing.events = prof.events
    try:
        yield prof
    finally:
        with _lock:
            timing.events = None
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(prof.trace(), f)
