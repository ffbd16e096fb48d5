"""The CPU program's LAPACK steps against NumPy's path for them, in one process, alternating.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/lapack_steps.py
        [--ops eigh,svd,svd_full,qr,qr_complete] [--sizes 1024,2048] [--reps 5] [--dtype float32]
        [--lapack-threads K]

Times one host step as the compiled program runs it (backend_cpu/__init__.py, `_Fallbacks`):
scipy-openblas32's LAPACK on the buffers (`lapack.into`, backend_cpu/lapack.py and
lapack_decomp.py), and NumPy's path (`np.linalg` through the primitive's implementation on
one thread of NumPy's OpenBLAS, `numpy_blas.one_thread`, then copied into the outputs), the
two alternating call by call so that load changes hit both alike; medians of `--reps`, with
the running-task count of /proc/loadavg (this process included) read before each call, and
the OpenBLAS thread counts the LAPACK path ran on (backend_cpu/lapack_threads.py's policy, or
`--lapack-threads`).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from tracejit.backend_cpu import lapack, lapack_threads, numpy_blas
from tracejit.ir.interpret import apply_primitive
from tracejit.ir.primitives import get as get_primitive

OPS = {  # name: (primitive, attrs, symmetric operand)
    "eigh": ("eigh", {}, True),
    "svd": ("svd", {"full_matrices": False}, False),
    "svd_full": ("svd", {"full_matrices": True}, False),
    "qr": ("qr", {"complete": False}, False),
    "qr_complete": ("qr", {"complete": True}, False),
    "cholesky": ("cholesky", {"upper": False}, True),
    "cholesky_upper": ("cholesky", {"upper": True}, True),
}


def _running() -> int:
    with open("/proc/loadavg", encoding="ascii") as f:
        return int(f.read().split()[3].split("/")[0])


def _numpy_path(prim, args, outs, attrs):
    with numpy_blas.one_thread():
        results = apply_primitive(get_primitive(prim), args, attrs)
    for dst, src in zip(outs, results):
        np.copyto(dst, src)


def _paths(prim, attrs, args, outs) -> dict:
    lapack_fn = lapack.into(prim, args)
    return {"LAPACK": lambda: lapack_fn(*args, outs, **attrs),
            "NumPy": lambda: _numpy_path(prim, args, outs, attrs)}  # fmt: skip


def _counted_threads(chosen: list, forced: int | None):
    """`lapack_threads.count` (or `forced`), recording each decision in `chosen`."""
    count = lapack_threads.count if forced is None else (lambda n: forced)

    def counted(n):
        chosen.append(count(n))
        return chosen[-1]

    return counted


def measure(ops, sizes, reps, dtype, forced=None) -> None:
    chosen = []
    lapack_threads.count = _counted_threads(chosen, forced)
    for n in sizes:
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n)).astype(dtype)
        spd = (a @ a.T) / n + np.eye(n, dtype=dtype)
        for name in ops:
            prim, attrs, symmetric = OPS[name]
            args = [spd if symmetric else a]
            outs = [np.empty(r.shape, r.dtype) for r in apply_primitive(
                get_primitive(prim), args, attrs)]  # fmt: skip
            paths, chosen[:] = _paths(prim, attrs, args, outs), []
            times, running = {k: [] for k in paths}, []
            for _ in range(reps):
                for k, run in paths.items():
                    time.sleep(0.2)
                    running.append(_running())
                    t0 = time.perf_counter()
                    run()
                    times[k].append(time.perf_counter() - t0)
            cells = ", ".join(f"{k} {statistics.median(t) * 1e3:.1f} ms" for k, t in times.items())
            print(f"{name} {n} {np.dtype(dtype)}: {cells}; running tasks "
                  f"{min(running)}-{max(running)}; LAPACK threads {sorted(set(chosen))}",
                  flush=True)  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", default="eigh,svd,svd_full,qr,qr_complete")
    p.add_argument("--sizes", default="1024,2048")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--lapack-threads", type=int, help="force the count (default: the policy)")
    o = p.parse_args()
    sizes = [int(s) for s in o.sizes.split(",")]
    measure(o.ops.split(","), sizes, o.reps, np.dtype(o.dtype), o.lapack_threads)


if __name__ == "__main__":
    main()
