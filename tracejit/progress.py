"""A progress line for long compiles: silent for a fast one, one updating line on stderr for
a slow one.

`with track("jit(loss)"):` wraps one compile. Once it has run `tj.config.progress_after`
seconds (default 2), stderr shows, redrawn in place at every phase change and twice a second:

    [tracejit] jit(loss): fusion, 7218 nodes, 12.4 s

and, when the compile ends, the same line with "done" (or "failed") and a newline. `enter(phase)` (called by
`tracejit.timing.phase`) and `count(nodes=...)` feed it; both cost one context lookup when no
compile is tracked. `tj.config.progress = False` (TRACEJIT_PROGRESS=0) turns it off.

>>> from tracejit.config import config
>>> config.progress_after = 1e9   # never reached: nothing is printed
>>> with track("jit(f)"):
...     enter("fusion")
>>> config.progress_after = 2.0
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from collections.abc import Iterator

from tracejit.config import config

TICK_S = 0.5  # how often a shown line's elapsed time is redrawn during one long phase

_current: contextvars.ContextVar[_Line | None] = contextvars.ContextVar(
    "tracejit_progress", default=None
)


class _Line:
    def __init__(self, label: str):
        self.label = label
        self.t0 = time.perf_counter()
        self.phase = "starting"
        self.counts: dict[str, int] = {}
        self.width = 0  # of the text last drawn; 0 while nothing is shown
        self.lock = threading.Lock()

    def draw(self, final: str = "") -> None:
        """Redraw the line (once shown, or past the threshold); `final` ends it."""
        with self.lock:
            elapsed = time.perf_counter() - self.t0
            if not self.width and (final or elapsed < config.progress_after):
                return
            counts = "".join(f", {n} {what}" for what, n in self.counts.items())
            text = f"[tracejit] {self.label}: {final or self.phase}{counts}, {elapsed:.1f} s"
            pad = " " * max(self.width - len(text), 0)
            sys.stderr.write(f"\r{text}{pad}{chr(10) if final else ''}")
            sys.stderr.flush()
            self.width = len(text)


def _redraw(line: _Line, stop: threading.Event) -> None:
    if stop.wait(config.progress_after):
        return
    while True:
        line.draw()
        if stop.wait(TICK_S):
            return


@contextlib.contextmanager
def track(label: str) -> Iterator[None]:
    """Show progress for the compile this block runs (nested compiles join the outer one)."""
    if not config.progress or _current.get() is not None:
        yield
        return
    line = _Line(label)
    token = _current.set(line)
    stop = threading.Event()
    ticker = threading.Thread(target=_redraw, args=(line, stop), daemon=True)
    ticker.start()
    outcome = "failed"
    try:
        yield
        outcome = "done"
    finally:
        stop.set()
        ticker.join()
        _current.reset(token)
        line.draw(final=outcome)


def enter(phase: str) -> None:
    """The tracked compile is now in `phase`."""
    line = _current.get()
    if line is not None:
        line.phase = phase
        line.draw()


def count(**counts: int) -> None:
    """Sizes to show on the line, e.g. `count(nodes=7218)`."""
    line = _current.get()
    if line is not None:
        line.counts.update(counts)


__all__ = ["count", "enter", "track"]
