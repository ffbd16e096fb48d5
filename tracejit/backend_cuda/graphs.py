"""CUDA graphs: one function's launches replayed as one graph, where that is measurably faster.

A function of many small kernels spends its time launching them from Python (a few
microseconds each), not running them. Captured once into a CUDA graph, a call becomes: copy
the inputs into the graph's own input buffers, launch the graph, copy its outputs into fresh
arrays. The graph owns its buffers (inputs, outputs, arena), so replays are serialized with
an event, and the copies keep every call's outputs its own, as without graphs.

`tj.config.cuda_graphs` chooses:
  "auto"   (default) after WARMUP plain calls, TRIALS calls alternate plain and graph launch
           while timing the host side of each; the graph stays only if its median is
           below GAIN x the plain median;
  "always" capture after WARMUP calls and keep it (tests);
  "never"  plain launches only.

Nothing is taken on trust: the first replay runs on the same inputs as a plain call and must
agree with it bit for bit (same kernels, same data); any difference, and any failure to
capture, turns graphs off for that function and says why under `tj.config.log_compiles`.
Functions with a host step (a primitive without a CUDA kernel) never use graphs; nor do
functions with a cuBLAS matmul, since CuPy refuses cuBLAS calls while a stream captures
("calling cuBLAS API during stream capture is currently unsupported", CuPy 14 on an H100);
nor functions whose inputs, outputs and temporaries exceed MAX_BYTES: they are not
launch-bound, and a graph's own copies of their buffers would cost memory and copying time.

>>> GraphRunner.eligible_steps(["kernel", "kernel"], nbytes=1 << 20)
True
>>> GraphRunner.eligible_steps(["kernel", "host", "kernel"], nbytes=1 << 20)
False
>>> GraphRunner.eligible_steps(["kernel", "matmul", "kernel"], nbytes=1 << 20)
False
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections.abc import Sequence

from tracejit.backend_cuda.results import new_result
from tracejit.config import config
from tracejit.devices import device_input

WARMUP = 2  # plain calls first: modules loaded, memory pool warm
TRIALS = 6  # timed calls per mode under "auto"
GAIN = 0.9  # the graph must save 10% of the host time per call to be kept
MAX_BYTES = 64 << 20  # inputs + outputs + arena of a function that may use a graph

_log = logging.getLogger("tracejit")


class GraphRunner:
    """Decides for one `CudaExecutable` whether calls replay a graph, and replays it."""

    def __init__(self, exe):
        self.exe = exe  # a CudaExecutable: run_plain(args), start(args), launch(call)
        self.cupy = exe.cupy
        self.calls = 0
        self.mode = "measuring"  # then "graph" or "plain"
        self.times: dict[str, list[float]] = {"plain": [], "graph": []}
        self.lock = threading.Lock()  # one replay at a time: the graph's buffers are shared
        self.setup = threading.Lock()  # one thread warms up, captures and measures
        self.graph = None
        self.static_inputs: list = []  # the graph's buffers: inputs, and the call state that
        self.static_call = None  # holds its outputs, arena and views
        self.done = None  # event recorded after the last replay's output copies

    @staticmethod
    def eligible_steps(kinds: Sequence[str], nbytes: int) -> bool:
        """Worth a graph: two launches or more, none that cannot be captured, small."""
        capturable = "host" not in kinds and "matmul" not in kinds
        return len(kinds) >= 2 and capturable and nbytes <= MAX_BYTES

    def __call__(self, args: Sequence) -> list:
        setting = config.cuda_graphs
        if setting == "never" or self.mode == "plain":
            return self.exe.run_plain(args)
        if self.mode == "graph" or (setting == "always" and self.graph is not None):
            return self._replay(args)
        with self.setup:
            if self.mode == "measuring":
                self.calls += 1
                if self.calls <= WARMUP:
                    return self.exe.run_plain(args)
                if self.graph is None:
                    return self._capture_and_check(args)
                return self._measure(args)
        return self(args)  # another thread decided while this one waited

    # ------------------------------------------------------------ capture
    def _capture_and_check(self, args: Sequence) -> list:
        want = self.exe.run_plain(args)
        try:
            self._capture()
            got = self._replay(args)
        except Exception as err:  # noqa: BLE001  (any CUDA/CuPy failure: stay plain)
            return self._give_up(f"capture failed ({err.__class__.__name__}: {err})", want)
        for g, w in zip(got, want):
            if g.get().tobytes() != w.get().tobytes():
                return self._give_up("the replay differed from the plain launches", want)
        if config.cuda_graphs == "always":
            self.mode = "graph"
        return want

    def _capture(self) -> None:
        cupy, exe = self.cupy, self.exe
        self.static_inputs = [
            cupy.empty(exe.buffers[b].shape, exe.buffers[b].dtype) for b in exe.schedule.inputs
        ]
        self.static_call = exe.start(self.static_inputs)  # its outputs and arena: the graph's
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            stream.begin_capture()
            try:
                exe.launch(self.static_call)
            finally:
                graph = stream.end_capture()
        self.graph = graph

    def _give_up(self, why: str, outputs: list) -> list:
        self.mode = "plain"
        self.graph = None
        self.static_inputs, self.static_call = [], None
        if config.log_compiles:
            _log.warning("%s: CUDA graph not used: %s", self.exe.name, why)
        return outputs

    # ------------------------------------------------------------ replay
    def _replay(self, args: Sequence) -> list:
        cupy, exe = self.cupy, self.exe
        stream = cupy.cuda.get_current_stream()
        with self.lock:
            if self.done is not None:
                stream.wait_event(self.done)
            for b, static, x in zip(exe.schedule.inputs, self.static_inputs, args):
                x = device_input(cupy, x, exe.buffers[b].dtype)
                if static.nbytes:
                    static.data.copy_from_device_async(x.data, static.nbytes, stream)
            self.graph.launch(stream)
            outputs = []
            for static in self.static_call.outputs:
                out = new_result(cupy, static.shape, static.dtype)
                if static.nbytes:
                    out.data.copy_from_device_async(static.data, static.nbytes, stream)
                outputs.append(out)
            self.done = stream.record()
        return outputs

    # ------------------------------------------------------------ measurement
    def _measure(self, args: Sequence) -> list:
        kind = "graph" if len(self.times["graph"]) < len(self.times["plain"]) else "plain"
        t0 = time.perf_counter()
        out = self._replay(args) if kind == "graph" else self.exe.run_plain(args)
        self.times[kind].append(time.perf_counter() - t0)
        if len(self.times["graph"]) >= TRIALS:
            plain = statistics.median(self.times["plain"])
            graph = statistics.median(self.times["graph"])
            if graph < GAIN * plain:
                self.mode = "graph"
                if config.log_compiles:
                    _log.warning(
                        "%s: CUDA graph used: %.1f us per call instead of %.1f us",
                        self.exe.name, graph * 1e6, plain * 1e6,
                    )  # fmt: skip
            else:
                self._give_up(f"no gain ({graph * 1e6:.1f} us vs {plain * 1e6:.1f} us)", out)
        return out


__all__ = ["GAIN", "MAX_BYTES", "TRIALS", "WARMUP", "GraphRunner"]
