"""`cupy.cuda` of the emulator: one device with 2 multiprocessors, host memory, NVRTC by g++."""

from __future__ import annotations

from cupy._memory import MemoryPointer, alloc
from cupy.cuda import cufft, device, nvrtc, runtime
from cupy.cuda._stream import Event, Graph, Stream, get_current_stream


class Device:
    """The one emulated device (compute capability 9.0, 2 SMs: grid-stride loops loop)."""

    compute_capability = "90"

    def __init__(self, device_id: int = 0):
        self.id = device_id
        self.attributes = {"MultiProcessorCount": 2, "MaxThreadsPerBlock": 1024, "WarpSize": 32}

    def synchronize(self) -> None:
        """Kernels run synchronously on the host: nothing to wait for."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


__all__ = [
    "Device",
    "Event",
    "Graph",
    "MemoryPointer",
    "Stream",
    "alloc",
    "cufft",
    "device",
    "get_current_stream",
    "nvrtc",
    "runtime",
]
