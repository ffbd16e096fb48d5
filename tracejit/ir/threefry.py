"""Threefry-2x32 with 20 rounds, written once: the NumPy reference and the C function both
walk `steps()` (Salmon et al., SC'11, "Parallel random numbers: as easy as 1, 2, 3").

The C text (`C_BLOCK`) defines `tj_threefry_block(k0, k1, x0, x1)`, `tj_rotl32` and the
primitive at one counter pair, `tj_threefry_pair` (what each backend's loop runs), with
the `TJ_FN` qualifier of the backend that includes it (ir/cwriter/library.py), unrolled:
the same mixes and key injections, in the same order, as the NumPy loop.

>>> import numpy as np
>>> [hex(w) for w in block(0, 0, np.uint32(0), np.uint32(0))]  # Random123's known answer
['0x6b200159', '0x99ba4efe']
"""

from __future__ import annotations

import numpy as np

PARITY = 0x1BD11BDA  # the key-schedule constant (Skein specification)
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))  # Threefry-2x32 rotation constants
GROUPS = 5  # five groups of four rounds, a key injection after each group


def steps():
    """The cipher after the first key injection: ("mix", rotation) and ("inject", group)."""
    for g in range(GROUPS):
        for r in ROTATIONS[g % 2]:
            yield "mix", r
        yield "inject", g


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def block(k0, k1, x0, x1) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 on uint32 words (NumPy arrays, wrapping arithmetic)."""
    k0, k1 = np.uint32(k0), np.uint32(k1)
    ks = (k0, k1, k0 ^ k1 ^ np.uint32(PARITY))
    with np.errstate(over="ignore"):
        x0 = np.asarray(x0, np.uint32) + ks[0]
        x1 = np.asarray(x1, np.uint32) + ks[1]
        for op, arg in steps():
            if op == "mix":
                x0 = x0 + x1
                x1 = _rotl(x1, arg) ^ x0
            else:
                x0 = x0 + ks[(arg + 1) % 3]
                x1 = x1 + ks[(arg + 2) % 3] + np.uint32(arg + 1)
    return x0, x1


def _c_lines() -> list[str]:
    lines = [f"const uint32_t ks[3] = {{k0, k1, k0 ^ k1 ^ {PARITY:#x}u}};"]
    lines += ["x0 += ks[0];", "x1 += ks[1];"]
    for op, arg in steps():
        if op == "mix":
            lines += ["x0 += x1;", f"x1 = tj_rotl32(x1, {arg}) ^ x0;"]
        else:
            lines += [f"x0 += ks[{(arg + 1) % 3}];", f"x1 += ks[{(arg + 2) % 3}] + {arg + 1}u;"]
    return lines


C_BLOCK = "\n".join(
    [
        "TJ_FN uint32_t tj_rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }",
        "// Threefry-2x32, 20 rounds (ir/threefry.py)",
        "TJ_FN void tj_threefry_block(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {",
        *("  " + line for line in _c_lines()),
        "}",
        "// threefry2x32(key, counts) at pair i: counts split in two halves (odd n: a zero pads",
        "// the second), out = concat(y0, y1)[:n]: pair i writes out[i] and out[i + half].",
        "template <class K, class C>",
        "TJ_FN void tj_threefry_pair(const K* key, const C* counts, int64_t* out, int64_t i,",
        "                            int64_t n) {",
        "  const uint32_t k0 = (uint32_t)(int64_t)key[0], k1 = (uint32_t)(int64_t)key[1];",
        "  const int64_t half = (n + 1) / 2;",
        "  const bool second = i + half < n;",
        "  uint32_t x0 = (uint32_t)(int64_t)counts[i];",
        "  uint32_t x1 = second ? (uint32_t)(int64_t)counts[i + half] : 0u;",
        "  tj_threefry_block(k0, k1, x0, x1);",
        "  out[i] = (int64_t)x0;",
        "  if (second) out[i + half] = (int64_t)x1;",
        "}",
    ]
)

__all__ = ["C_BLOCK", "PARITY", "ROTATIONS", "block", "steps"]
