"""sort / argsort along the last axis of a C-ordered CuPy array: one kernel of tracejit's own.

CuPy's `cupy.sort(x, axis=-1)` of an n x n float32 array runs thrust with a segmented
comparator. On an H100 that took (ms) 0.438 for n = 1024, 1.505 for 2048 and 5.898 for 4096,
where JAX took 0.150 / 0.413 / 1.446 and torch.compile 0.110 / 0.262 / 0.640. Here a block
sorts whole rows of up to MAX_ROW elements in shared memory with a bitonic network:

* Items: each element becomes (key, its index in the row). The key is an unsigned integer in
  NumPy's order: a float's bits with the sign bit flipped (all bits for a negative value),
  -0.0 the key of 0.0, every NaN the largest key; a signed integer with its sign bit flipped;
  unsigned and bool as they are. Ties break by index, so the order is NumPy's stable one
  (NaNs last, in input order) and every comparison is on integers: no float compare, so
  no flush-to-zero or NaN rule can change it. An item is one unsigned integer, the key above
  the index (32 bits for 1- and 2-byte types, 64 for 4-byte ones), or a (key, index) pair for
  8-byte types. argsort writes the indices; sort gathers the input's elements by them, so the
  values' bits (NaN payloads, -0.0) are NumPy's `np.sort(x, kind="stable")`.
* Tiles: a row is padded to P, a power of two, with items after every real one; a block
  sorts a tile of max(P, MIN_TILE) items (several rows when they are short), each thread
  holding E items in registers. The network's compare-exchanges at distance j = 2^b run in
  registers when bit b of the position is one of the thread's "register bits": the tile goes
  through shared memory (one barrier) only when the next passes need other register bits, so
  a thread does log2(E) passes per round trip. Shared memory is padded (a slot per E items) so
  the threads of a warp hit distinct banks in every layout.
* Launch: one block per tile, P / E threads (at least MIN_TILE / E), dynamic shared memory
  raised past 48 KiB where a tile needs it (P = 8192 of 4-byte keys: 68 KiB).

Rows longer than MAX_ROW (a long one-axis sort: CuPy's radix sort is fast), another axis,
a non-contiguous operand or another dtype take the array library's sort (`ARRAY_IMPLS`);
tnp's sort along another axis reaches here as rows of a transposed copy, and float16 as
float32 (ir/passes/widen.py). Modules are compiled once per (dtype, P) with tracejit's own
NVRTC options (nvrtc.py). On the H100 (twelfth session, benchmarks/RESULTS.md) rows of
n x n float32 took 0.070 / 0.168 / 0.645 ms at n = 1024 / 2048 / 4096, torch.compile 0.119 /
0.208 / 0.667, JAX 0.156 / 0.388 / 1.434. ptxas (sm_90): 80-96 registers for 4-byte keys, no
spills to speak of; 8-byte keys at P = 8192 spill (512 threads, 128 registers).
"""

from __future__ import annotations

import functools
import math
import string
from dataclasses import dataclass

import numpy as np

from tracejit.backend_cuda.codegen import HEADER
from tracejit.ir.array_library import ARRAY_IMPLS

MAX_ROW = 8192  # longest row sorted here: P * items fit an H100's 227 KiB of shared memory
E = 16  # items per thread (log2(E) network passes per shared-memory round trip)
MIN_TILE = 2048  # items per block at least: short rows are sorted several to a block
DEFAULT_SHARED = 48 * 1024  # dynamic shared memory a launch gets without the attribute

# key bits per item size: (item type, bits of the index below the key) or a pair
_PACKED = {1: ("unsigned int", 16), 2: ("unsigned int", 16), 4: ("unsigned long long", 32)}
_ITEM_BYTES = {1: 4, 2: 4, 4: 8, 8: 16}
_BITS = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}
_INF = {2: "0x7C00u", 4: "0x7F800000u", 8: "0x7FF0000000000000ull"}  # bits of +inf


def applies(x, axis: int) -> bool:
    """Whether the kernel sorts `x` along `axis`: the last, contiguous, short enough rows."""
    return (
        x.ndim >= 1
        and axis in (-1, x.ndim - 1)
        and x.flags.c_contiguous
        and x.shape[-1] <= MAX_ROW
        and x.dtype.kind in "biuf"
        and x.dtype.itemsize in _BITS
    )


def _key(dt: np.dtype) -> str:
    """C expression: the order-preserving unsigned key of the element bits `u` (type UT)."""
    sign = f"((UT)1 << {8 * dt.itemsize - 1})"
    if dt.kind == "f":  # NaN: all ones; a negative value (not -0.0): every bit flipped
        a = f"(UT)(u & (UT)~{sign})"  # the magnitude's bits
        nan, negative = f"{a} > {_INF[dt.itemsize]}", f"(u & {sign}) && {a}"
        return f"{nan} ? (UT)~(UT)0 : {negative} ? (UT)~u : (UT)(u | {sign})"
    if dt.kind == "i":
        return f"(UT)(u ^ {sign})"
    return "u"


def _items(dt: np.dtype) -> str:
    """The Item type and its functions for keys of `dt`."""
    size = dt.itemsize
    head = f"typedef {_BITS[size]} UT;\n"
    key = f"  const UT key = {_key(dt)};\n"
    if size in _PACKED:
        item, shift = _PACKED[size]
        return head + (
            f"typedef {item} Item;\n"
            "#define TJ_PAD (~(Item)0)\n"
            "static __device__ __forceinline__ Item tj_item(UT u, unsigned int pos) {\n"
            f"{key}  return (Item)key << {shift} | pos;\n}}\n"
            "static __device__ __forceinline__ bool tj_before(Item a, Item b) { return a < b; }\n"
            "static __device__ __forceinline__ unsigned int tj_index(Item a) {\n"
            f"  return (unsigned int)(a & {(1 << shift) - 1:#x}u);\n}}\n"
        )
    return head + (
        "struct Item { unsigned long long k; unsigned int i; };\n"
        "#define TJ_PAD (Item{~0ull, ~0u})\n"
        "static __device__ __forceinline__ Item tj_item(UT u, unsigned int pos) {\n"
        f"{key}  return Item{{key, pos}};\n}}\n"
        "static __device__ __forceinline__ bool tj_before(Item a, Item b) {\n"
        "  return a.k < b.k || (a.k == b.k && a.i < b.i);\n}\n"
        "static __device__ __forceinline__ unsigned int tj_index(Item a) { return a.i; }\n"
    )


# The sort of one tile (rows row0.. of x) into shared memory `sh`, in slot order; then the
# kernels write the indices or gather the values. LOGP, LOGT (tile), T (threads) are defined.
_BODY = r"""
#define TJ_SLOT(p) ((p) + ((p) >> LOGE))
// the first of this thread's E positions when bits lo..lo+LOGE-1 are its register bits
static __device__ __forceinline__ int tj_base(int t, int lo) {
  return ((t >> lo) << (lo + LOGE)) | (t & ((1 << lo) - 1));
}
static __device__ __forceinline__ void tj_sort_tile(const UT* __restrict__ x, Item* sh,
                                                    long long rows, long long n, long long row0) {
  const int t = threadIdx.x;
#pragma unroll
  for (int i = 0; i < E; ++i) {  // coalesced loads
    const int p = t + i * T, pos = p & ((1 << LOGP) - 1);
    const long long row = row0 + (p >> LOGP);
    sh[TJ_SLOT(p)] = row < rows && pos < n ? tj_item(x[row * n + pos], pos) : TJ_PAD;
  }
  __syncthreads();
  Item v[E];
  int cur = 0, base = tj_base(t, 0);  // the layout v holds
#pragma unroll
  for (int e = 0; e < E; ++e) v[e] = sh[TJ_SLOT(base + e)];
#pragma unroll 1
  for (int s = 1; s <= LOGP; ++s) {  // merge sorted runs of 2^(s-1) into runs of 2^s
#pragma unroll 1
    for (int c = (s - 1) / LOGE; c >= 0; --c) {  // the passes j = 2^b, b in [c*LOGE, ...)
      const int lo = c * LOGE < LOGT - LOGE ? c * LOGE : LOGT - LOGE;
      if (lo != cur) {  // through shared memory: bits lo.. become the register bits
#pragma unroll
        for (int e = 0; e < E; ++e) sh[TJ_SLOT(base + (e << cur))] = v[e];
        __syncthreads();
        cur = lo;
        base = tj_base(t, lo);
#pragma unroll
        for (int e = 0; e < E; ++e) v[e] = sh[TJ_SLOT(base + (e << cur))];
      }
#pragma unroll
      for (int rb = LOGE - 1; rb >= 0; --rb) {
        const int b = lo + rb;
        if (b < c * LOGE || b >= s) continue;
#pragma unroll
        for (int e = 0; e < E; ++e) {
          if (e & (1 << rb)) continue;
          const int p = base + (e << lo);
          const bool up = ((p & ((1 << LOGP) - 1)) >> s & 1) == 0;  // ascending run
          const Item a = v[e], z = v[e | 1 << rb];
          const bool swap = tj_before(z, a) == up;
          v[e] = swap ? z : a;
          v[e | 1 << rb] = swap ? a : z;
        }
      }
    }
  }
#pragma unroll
  for (int e = 0; e < E; ++e) sh[TJ_SLOT(base + (e << cur))] = v[e];
  __syncthreads();
}

"""

# A kernel: a block sorts its tile, then writes each row position's result from the index k
# of the item there (`write`).
_KERNEL = string.Template(r"""
extern "C" __global__ void __launch_bounds__(T) $name(
    const UT* __restrict__ x, $out* out, long long rows, long long n) {
  extern __shared__ unsigned long long tj_shared[];
  Item* sh = reinterpret_cast<Item*>(tj_shared);
  const long long row0 = (long long)blockIdx.x << (LOGT - LOGP);
  tj_sort_tile(x, sh, rows, n, row0);
#pragma unroll
  for (int i = 0; i < E; ++i) {  // coalesced stores
    const int p = threadIdx.x + i * T, pos = p & ((1 << LOGP) - 1);
    const long long row = row0 + (p >> LOGP);
    if (row < rows && pos < n) {
      const unsigned int k = tj_index(sh[TJ_SLOT(p)]);
      out[row * n + pos] = $write;
    }
  }
}
""")
_OUTPUTS = {"tj_row_argsort": ("long long", "k"), "tj_row_sort": ("UT", "x[row * n + k]")}


@dataclass(frozen=True)
class _Plan:
    """The tile of rows padded to `p` items: `threads` and `rows` per block, `shared` bytes."""

    p: int
    itemsize: int

    @property
    def tile(self) -> int:
        return max(self.p, MIN_TILE)

    @property
    def threads(self) -> int:
        return self.tile // E

    @property
    def rows_per_block(self) -> int:
        return self.tile // self.p

    @property
    def shared(self) -> int:
        return (self.tile + self.tile // E) * _ITEM_BYTES[self.itemsize]


def source(dt: np.dtype, plan: _Plan) -> str:
    """The module's CUDA source: both kernels for rows of `dt` padded to `plan.p`."""
    defines = {"E": E, "LOGE": E.bit_length() - 1, "LOGP": plan.p.bit_length() - 1,
               "LOGT": plan.tile.bit_length() - 1, "T": plan.threads}  # fmt: skip
    head = "".join(f"#define {k} {v}\n" for k, v in defines.items())
    kernels = [
        _KERNEL.substitute(name=name, out=out, write=write)
        for name, (out, write) in _OUTPUTS.items()
    ]
    return HEADER + head + _items(dt) + _BODY + "".join(kernels)


@functools.cache
def _kernels(cupy, char: str, p: int):
    """(argsort kernel, sort kernel, plan) for rows of dtype `char` padded to `p`."""
    from tracejit.backend_cuda.launcher import load_module

    dt = np.dtype(char)
    plan = _Plan(p, dt.itemsize)
    names = tuple(_OUTPUTS)
    module = load_module(cupy, source(dt, plan), names)
    kernels = tuple(module.get_function(name) for name in names)
    if plan.shared > DEFAULT_SHARED:
        for kernel in kernels:
            kernel.max_dynamic_shared_size_bytes = plan.shared
    return (*kernels, plan)


def row_sort(x, xp, *, indices: bool):
    """The stable argsort (`indices`, int64) or sort of `x` along its last axis (`applies`)."""
    out = xp.empty(x.shape, np.int64 if indices else x.dtype)
    n = x.shape[-1]
    rows = math.prod(x.shape[:-1])
    if n == 0 or rows == 0:
        return out
    p = 1 << (n - 1).bit_length()
    argsort_kernel, sort_kernel, plan = _kernels(xp, x.dtype.char, p)
    blocks = -(-rows // plan.rows_per_block)
    args = (np.uint64(x.data.ptr), np.uint64(out.data.ptr), np.int64(rows), np.int64(n))
    kernel = argsort_kernel if indices else sort_kernel
    kernel((blocks,), (plan.threads,), args, shared_mem=plan.shared)
    return out


def argsort_impl(x, *, axis, xp):
    """The `argsort` primitive on CuPy: rows here, anything else by the library's."""
    if applies(x, axis):
        return row_sort(x, xp, indices=True)
    return ARRAY_IMPLS.get("argsort")(x, axis=axis, xp=xp)


def sort_impl(x, *, axis, xp):
    """The `sort` primitive on CuPy: rows here, anything else by the library's."""
    if applies(x, axis):
        return row_sort(x, xp, indices=False)
    return ARRAY_IMPLS.get("sort")(x, axis=axis, xp=xp)


__all__ = ["MAX_ROW", "applies", "argsort_impl", "row_sort", "sort_impl", "source"]
