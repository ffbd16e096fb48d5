"""Runs a CUDA program: buffers from CuPy's pool, kernels, cuBLAS/cuSOLVER/cuFFT, NumPy fallbacks.

Per call: inputs become device pointers (CuPy arrays as they are, NumPy arrays copied in),
outputs are fresh CuPy arrays with `.block_until_ready()` (results.py), and the temporaries live in one arena allocation from CuPy's
memory pool sliced by the memory plan (`Buffer.offset`). Views are the same pointer under
another buffer id. Everything is queued on CuPy's current stream; nothing synchronizes except
a NumPy fallback step (one with no kernel and no CuPy library function: `ir/gather_plan`
and `backend_cuda/library.py` say which have one), which must read its operands on the host.

The kernels read every read-only input through `__restrict__`, which holds while outputs are
fresh arrays; a donating call, whose outputs may be written into its inputs' memory, runs
with kernels generated for the pairs it shares (`CudaExecutable.for_outputs`, sharing.py).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from tracejit.backend_cuda import codegen, library, nvrtc
from tracejit.backend_cuda.codegen import CudaProgram, Launch
from tracejit.backend_cuda.graphs import GraphRunner
from tracejit.backend_cuda.loops import LoopStep, is_loop
from tracejit.backend_cuda.results import new_result
from tracejit.backend_cuda.sharing import shared_pairs
from tracejit.devices import device_input, to_cuda
from tracejit.distributed import nccl
from tracejit.ir import kernel as K
from tracejit.ir.gather_plan import is_native
from tracejit.ir.interpret import apply_primitive
from tracejit.ir.primitives import get as get_primitive

# Most blocks a grid-stride kernel launches per SM: enough resident warps to saturate memory
# bandwidth, few enough that each thread loops over several elements.
BLOCKS_PER_SM = 32

_modules: dict[str, object] = {}  # source -> loaded RawModule (one compile per process)


def load_module(cupy, source: str, names: Sequence[str]):
    """A `cupy.RawModule` of `source` with every kernel loaded (CompileError with the log).

    The binary comes from `nvrtc.binary_path` (compiled with IEEE float options, cached on
    disk by tracejit's cache, so a second process skips NVRTC); this dict skips the load
    within a process.
    """
    module = _modules.get(source)
    if module is not None:
        return module
    capability = int(cupy.cuda.Device().compute_capability)
    module = cupy.RawModule(path=nvrtc.binary_path(source, capability))
    for name in names:
        module.get_function(name)  # loads now: errors surface at jit time, not mid-run
    _modules[source] = module
    return module


class _Step:
    """One runnable step over the per-call pointer table `ptrs` / array table `arrays`."""

    def __call__(self, call: _Call) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class _KernelStep(_Step):
    def __init__(self, function, launch: Launch, max_blocks: int):
        self.function = function
        self.params = launch.params
        self.block = (launch.block,)
        self.grid = (launch.grid(max_blocks),)

    def __call__(self, call: _Call) -> None:
        if self.grid[0] == 0:
            return
        ptrs = call.ptrs
        self.function(self.grid, self.block, tuple(np.uint64(ptrs[b]) for b in self.params))


class _MatmulStep(_Step):
    def __init__(self, cupy, step: K.Matmul):
        self.cupy = cupy
        self.s = step

    def __call__(self, call: _Call) -> None:
        s = self.s
        if s.batch == 0 or s.m == 0 or s.n == 0:
            return
        a_shape = (s.batch, s.k, s.m) if s.trans_a else (s.batch, s.m, s.k)
        b_shape = (s.batch, s.n, s.k) if s.trans_b else (s.batch, s.k, s.n)
        a = call.array(s.a).reshape(a_shape)
        b = call.array(s.b).reshape(b_shape)
        out = call.array(s.out).reshape(s.batch, s.m, s.n)
        if s.trans_a:
            a = a.swapaxes(1, 2)
        if s.trans_b:
            b = b.swapaxes(1, 2)
        if s.batch == 1:  # a plain GEMM: cuBLAS without the batched path
            a, b, out = a[0], b[0], out[0]
        self.cupy.matmul(a, b, out=out)


class _FallbackStep(_Step):
    """A primitive with no CUDA kernel yet: operands to the host, NumPy, results back."""

    def __init__(self, step: K.Fallback, buffers: dict[int, K.Buffer]):
        self.s = step
        self.prim = get_primitive(step.prim)
        self.buffers = buffers

    def __call__(self, call: _Call) -> None:
        s = self.s
        ins = [call.array(b).get() for b in s.inputs]
        results = apply_primitive(self.prim, ins, s.attrs)
        for b, res in zip(s.outputs, results):
            buf = self.buffers[b]
            if buf.size:
                call.array(b).set(np.ascontiguousarray(res, dtype=buf.dtype).reshape(buf.shape))


_KIND = {_KernelStep: "kernel", _MatmulStep: "matmul", _FallbackStep: "host", LoopStep: "host"}
_KIND[nccl.NcclStep] = "host"  # not captured in a CUDA graph
_KIND[library.LibraryStep] = "host"  # cuSOLVER's status check synchronizes


def step_kinds(exe: CudaExecutable) -> list[str]:
    """What each step of `exe` launches: "kernel", "matmul" or "host" (GraphRunner's test)."""
    return [_KIND[type(step)] for step in exe.steps]


class _Call:
    """The state of one call: a device pointer and (lazily) a CuPy array per buffer."""

    def __init__(self, exe: CudaExecutable, args: Sequence, outs=None, arena=None):
        cupy = exe.cupy
        self.exe = exe
        ptrs = dict(exe.const_ptrs)
        arrays: dict[int, object] = dict(exe.const_arrays)
        for b, x in zip(exe.schedule.inputs, args):
            x = device_input(cupy, x, exe.buffers[b].dtype)
            arrays[b] = x
            ptrs[b] = x.data.ptr
        self.outputs = []
        for k, b in enumerate(exe.schedule.outputs):
            buf = exe.buffers[b]
            given = outs[k] if outs is not None else None  # a donated input's buffer
            if given is None and b in exe.adoptable:
                self.outputs.append(None)  # its library step adopts CuPy's result, or `array`
                continue
            # a new array object on the donated memory (not `given` itself, nor a view of it:
            # donation needs an owner with `base` None on the next call; see results.py)
            out = new_result(cupy, buf.shape, buf.dtype, None if given is None else given.data)
            arrays[b] = out
            ptrs[b] = out.data.ptr
            self.outputs.append(out)
        if arena is None and exe.schedule.arena_bytes:
            arena = cupy.cuda.alloc(exe.schedule.arena_bytes)
        self.arena = arena if exe.schedule.arena_bytes else None
        base = self.arena.ptr if self.arena is not None else 0
        for b in exe.temps:
            ptrs[b] = base + exe.buffers[b].offset
        for b in exe.views:  # in base-first order
            ptrs[b] = ptrs[exe.buffers[b].base]
        self.ptrs = ptrs
        self.arrays = arrays

    def array(self, b: int):
        """Buffer `b` as a CuPy array (views and arena slices without copies)."""
        arr = self.arrays.get(b)
        if arr is not None:
            return arr
        exe, cupy = self.exe, self.exe.cupy
        buf = exe.buffers[b]
        if buf.kind == "output":  # one left for its library step: CuPy's result not adopted
            arr = new_result(cupy, buf.shape, buf.dtype)
            self.outputs[exe.schedule.outputs.index(b)] = arr
            self.ptrs[b] = arr.data.ptr
        elif buf.kind == "view":  # the base's memory, as an array with no `base`: CuPy's
            # FFTs copy an operand that has one (cupy/fft/_fft.py `_exec_fft`)
            arr = cupy.ndarray(buf.shape, buf.dtype, self.array(buf.base).data)
        else:  # a temporary: a slice of this call's arena
            arr = cupy.ndarray(buf.shape, buf.dtype, self.arena + buf.offset)
        self.arrays[b] = arr
        return arr

    def adopt(self, b: int, arr) -> None:
        """Buffer `b` (in `exe.adoptable`, not yet written) is `arr`, a fresh contiguous
        array of its shape and dtype that a library returned: no copy into the buffer."""
        buf = self.exe.buffers[b]
        if buf.kind == "output":  # an owner of CuPy's memory, as every result (results.py)
            arr = new_result(self.exe.cupy, buf.shape, buf.dtype, arr.data)
            self.outputs[self.exe.schedule.outputs.index(b)] = arr
        self.arrays[b] = arr
        self.ptrs[b] = arr.data.ptr


class CudaExecutable:
    """A compiled function on the GPU: `__call__(arrays) -> CuPy arrays`, `source()`, `kernels()`."""

    def __init__(self, cupy, schedule: K.Schedule, program: CudaProgram, name: str = "function"):
        self.cupy = cupy
        self.name = name
        self.schedule = schedule
        self.program = program
        self.buffers = {b.id: b for b in schedule.buffers}
        self.const_arrays = {}
        self.const_ptrs = {}
        for b in schedule.buffers:
            if b.kind == "const":
                # the buffer's own shape: a stored scalar constant may be 1-d
                arr = to_cuda(cupy, schedule.consts[b.index]).reshape(b.shape)
                self.const_arrays[b.id] = arr
                self.const_ptrs[b.id] = arr.data.ptr
        self.temps = [b.id for b in schedule.buffers if b.kind == "temp"]
        self.views = [b for b in K.base_first(self.buffers) if self.buffers[b].kind == "view"]
        device = cupy.cuda.Device()
        self.max_blocks = device.attributes["MultiProcessorCount"] * BLOCKS_PER_SM
        kernels = iter(self._kernel_steps(program))
        self.steps: list[_Step] = []
        self.donating: dict[frozenset, CudaExecutable] = {}  # for_outputs' executables
        for step in schedule.steps:
            if isinstance(step, K.Kernel) or self._native(step):
                self.steps.append(next(kernels))
            elif isinstance(step, K.Matmul):
                self.steps.append(_MatmulStep(cupy, step))
            elif nccl.is_collective(step):  # NCCL on the stream, no host round trip
                self.steps.append(nccl.NcclStep(step, self.buffers))
            elif is_loop(step):  # regions compiled on their own, launched in a host loop
                self.steps.append(LoopStep(step, name))
            elif isinstance(step, K.Fallback) and library.runs_on_device(step, self.buffers):
                self.steps.append(library.LibraryStep(cupy, step, self.buffers))
            elif isinstance(step, K.Fallback):
                self.steps.append(_FallbackStep(step, self.buffers))
        run_by_cupy = [s.s for s in self.steps if isinstance(s, library.LibraryStep)]
        self.adoptable = library.adoptable(schedule, self.buffers, run_by_cupy)
        kinds = step_kinds(self)
        io = [b for b in schedule.buffers if b.kind in ("input", "output")]
        nbytes = schedule.arena_bytes + sum(b.size * b.dtype.itemsize for b in io)
        eligible = GraphRunner.eligible_steps(kinds, nbytes)
        self.graphs = GraphRunner(self) if eligible else None

    def _kernel_steps(self, program: CudaProgram) -> list[_KernelStep]:
        """A step per launch of `program` (one per kernel and native step, in order)."""
        names = [launch.name for launch in program.launches]
        module = load_module(self.cupy, program.source, names) if names else None
        return [
            _KernelStep(module.get_function(launch.name), launch, self.max_blocks)
            for launch in program.launches
        ]

    def for_outputs(self, args: Sequence, outs: Sequence | None) -> CudaExecutable:
        """The executable for a call writing outputs into `outs` (donation): this one when no
        output shares an input's memory, else one whose kernels read such an input without
        `__restrict__` where they write its output (sharing.py; made once per set of pairs)."""
        pairs = shared_pairs(self.schedule, args, outs) if outs is not None else frozenset()
        if not pairs:
            return self
        variant = self.donating.get(pairs)
        if variant is None:
            variant = copy.copy(self)  # the same schedule, buffers and non-kernel steps
            variant.program = codegen.generate(self.schedule, self.name, pairs)
            kernels = iter(variant._kernel_steps(variant.program))
            variant.steps = [next(kernels) if type(s) is _KernelStep else s for s in self.steps]
            variant.graphs = None  # a donating call launches step by step
            variant.donating = {}
            self.donating[pairs] = variant
        return variant

    def _native(self, step: K.Step) -> bool:
        return isinstance(step, K.Fallback) and is_native(step, self.buffers)

    def __call__(self, args: Sequence, outs: Sequence | None = None) -> list:
        """Run; `outs` (donation): per output, None or the CuPy array to write it into
        (a call with donated buffers runs launch by launch, not as a CUDA graph)."""
        if self.graphs is not None and outs is None:
            return self.graphs(args)
        return self.for_outputs(args, outs).run_plain(args, outs)

    def run_plain(self, args: Sequence, outs: Sequence | None = None) -> list:
        """One call, launch by launch (`outs` must not share an input's memory unless this
        executable is `for_outputs(args, outs)`: its kernels read inputs as `__restrict__`)."""
        call = self.start(args, outs)
        self.launch(call)
        return call.outputs

    def start(self, args: Sequence, outs: Sequence | None = None, arena=None) -> _Call:
        """A call's state: inputs on the device, fresh (or given) outputs, its arena (or a
        given one, at least `schedule.arena_bytes`: calls issued in order may share one)."""
        return _Call(self, args, outs, arena)

    def launch(self, call: _Call) -> None:
        """Queue every step of `call` on the current stream."""
        for step in self.steps:
            step(call)

    def source(self) -> str:
        return self.program.source

    def kernels(self) -> list[str]:
        return self.schedule.kernel_names()

    def fallbacks(self) -> list[str]:
        """Primitives this function runs through NumPy on the host (no CUDA kernel yet)."""
        steps = self.schedule.steps
        return [
            s.prim
            for s in steps
            if isinstance(s, K.Fallback)
            and not self._native(s)
            and not is_loop(s)
            and not nccl.is_collective(s)
        ]


__all__ = ["CudaExecutable", "load_module"]
