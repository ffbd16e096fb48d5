"""CUDA reduction kernels: a group of threads per outer index, phases separated by a reduce.

A block holds `X` outer indices ("rows") and `Y` threads per row; thread `lane` of a row walks
the inner index `j = lane, lane + Y, ...`. After each phase the row's partial results combine
across its `Y` threads — by warp shuffles (`__shfl_xor_sync`, every lane gets the result), then
through shared memory when a row spans several warps — and every thread of the row can use
them in the next phase. Two layouts:

* row layout (the rows are contiguous in memory: softmax, layernorm, a sum over the last axis):
  the `Y` threads of a row are consecutive lanes, so a warp reads consecutive addresses. When
  the kernel has several phases and the row fits (`ITEMS = ceil(inner / Y)` <= MAX_CACHED),
  each thread keeps its elements of every row-dependent load in registers: the row is read
  from memory once, as on the CPU it stays in cache.
* column layout (the outer index is the contiguous one: a sum over axis 0): the `X` threads of
  a warp take `X` consecutive outer indices, so each load instruction is coalesced, and the
  `Y` partial results of a row combine through shared memory.

>>> import numpy as np, tracejit as tj
>>> from tracejit.ir.fusion import fuse
>>> from tracejit.ir.memory import plan_memory
>>> from tracejit.backend_cuda.codegen import generate
>>> g = tj.make_ir(lambda x: x.sum(axis=1))(np.ones((4, 1024), np.float32))
>>> "__shfl_xor_sync" in generate(plan_memory(fuse(g))).source
True
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cuda.codegen import CUDA, Launch, kernel_params
from tracejit.ir import kernel as K
from tracejit.ir.c_render import UNSIGNED, c_type
from tracejit.ir.cwriter.emit import Emitter, decompose, indent
from tracejit.ir.cwriter.layout import load_bias
from tracejit.ir.cwriter.reduce import Accumulator, two_sum

# Threads per block of a reduction kernel in row layout (unless one row needs more threads).
ROW_BLOCK = 256
# Elements one thread aims to reduce before the cross-thread combine: enough sequential work
# to hide the shuffle/shared-memory combine, few enough that rows spread over many threads.
ITEMS_PER_THREAD = 8
# Most elements per thread kept in registers (per cached load) to read a row once.
MAX_CACHED = 16
# Column layout: at most this many threads share one outer index (the rest of the block spans
# consecutive outer indices); kept small so each reduction's shared array stays <= 4 KiB.
MAX_COLUMN_THREADS = 8
COLUMN_BLOCK = 256


def _pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _layout(k: K.Kernel) -> tuple[str, int, int]:
    """(layout, X rows per block, Y threads per row)."""
    outer = int(np.prod(k.outer, dtype=np.int64)) if k.outer else 1
    inner = int(np.prod(k.inner, dtype=np.int64)) if k.inner else 1
    row, col = load_bias(k)  # ir/cwriter/layout.py
    if col > row and outer >= 32:
        y = min(_pow2_at_least(-(-inner // (2 * ITEMS_PER_THREAD))), MAX_COLUMN_THREADS)
        return "column", COLUMN_BLOCK // y, y
    y = min(_pow2_at_least(-(-inner // ITEMS_PER_THREAD)), 1024)
    return "row", max(1, ROW_BLOCK // y), y


class _Reduction(Accumulator):
    """One reduction's accumulator in a thread (ir/cwriter/reduce.py), its update and its
    cross-thread merge: argmax/argmin start with no candidate (index -1) and meet through
    `tj_arg_better`, candidates arriving from other lanes in any index order."""

    def __init__(self, r: K.Reduction):
        super().__init__(r, CUDA)
        # float64 sums keep each add's exact rounding error (TwoSum) in a second accumulator:
        # a thread adds thousands of terms in order, and a plain double sum of 2^20 copies
        # of 0.1 was 112 ulps off (NumPy's pairwise sum: 1)
        self.compensated = r.op == "sum" and np.dtype(r.dtype) == np.float64

    def parts(self) -> list[tuple[str, str]]:
        if self.compensated:
            return [("double", self.name), ("double", f"{self.name}c")]
        return super().parts()

    def init(self) -> list[str]:
        if self.compensated:
            return [f"double {self.name} = 0, {self.name}c = 0;"]
        return [f"{t} {var} = {s};" for (t, var), s in zip(self.parts(), self.starts(False))]

    def combine(self, a: str, b: str) -> str:
        # integer sums and products of partial results wrap like NumPy's: a signed overflow
        # is undefined in CUDA C (NVRTC has no -fwrapv) and may be folded away
        dt = np.dtype(self.r.dtype)
        if self.r.op in ("sum", "prod") and not self.is_bool and dt in UNSIGNED:
            op = "+" if self.r.op == "sum" else "*"
            return f"(({self.acc_t})(({UNSIGNED[dt]})({a}) {op} ({UNSIGNED[dt]})({b})))"
        return super().combine(a, b)

    def update(self, v: str, index: str) -> list[str]:
        if self.is_arg:
            return self.merge_from(v, f"(int64_t)({index})")
        if self.compensated:
            return _two_sum(self.name, v, "")
        return [f"{self.name} = {self.combine(self.name, self.term(v))};"]

    def merge_from(self, src_v: str, src_i: str = "") -> list[str]:
        """Fold another thread's accumulator (`src_v`, and `src_i` for arg reductions and
        compensated sums: the index, the error term) in."""
        a = self.name
        if self.is_arg:
            is_max = "true" if self.r.op == "argmax" else "false"
            cand = f"tj_arg_better<{self.acc_t}>({src_v}, {src_i}, {a}v, {a}i, {is_max})"
            return [f"if ({cand}) {{ {a}v = {src_v}; {a}i = {src_i}; }}"]
        if self.compensated:
            return _two_sum(a, src_v, src_i)
        return [f"{a} = {self.combine(a, src_v)};"]

    def final(self) -> str:
        a = self.name
        if self.compensated:
            # an Inf or NaN term makes the error term NaN: the plain sum is the answer then
            return f"const double r{self.r.rid} = isfinite({a}) ? {a} + {a}c : {a};"
        return self.result(f"{a}i < 0 ? 0 : {a}i" if self.is_arg else a)


def _two_sum(a: str, x: str, xc: str) -> list[str]:
    """Add `x` (and its error term `xc`) into the pair (`a`, `a`c), in a block of its own."""
    return ["{", *indent(two_sum(a, f"{a}c", x, "", xc)), "}"]


def _shuffle_combine(red: _Reduction, width: int) -> list[str]:
    """Butterfly over `width` consecutive lanes: every lane ends with the group's result."""
    lines = [f"for (int m = {width // 2}; m > 0; m >>= 1) {{"]
    parts = red.parts()
    others = [f"__shfl_xor_sync(0xffffffffu, {var}, m, {width})" for _, var in parts]
    names = [f"{var}_o" for _, var in parts]
    lines += [f"  const {t} {n} = {o};" for (t, _), n, o in zip(parts, names, others)]
    lines += indent(red.merge_from(*names))
    return lines + ["}"]


def _fold_shared(red: _Reduction, first: str, at: str, count: int) -> list[str]:
    """Fold `count` partial results from shared memory into `red`'s accumulator, in order:
    element `first` of each part's array `s<rid>_<part>`, then element `at` for q = 1, ..."""
    rid, parts = red.r.rid, red.parts()
    lines = [f"{var} = s{rid}_{var}[{first}];" for _, var in parts]
    lines.append(f"for (int q = 1; q < {count}; ++q) {{")
    lines += indent(red.merge_from(*(f"s{rid}_{var}[{at}]" for _, var in parts)))
    return lines + ["}"]


class _Writer:
    def __init__(self, kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set, donated):
        self.k = kernel
        self.buffers = buffers
        self.donated = donated  # (input, output) pairs sharing memory (codegen.generate)
        self.uses = uses
        self.idx = CUDA.index_type(self.k)
        self.layout, self.x, self.y = _layout(self.k)
        self.threads = self.x * self.y
        self.outer = int(np.prod(self.k.outer, dtype=np.int64)) if self.k.outer else 1
        self.inner = int(np.prod(self.k.inner, dtype=np.int64)) if self.k.inner else 1
        self.items = -(-self.inner // self.y)
        self.reds = {r.rid: _Reduction(r) for r in self.k.reductions}
        self.cache = self._cached_loads()

    def _cached_loads(self) -> dict:
        """Row-dependent loads kept in registers (row layout, several phases, short rows)."""
        k = self.k
        if self.layout != "row" or k.nphases < 2 or self.items > MAX_CACHED:
            return {}
        nouter = len(k.outer)
        loads = sorted(
            {ld for ld in k.loads() if any(ld.strides[nouter:])},
            key=lambda ld: (ld.buf, ld.offset, ld.strides),
        )
        return {ld: f"c{n}[it]" for n, ld in enumerate(loads)}

    # -- pieces
    def _inner_loop(self, body: list[str], cached: bool) -> list[str]:
        k, idx = self.k, self.idx
        split = decompose(k.inner, "j", len(k.outer), idx, suffix="")
        if cached:
            head = [
                "#pragma unroll",
                f"for (int it = 0; it < {self.items}; ++it) {{",
                f"  const {idx} j = lane + ({idx})it * {self.y};",
            ]
            if self.items * self.y == self.inner:  # every j is in the row: no bounds check
                return head + indent(split + body) + ["}"]
            head.append(f"  if (j < {self.inner}) {{")
            return head + indent(split + body, 4) + ["  }", "}"]
        head = [f"for ({idx} j = lane; j < {self.inner}; j += {self.y}) {{"]
        return head + indent(split + body) + ["}"]

    def _fill_cache(self) -> list[str]:
        if not self.cache:
            return []
        lines = [f"{c_type(ld.dtype)} c{n}[{self.items}];" for n, ld in enumerate(self.cache)]
        em = Emitter(CUDA, self.uses, "f", self.idx)
        body = [
            f"{text} = b{ld.buf}[{em.affine(ld.offset, ld.strides)}];"
            for ld, text in self.cache.items()
        ]
        return lines + ["if (active) {", *indent(self._inner_loop(body, True)), "}"]

    def _combine_group(self, red: _Reduction) -> list[str]:
        """Statements leaving the row's result in every thread's accumulator of `red`."""
        lines: list[str] = []
        rid = red.r.rid
        if self.layout == "row":
            width = min(self.y, 32)
            if width > 1:
                lines += _shuffle_combine(red, width)
            if self.y > 32:
                warps = self.y // 32
                for t, var in red.parts():
                    lines.append(f"__shared__ {t} s{rid}_{var}[{self.threads // 32}];")
                lines.append("if ((threadIdx.x & 31) == 0) {")
                lines += [f"  s{rid}_{var}[threadIdx.x >> 5] = {var};" for _, var in red.parts()]
                lines += ["}", "__syncthreads();"]
                lines += _fold_shared(red, f"row * {warps}", f"row * {warps} + q", warps)
            return lines
        if self.y == 1:
            return lines
        for t, var in red.parts():
            lines.append(f"__shared__ {t} s{rid}_{var}[{self.threads}];")
            lines.append(f"s{rid}_{var}[threadIdx.x] = {var};")
        lines.append("__syncthreads();")
        return lines + _fold_shared(red, "row", f"q * {self.x} + row", self.y)

    def _phase(self, phase: int) -> list[str]:
        k = self.k
        reds = [self.reds[r.rid] for r in k.reductions if r.phase == phase]
        em = Emitter(CUDA, self.uses, f"p{phase}_", self.idx, replace=self.cache)
        update = []
        for red in reds:
            v = em.value(red.r.expr)
            update += red.update(v, f"i{red.r.arg_dim}" if red.is_arg else "")
        stores = em.stores(k, phase)
        body = em.lines + update + stores
        lines = [f"// phase {phase}"]
        for red in reds:
            lines += red.init()
        if body:
            lines += ["if (active) {", *indent(self._inner_loop(body, bool(self.cache))), "}"]
        for red in reds:
            lines += self._combine_group(red) + [red.final()]
        return lines

    def _epilogue(self) -> list[str]:
        em = Emitter(CUDA, self.uses, "e", self.idx)
        stores = em.stores(self.k, -1)
        if not stores:
            return []
        return ["if (active && lane == 0) {", *indent(em.lines + stores), "}"]

    def function(self) -> str:
        k, idx = self.k, self.idx
        _, params = kernel_params(k, self.buffers, self.donated)
        if self.layout == "row":
            lane, row = f"threadIdx.x % {self.y}", f"threadIdx.x / {self.y}"
        else:
            lane, row = f"threadIdx.x / {self.x}", f"threadIdx.x % {self.x}"
        body = [
            f"const int lane = {lane};",
            f"const int row = {row};",
            f"const {idx} u = ({idx})blockIdx.x * {self.x} + row;",
            f"const bool active = u < {self.outer};",
            "(void)lane; (void)row;",
            *decompose(k.outer, "u", 0, idx, suffix=""),
            *self._fill_cache(),
        ]
        for phase in range(k.nphases):
            body += self._phase(phase)
        body += self._epilogue()
        return CUDA.function(k.name, [params], body, self.threads)

    def launch(self) -> Launch:
        ids, _ = kernel_params(self.k, self.buffers)
        blocks = -(-self.outer // self.x)
        return Launch(self.k.name, ids, self.threads, blocks, False)


def reduction_kernel(
    kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set, donated=frozenset()
) -> tuple[str, Launch]:
    """A reduction kernel (see the module docstring) and its launch."""
    writer = _Writer(kernel, buffers, uses, donated)
    return writer.function(), writer.launch()


__all__ = ["reduction_kernel"]
