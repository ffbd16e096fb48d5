"""Streams, events and graphs of the emulator.

Work runs when it is issued (the host is the device), except while a stream captures: then
kernel launches, matmuls and async copies are recorded, and `Graph.launch` replays them with
the pointers they were issued with, as a CUDA graph does. Synchronous transfers (`get`,
`set`) during a capture raise, as CUDA refuses them.
"""

from __future__ import annotations

import threading

_tls = threading.local()


def _stack() -> list:
    if not hasattr(_tls, "stack"):
        _tls.stack = []
    return _tls.stack


class Event:
    def synchronize(self) -> None:
        """Work is done when issued: nothing to wait for."""


class Graph:
    def __init__(self, work: list):
        self.work = work

    def launch(self, stream=None) -> None:
        for run in self.work:
            run()


class Stream:
    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False):
        self.ptr = 0 if null else id(self)
        self.recording: list | None = None

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False

    def use(self):
        _stack().append(self)
        return self

    def begin_capture(self, mode=None) -> None:
        if self.ptr == 0:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if self.recording is not None:
            raise RuntimeError("cudaErrorIllegalState: the stream is already capturing")
        self.recording = []

    def end_capture(self) -> Graph:
        if self.recording is None:
            raise RuntimeError("cudaErrorIllegalState: the stream is not capturing")
        graph, self.recording = Graph(self.recording), None
        return graph

    def is_capturing(self) -> bool:
        return self.recording is not None

    def record(self, event: Event | None = None) -> Event:
        return event or Event()

    def wait_event(self, event: Event) -> None:
        """Work is done when issued: nothing to wait for."""

    def synchronize(self) -> None:
        """Work is done when issued: nothing to wait for."""


Stream.null = Stream(null=True)


def get_current_stream() -> Stream:
    stack = _stack()
    return stack[-1] if stack else Stream.null


def issue(run) -> None:
    """Run `run()` now, or record it if the current stream is capturing."""
    stream = get_current_stream()
    if stream.recording is not None:
        stream.recording.append(run)
    else:
        run()


def refuse_sync(what: str) -> None:
    """Raise if the current stream captures: `what` would synchronize with the host."""
    if get_current_stream().recording is not None:
        raise RuntimeError(
            f"cudaErrorStreamCaptureUnsupported: {what} is not permitted while the stream "
            "is capturing"
        )
