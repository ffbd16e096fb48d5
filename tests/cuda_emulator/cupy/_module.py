"""`cupy.RawModule(path=...)` / `RawKernel` of the emulator: a ctypes library of kernels."""

from __future__ import annotations

import ctypes
import mmap
import threading

from cupy._memory import check_guards

_Dim3 = ctypes.c_uint * 3
_PAGE = 4096
_local = threading.local()
_libc = ctypes.CDLL(None, use_errno=True)
# Dynamic shared memory per block, in bytes: what a kernel gets without raising its
# `max_dynamic_shared_size_bytes` (cudaFuncSetAttribute), and an H100's most with it.
DEFAULT_DYNAMIC_SHARED = 48 * 1024
MOST_DYNAMIC_SHARED = 227 * 1024


def _workspace(lib: ctypes.CDLL) -> int:
    """This host thread's launch workspace (emu.h: record, then stacks over guard pages).

    One per thread for every kernel library: a workspace per library would exhaust the
    process's memory mappings after a few dozen compiled functions.
    """
    ws = getattr(_local, "workspace", None)
    if ws is None:
        for name in ("tjemu_workspace_bytes", "tjemu_record_bytes", "tjemu_stack_bytes"):
            lib[name].restype = ctypes.c_size_t
        size = lib.tjemu_workspace_bytes()
        stack = lib.tjemu_stack_bytes()
        area = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(area))
        for base in range(addr + lib.tjemu_record_bytes(), addr + size, stack):
            if _libc.mprotect(ctypes.c_void_p(base), ctypes.c_size_t(_PAGE), 0) != 0:
                raise OSError(ctypes.get_errno(), "mprotect of an emulator stack guard failed")
        ws = _local.workspace = (area, addr)
    return ws[1]


class RawKernel:
    """A kernel: `kernel(grid, block, args, shared_mem=0)` runs it to completion on the host.

    `shared_mem` bytes of dynamic shared memory, at most `max_dynamic_shared_size_bytes`
    (48 KiB unless raised, as CUDA's launch refuses more), are filled with a poison byte
    before the launch: a kernel that reads them before writing them sees garbage."""

    def __init__(self, lib: ctypes.CDLL, name: str):
        self.name = name
        try:
            self._fn = lib["tjemu_" + name]
        except AttributeError:
            raise RuntimeError(f"CUDA_ERROR_NOT_FOUND: no kernel named {name!r}") from None
        self._fn.restype = ctypes.c_int
        self._lib = lib
        sig = ctypes.addressof(ctypes.c_char.in_dll(lib, "tjemu_sig_" + name))
        self._kinds = ctypes.string_at(sig).decode()
        self._max_dynamic_shared = DEFAULT_DYNAMIC_SHARED

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        return self._max_dynamic_shared

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, size: int) -> None:
        if not 0 <= size <= MOST_DYNAMIC_SHARED:
            raise RuntimeError(f"CUDA_ERROR_INVALID_VALUE: {size} bytes of dynamic shared memory")
        self._max_dynamic_shared = size

    def __call__(self, grid, block, args, shared_mem: int = 0, **kwargs) -> None:
        from cupy.cuda._stream import issue

        grid, block, args = _dim3(grid), _dim3(block), [int(a) for a in args]
        self._check_aliasing(args)
        if shared_mem > self._max_dynamic_shared:
            raise RuntimeError(
                f"CUDA_ERROR_INVALID_VALUE: kernel {self.name} launched with {shared_mem} bytes "
                f"of dynamic shared memory, more than its {self._max_dynamic_shared}"
            )
        issue(lambda: self._launch(grid, block, args, shared_mem))

    def _check_aliasing(self, args: list[int]) -> None:
        """A `__restrict__` read-only pointer equal to a written one is undefined behaviour
        that g++ -O1 forgives and nvcc does not: it may load through the non-coherent cache
        and schedule the load after a store to the same address (seen on an H100)."""
        written = {a for a, k in zip(args, self._kinds) if k == "w"}
        for i, (a, k) in enumerate(zip(args, self._kinds)):
            if k == "r" and a in written:
                raise RuntimeError(
                    f"CUDA emulator: kernel {self.name}: restrict parameter {i} aliases a "
                    "buffer the kernel writes (undefined behaviour on a GPU)"
                )

    def _launch(self, grid, block, args, shared_mem: int = 0) -> None:
        grid = _Dim3(*_dim3(grid))
        block = _Dim3(*_dim3(block))
        values = (ctypes.c_uint64 * max(len(args), 1))(*args)
        error = ctypes.create_string_buffer(512)
        workspace = ctypes.c_void_p(_workspace(self._lib))
        shared = (
            ctypes.create_string_buffer(b"\xa5" * shared_mem, shared_mem) if shared_mem else None
        )
        self._lib.tjemu_set_dynamic_shared(shared)
        if self._fn(grid, block, values, workspace, error, ctypes.c_size_t(len(error))):
            raise RuntimeError(f"CUDA emulator: kernel {self.name}: {error.value.decode()}")
        check_guards(self.name)


def _dim3(d) -> tuple[int, int, int]:
    d = (d,) if isinstance(d, int) else tuple(int(v) for v in d)
    return (*d, *(1,) * (3 - len(d)))


class RawModule:
    def __init__(self, code: str | None = None, path: str | None = None, **kwargs):
        if path is None:
            raise NotImplementedError("the emulator loads compiled modules (path=) only")
        self._lib = ctypes.CDLL(path)
        self._kernels: dict[str, RawKernel] = {}

    def get_function(self, name: str) -> RawKernel:
        kernel = self._kernels.get(name)
        if kernel is None:
            kernel = self._kernels[name] = RawKernel(self._lib, name)
        return kernel
