"""Compare a run's outputs with NumPy's shadows: bit for bit where the bound is 0, within
2 * err elsewhere, skipping undecided elements. Counts what was compared, for the report."""

from __future__ import annotations

import collections
import json
import os

import numpy as np
from _fuzz_bounds import Shadow

# TRACEJIT_FUZZ_STATS=path: each process appends its totals there as one JSON line at exit.
STATS: collections.Counter = collections.Counter()


def _same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    both_nan = np.isnan(got) & np.isnan(want)
    kind = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    return (got.view(kind) == want.view(kind)) | both_nan


def mismatch(got, want: Shadow, label: str) -> str | None:
    """None if `got` agrees with `want`, else a message naming the first bad elements."""
    w = want.value
    got = np.asarray(got)
    if got.shape != w.shape or got.dtype != w.dtype:
        return f"{label}: got {got.dtype}{list(got.shape)}, NumPy gives {w.dtype}{list(w.shape)}"
    decided = ~want.unk
    if w.dtype.kind == "c":
        exact = decided & (want.err == 0)
        parts = _same_bits(got.real, w.real) & _same_bits(got.imag, w.imag)
        with np.errstate(all="ignore"):
            close = np.abs(got.astype(np.complex128) - w.astype(np.complex128)) <= 2 * want.err
        bad = (exact & ~parts) | (decided & (want.err > 0) & ~close)
        STATS["exact elements"] += int(exact.sum())
        STATS["bounded elements"] += int((decided & (want.err > 0)).sum())
    elif w.dtype.kind != "f":
        bad = decided & (got != w)
        STATS["exact elements"] += int(decided.sum())
    else:
        exact = decided & (want.err == 0)
        g, v = got.astype(np.float64), w.astype(np.float64)
        with np.errstate(all="ignore"):
            close = np.abs(g - v) <= 2 * want.err
        bad = (exact & ~_same_bits(got, w)) | (decided & (want.err > 0) & ~close)
        STATS["exact elements"] += int(exact.sum())
        STATS["bounded elements"] += int((decided & (want.err > 0)).sum())
    STATS["undecided elements"] += int(want.unk.sum())
    if not bad.any():
        return None
    where = np.argwhere(bad)[:4]
    rows = [
        f"  at {tuple(int(i) for i in idx)}: got {got[tuple(idx)]!r}, want {w[tuple(idx)]!r}"
        f" (bound {2 * want.err[tuple(idx)]:.3g})"
        for idx in where
    ]
    return f"{label}: {int(bad.sum())} of {bad.size} elements differ\n" + "\n".join(rows)


def check_outputs(outs, wants: list[Shadow], label: str) -> list[str]:
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    if len(outs) != len(wants):
        return [f"{label}: {len(outs)} outputs, NumPy gives {len(wants)}"]
    found = [mismatch(o, w, f"{label} output {i}") for i, (o, w) in enumerate(zip(outs, wants))]
    return [m for m in found if m]


def _dump_stats() -> None:
    path = os.environ.get("TRACEJIT_FUZZ_STATS")
    if path and STATS:
        with open(path, "a") as f:
            f.write(json.dumps(dict(STATS)) + "\n")


if os.environ.get("TRACEJIT_FUZZ_STATS"):
    import atexit

    atexit.register(_dump_stats)
