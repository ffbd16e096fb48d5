"""Host memory standing in for device memory: 256-byte aligned, poisoned, guarded.

Fresh allocations are filled with 0xFF bytes (NaN as floats, -1 as integers), as device
memory holds garbage: a kernel that reads an element nothing wrote, or leaves an output
element unwritten, gives results the tests see. Every allocation has 256 poisoned guard
bytes on each side; `check_guards()` (after every kernel launch) reports a kernel that wrote
outside its buffers.
"""

from __future__ import annotations

import ctypes
import weakref

import numpy as np

ALIGN = 256
POISON = 0xFF
_live: weakref.WeakSet[Memory] = weakref.WeakSet()


class Memory:
    """One allocation: `buf` (uint8 NumPy array) and its aligned start address `ptr`."""

    def __init__(self, nbytes: int):
        raw = np.full(nbytes + 3 * ALIGN, POISON, np.uint8)
        start = ALIGN + (-(raw.ctypes.data + ALIGN)) % ALIGN
        self.raw = raw
        self.buf = raw[start : start + nbytes]
        self.guards = (raw[:start], raw[start + nbytes :])
        self.ptr = self.buf.ctypes.data
        self.size = nbytes
        _live.add(self)

    def intact(self) -> bool:
        return all(bool((g == POISON).all()) for g in self.guards)


def check_guards(kernel: str) -> None:
    """Raise if a kernel wrote into the guard bytes around any live allocation."""
    for mem in list(_live):
        if not mem.intact():
            for g in mem.guards:
                g[...] = POISON  # report once
            raise RuntimeError(
                f"CUDA emulator: kernel {kernel} wrote outside an allocation of {mem.size} "
                "bytes (its guard bytes changed)"
            )


class Pointer:
    """A device address (`ndarray.data`): `ptr`, and copies between addresses."""

    def __init__(self, ptr: int):
        self.ptr = ptr

    def copy_from_device_async(self, src: Pointer, size: int, stream=None) -> None:
        from cupy.cuda._stream import issue

        dst, src_ptr = self.ptr, src.ptr
        issue(lambda: ctypes.memmove(dst, src_ptr, size))


class MemoryPointer(Pointer):
    """An address inside a `Memory` (as `cupy.cuda.MemoryPointer`): `ptr`, `+ offset`."""

    def __init__(self, mem: Memory, offset: int = 0):
        self.mem = mem
        self.offset = offset

    @property
    def ptr(self) -> int:
        return self.mem.ptr + self.offset

    def __add__(self, offset: int) -> MemoryPointer:
        return MemoryPointer(self.mem, self.offset + int(offset))

    def __int__(self) -> int:
        return self.ptr


def alloc(nbytes: int) -> MemoryPointer:
    return MemoryPointer(Memory(int(nbytes)))
