"""CUDA kernels of the scans (cumsum, cumprod): NumPy's order along the axis, bit for bit.

NumPy's `accumulate` combines each element with the running value, in order along the axis
(`out[0] = x[0]`, `out[k] = f(out[k-1], x[k])`, f from ir/cwriter/library.py SCAN_COMBINE,
compiled with -fmad=false). A parallel (log-depth) scan would associate the terms otherwise
and round otherwise, so one thread scans each row, in that order; the kernels differ only in
how a row's elements reach its thread. x is (pre, n, post), contiguous:

* contiguous axis (`post == 1`, rows of `n` adjacent elements): tiled. A block of `WARP`
  threads owns `rb` rows and walks them in chunks of `c` columns. The block copies a chunk
  (rb x c elements) into shared memory, consecutive threads reading consecutive addresses
  (coalesced; one thread per row would read addresses a row apart), each thread scans its
  rows' chunk there in order, carrying the running value across chunks in the row's
  padding slot, and the block writes the chunk back the same way. Each thread's share of
  the next chunk is loaded into registers before the scan of this one (independent loads
  in flight during the scan). Short rows take several rows per thread in one chunk.
  Loads past the last row or column read nothing (0), and nothing is stored there.
* strided axis (`post > 1`): consecutive threads take consecutive columns `q`, so each load
  of a warp is already coalesced. A thread loads `k` elements of its row at once into
  registers (independent loads, the next k issued before these are combined); a load past
  the row's end reads its last element again (a valid address, no branch), never stored.
  Blocks stay small while threads are few, to spread them over the SMs.

Few rows (fewer than the GPU runs threads at once) leave most of the GPU idle: splitting a
row over threads needs another association of its terms, which changes the bits, so the
order stays NumPy's and such scans stay latency-bound.

>>> import numpy as np
>>> from tracejit.ir import kernel as K
>>> b = {0: K.Buffer(0, (4, 3), np.dtype(np.float32), "input"),
...      1: K.Buffer(1, (4, 3), np.dtype(np.float32), "output")}
>>> text, launch = scan_kernel(K.Fallback("k0", "cumsum", {"axis": 1}, [0], [1]), b)
>>> "__shared__ float tile[" in text, launch.block, launch.units
(True, 32, 32)
"""

from __future__ import annotations

from dataclasses import dataclass

from tracejit.backend_cuda.codegen import BLOCK, CUDA, Launch
from tracejit.ir import kernel as K
from tracejit.ir.c_render import c_type
from tracejit.ir.cwriter.emit import indent
from tracejit.ir.cwriter.library import SCAN_COMBINE
from tracejit.ir.gather_plan import gather_sizes

# Threads per block of the tiled kernel: one warp (few rows spread over many SMs).
WARP = 32
# Bytes of one row in a chunk of the tiled kernel (at most MAX_COLUMNS elements): a warp
# reads a row's chunk in 128-byte lines, and a thread keeps its share in registers.
CHUNK_BYTES = 256
MAX_COLUMNS = 64
# Bytes a thread of the strided kernel loads at once (8 to 32 elements; with the next chunk
# prefetched, twice that in flight: its row is the only parallelism it has).
STRIDED_BYTES = 128
# Blocks the strided kernel aims for before its blocks grow (an H100 has 132 SMs).
MIN_BLOCKS = 128


def _ll(v: int) -> str:
    return f"{v}LL"


@dataclass(frozen=True)
class _Tile:
    """A tile of the tiled kernel: `rb` rows of `c` columns (one chunk), row stride `s` in
    shared memory, `loads` elements of it per thread.

    Whole rows when they fit (`c == n`: the tile is a contiguous range of x, each load
    instruction reads WARP consecutive elements), else chunks of a power of two `c` (a
    multiple or a divisor of WARP, so load i of thread t is element (tr + ri, tc + ci) of
    the chunk, with ri and ci constants). s > c (the carry's slot) and s is odd (the
    threads of a warp, a row each, read different banks).
    """

    ctype: str
    rows: int
    n: int
    itemsize: int

    @property
    def budget(self) -> int:
        """Elements per tile."""
        return WARP * min(MAX_COLUMNS, CHUNK_BYTES // self.itemsize)

    @property
    def c(self) -> int:
        m = 1 << (min(self.rows, WARP).bit_length() - 1)  # a power of two <= rows
        return min(self.n, self.budget // m)

    @property
    def rb(self) -> int:
        """Rows per tile: a multiple of WARP where threads take several (even work)."""
        rb = min(self.rows, self.budget // self.c)
        return rb - rb % WARP if rb > WARP else rb

    @property
    def s(self) -> int:
        return self.c + 1 if self.c % 2 == 0 else self.c + 2

    @property
    def loads(self) -> int:
        return -(-self.rb * self.c // WARP)

    def _each(self, *lines: str) -> list[str]:
        """`lines` for each load i of this thread (unrolled), after its place in the tile."""
        c = self.c
        if self.c == self.n:
            place = f"const int e = t + i * {WARP};"
        elif c >= WARP:
            place = f"const int ri = i * {WARP} / {c}, ci = i * {WARP} % {c};"
        else:
            place = f"const int ri = i * {WARP // c}, ci = 0;"
        head = ["#pragma unroll", f"for (int i = 0; i < {self.loads}; ++i) {{", f"  {place}"]
        return [*head, *indent(list(lines)), "}"]

    def fetch(self, col: str) -> list[str]:
        """v[i] = this thread's elements of the chunk at column `col` (0 past the ends)."""
        z, n = f"{self.ctype}()", _ll(self.n)
        if self.c == self.n:
            at, total = "row0 * " + n + " + e", _ll(self.rows * self.n)
            return self._each(f"const int64_t at = {at};", f"v[i] = at < {total} ? x[at] : {z};")
        lines = [f"const int64_t row = row0 + tr + ri, col = {col} + tc + ci;"]
        lines += [f"v[i] = row < {_ll(self.rows)} && col < {n} ? x[row * {n} + col] : {z};"]
        return self._each(*lines)

    def slot(self) -> str:
        """This load's place in the tile (shared memory)."""
        if self.c == self.n:
            return f"e / {self.c} * {self.s} + e % {self.c}"
        return f"slot + ri * {self.s} + ci"

    def stash(self) -> list[str]:
        inside = self.loads * WARP > self.rb * self.c  # the last loads run past the tile
        guard = f"if (e < {self.rb * self.c}) " if inside else ""
        return self._each(f"{guard}tile[{self.slot()}] = v[i];")

    def store(self) -> list[str]:
        n = _ll(self.n)
        if self.c == self.n:
            at, total = "row0 * " + n + " + e", _ll(self.rows * self.n)
            ok = f"e < {self.rb * self.c} && at < {total}"
            return self._each(
                f"const int64_t at = {at};", f"if ({ok}) out[at] = tile[{self.slot()}];"
            )
        lines = ["const int64_t row = row0 + tr + ri, col = c0 + tc + ci;"]
        lines += [
            f"if (row < {_ll(self.rows)} && col < {n}) out[row * {n} + col] = tile[{self.slot()}];"
        ]
        return self._each(*lines)

    def scans(self, f: str) -> list[str]:
        """Each thread scans its rows of the chunk in order, from the carry in line[c]."""
        c, n, t = self.c, _ll(self.n), self.ctype
        return [
            f"for (int r = t; r < {self.rb}; r += {WARP}) {{",
            f"  if (row0 + r >= {_ll(self.rows)}) break;",
            f"  {t}* line = tile + r * {self.s};",
            f"  const int w = {n} - c0 < {c} ? (int)({n} - c0) : {c};",
            f"  {t} acc = c0 == 0 ? line[0] : {f}(line[{c}], line[0]);",
            "  line[0] = acc;",
            "#pragma unroll 16",
            "  for (int k = 1; k < w; ++k) {",
            f"    acc = {f}(acc, line[k]);",
            "    line[k] = acc;",
            "  }",
            f"  line[{c}] = acc;",
            "}",
        ]


def _tiled(step: K.Fallback, tile: _Tile) -> tuple[str, Launch]:
    c, t, n = tile.c, tile.ctype, _ll(tile.n)
    tiles = -(-tile.rows // tile.rb)
    body = [f"__shared__ {t} tile[{tile.rb * tile.s}];", "const int t = threadIdx.x;"]
    prefetch = []
    if c < tile.n:
        tr, tc = ("0", "t") if c >= WARP else (f"t / {c}", f"t % {c}")
        body += [f"const int tr = {tr}, tc = {tc}, slot = tr * {tile.s} + tc;"]
        prefetch = [f"if (c0 + {c} < {n}) {{  // the next chunk's loads, in flight during the scan"]
        prefetch += [*indent(tile.fetch(f"c0 + {c}")), "}"]
    # no barrier before the stash: a thread stashes the very slots it has just written back
    chunk = [*tile.stash(), "__syncthreads();", *prefetch, *tile.scans(SCAN_COMBINE[step.prim])]
    chunk += ["__syncthreads();", *tile.store()]
    body += [
        f"for (int64_t g = blockIdx.x; g < {_ll(tiles)}; g += gridDim.x) {{",
        f"  const int64_t row0 = g * {tile.rb}LL;",
        f"  {t} v[{tile.loads}];",
        *indent(tile.fetch("0")),
        f"  for (int64_t c0 = 0; c0 < {n}; c0 += {c}) {{",
        *indent(chunk, 4),
        "  }",
        "}",
    ]
    text = CUDA.function(step.name, _params(t), body)
    return text, Launch(step.name, _buffers(step), WARP, tiles * WARP, True)


def _strided(step: K.Fallback, t: str, pre: int, n: int, post: int, itemsize: int):
    k = max(8, min(32, STRIDED_BYTES // itemsize))
    at = lambda i: f"base + ({i} < {_ll(n)} ? {i} : {_ll(n - 1)}) * {_ll(post)}"
    body = [
        f"const int64_t q = u % {_ll(post)}, p = u / {_ll(post)};",
        f"const int64_t base = p * {_ll(n * post)} + q;",
        f"{t} acc = x[base];",
        "out[base] = acc;",
        f"{t} v[{k}];",
        "#pragma unroll",
        f"for (int j = 0; j < {k}; ++j) v[j] = x[{at('1 + j')}];",
        f"for (int64_t k0 = 1; k0 < {_ll(n)}; k0 += {k}) {{",
        f"  {t} next[{k}];",
        "#pragma unroll",
        f"  for (int j = 0; j < {k}; ++j) next[j] = x[{at(f'k0 + {k} + j')}];  // prefetch",
        "#pragma unroll",
        f"  for (int j = 0; j < {k}; ++j) {{",
        f"    if (k0 + j < {_ll(n)}) {{",
        f"      acc = {SCAN_COMBINE[step.prim]}(acc, v[j]);",
        f"      out[base + (k0 + j) * {_ll(post)}] = acc;",
        "    }",
        "    v[j] = next[j];",
        "  }",
        "}",
    ]
    units = pre * post if n > 0 else 0
    text = CUDA.function(step.name, _params(t), CUDA.parallel_for(units, body))
    return text, Launch(step.name, _buffers(step), _strided_block(units), units, True)


def _strided_block(units: int) -> int:
    """Threads per block of the strided kernel: BLOCK, or fewer (down to a warp) where that
    keeps MIN_BLOCKS blocks, so few columns still spread over many SMs."""
    fit = max(units // MIN_BLOCKS, 1)
    return min(BLOCK, max(WARP, 1 << (fit.bit_length() - 1)))


def _params(t: str) -> list[str]:
    # x may be out (an in-place plan): every element is read before its position is written
    return [f"const {t}* x", f"{t}* out"]


def _buffers(step: K.Fallback) -> list[int]:
    return list(step.inputs) + list(step.outputs)


def scan_kernel(step: K.Fallback, buffers: dict[int, K.Buffer]) -> tuple[str, Launch]:
    """The kernel of a cumsum / cumprod step and its launch (no `__launch_bounds__`: see
    reduce.py)."""
    pre, n, post, _ = gather_sizes(step, buffers)
    dt = buffers[step.inputs[0]].dtype
    if post == 1 and pre * n > 0:
        return _tiled(step, _Tile(c_type(dt), pre, n, dt.itemsize))
    return _strided(step, c_type(dt), pre, n, post, dt.itemsize)


__all__ = ["scan_kernel"]
