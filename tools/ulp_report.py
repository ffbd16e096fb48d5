"""Worst-case float32 ulp error of tracejit and NumPy: exp, log, tanh, sigmoid, softmax, logsumexp.

Elementwise functions are checked on every float32 of their domain (the range where the
result is a normal float32 and not yet saturated), in chunks of 2^24, against float64 NumPy
(within 2^-29 float32 ulp: a reference, not a competitor). The error of y against the exact
value e is |y - e| / ulp(e), with ulp(e) = 2^(exponent(e) - 23) (2^-149 below the normal
range). NumPy's float32 sigmoid is the usual formula 1 / (1 + exp(-x)); tracejit's is
`tj.nn.sigmoid`. softmax and logsumexp take rows, so they are checked on random rows
(`--rows` rows of 64 values: standard normal, times 30, plus offsets up to +-80, with some
-inf), against float64 NumPy; NumPy's float32 versions are the stable formulas. A logsumexp
that cancels to below its row's largest |x| is measured in ulps of that |x|.

Run: `python tools/ulp_report.py` (every float32: minutes on 2 cores), or `--stride 101` for
a quick check of every 101st float32. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tracejit as tj

F32 = np.float32
CHUNK = 1 << 24


def ulp_error(y, exact, scale=None) -> np.ndarray:
    """|y - exact| in float32 ulps of `exact` (or of `scale`) (float64); inf where y is inf/nan
    but exact not."""
    exact = np.asarray(exact, np.float64)
    _, e = np.frexp(exact if scale is None else np.asarray(scale, np.float64))
    ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(np.asarray(y, np.float64) - exact) / ulp
    same = (np.asarray(y, np.float64) == exact) | (np.isnan(y) & np.isnan(exact))
    return np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))


def float32_range(lo: float, hi: float, stride: int):
    """Chunks of every `stride`-th float32 in [lo, hi] (either sign), as arrays."""
    parts = []
    if lo < 0:  # magnitudes up to -lo, negated
        a, b = np.array([0.0, -lo], F32).view(np.int32)
        parts.append((a, b, -1))
    if hi > 0:
        a, b = np.array([max(lo, 0.0), hi], F32).view(np.int32)
        parts.append((a, b, 1))
    for a, b, sign in parts:
        for start in range(int(a), int(b) + 1, CHUNK * stride):
            stop = min(start + CHUNK * stride, int(b) + 1)
            x = np.arange(start, stop, stride, dtype=np.int32).view(F32)
            yield x if sign > 0 else -x


def _padded(f, x):
    """f over `x` padded to CHUNK elements (one compiled shape), cut back."""
    n = len(x)
    if n == CHUNK:
        return np.asarray(f(x))
    return np.asarray(f(np.concatenate([x, np.full(CHUNK - n, x[-1], F32)])))[:n]


def _sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


ELEMENTWISE = {
    # name: (domain, tracejit, NumPy float32, float64 reference)
    "exp": ((-87.3, 88.7), np.exp, np.exp, np.exp),
    "log": ((1e-45, 3.4e38), np.log, np.log, np.log),
    "tanh": ((-9.1, 9.1), np.tanh, np.tanh, np.tanh),
    "sigmoid": ((-87.3, 17.0), tj.nn.sigmoid, lambda x: F32(1) / (F32(1) + np.exp(-x)), _sigmoid64),
}


def check_elementwise(name: str, stride: int) -> dict:
    (lo, hi), tj_fn, np_fn, ref = ELEMENTWISE[name]
    compiled = tj.jit(tj_fn)
    worst = {"tracejit": (0.0, 0.0), "NumPy": (0.0, 0.0)}
    count = 0
    for x in float32_range(lo, hi, stride):
        exact = ref(x.astype(np.float64))
        count += len(x)
        with np.errstate(all="ignore"):
            ys = {"tracejit": _padded(compiled, x), "NumPy": np_fn(x)}
        for who, y in ys.items():
            err = ulp_error(y, exact)
            i = int(np.argmax(err))
            if err[i] > worst[who][0]:
                worst[who] = (float(err[i]), float(x[i]))
    return {"name": name, "domain": f"[{lo:g}, {hi:g}]", "count": count, **worst}


def _rows(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 64)) * np.where(rng.random((n, 1)) < 0.5, 1.0, 30.0)
    x += rng.uniform(-80, 80, (n, 1))
    x[rng.random((n, 64)) < 0.01] = -np.inf
    x[:, 0] = np.where(np.isinf(x[:, 0]), 0.0, x[:, 0])  # at least one finite value a row
    return x.astype(F32)


def _np_softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _np_logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return (m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True)))[:, 0]


def check_rows(name: str, nrows: int) -> dict:
    tj_fn = {
        "softmax": lambda x: tj.nn.softmax(x, axis=-1),
        "logsumexp": lambda x: tj.nn.logsumexp(x, axis=-1),
    }[name]
    np_fn = {"softmax": _np_softmax, "logsumexp": _np_logsumexp}[name]
    x = _rows(nrows)
    exact = np_fn(x.astype(np.float64))
    # logsumexp = m + log(sum(exp(x - m))) can cancel to ~0 (a row whose max is -log of its
    # sum): its error is measured in ulps of the row's largest |x| there, not of a tiny result
    scale = exact
    if name == "logsumexp":
        big = np.max(np.where(np.isfinite(x), np.abs(x), 0), axis=-1).astype(np.float64)
        scale = np.where(np.abs(exact) < big, big, exact)
    worst = {}
    with np.errstate(all="ignore"):
        for who, y in (("tracejit", np.asarray(tj.jit(tj_fn)(x))), ("NumPy", np_fn(x))):
            err = ulp_error(y, exact, scale)
            flat = int(np.argmax(err))
            worst[who] = (float(err.flat[flat]), float("nan"))
    domain = f"{nrows} random rows of 64"
    return {"name": name, "domain": domain, "count": exact.size, **worst}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stride", type=int, default=1, help="check every n-th float32")
    ap.add_argument("--rows", type=int, default=1 << 16)
    ap.add_argument("--only", default="", help="comma-separated functions (default: all)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    t0 = time.perf_counter()
    results = [check_elementwise(n, args.stride) for n in ELEMENTWISE if not only or n in only]
    rows = [n for n in ("softmax", "logsumexp") if not only or n in only]
    results += [check_rows(n, args.rows) for n in rows]
    every = "every float32" if args.stride == 1 else f"every {args.stride}th float32"
    print(
        f"| function | inputs ({every}) | count | tracejit max ulp (at x) | NumPy max ulp (at x) |"
    )
    print("|---|---|---|---|---|")
    for r in results:
        cells = []
        for who in ("tracejit", "NumPy"):
            err, at = r[who]
            cells.append(f"{err:.3f}" + ("" if np.isnan(at) else f" ({at:.7g})"))
        print(f"| {r['name']} | {r['domain']} | {r['count']:,} | {cells[0]} | {cells[1]} |")
    print(f"\n({time.perf_counter() - t0:.0f} s, NumPy {np.__version__})")


if __name__ == "__main__":
    main()
