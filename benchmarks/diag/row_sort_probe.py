"""Probe: tracejit's row sort kernel (backend_cuda/row_sort.py) on the card.

Checks the compiled tnp.sort / tnp.argsort along rows against NumPy's stable sort, bit for bit,
for a few dtypes and lengths (NVRTC's compile, not the emulator's), then times (ms, median)
the kernel alone, the compiled sort and argsort, and CuPy's sort of n x n float32 rows.
`benchmarks/gpu_bench.py --only sweep` has the peers (JAX, torch) at the same sizes.
"""

import statistics
import time

import cupy as cp
import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cuda import row_sort


def timed(fn, reps=20):
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(ts)


rng = np.random.default_rng(0)
sort = tj.jit(lambda v: tnp.sort(v, axis=-1), device="cuda")
argsort = tj.jit(lambda v: tnp.argsort(v, axis=-1), device="cuda")
for dt in (np.float32, np.float64, np.int8, np.uint64, np.float16):
    for shape in ((3, 1), (7, 33), (5, 1000), (2, row_sort.MAX_ROW)):
        x = (rng.integers(-3, 3, size=shape) * rng.normal(size=shape)).astype(dt)
        if dt in (np.float32, np.float64):
            x.ravel()[::7] = -np.nan
            x.ravel()[::5] = -0.0
        got_sort = tj.device_get(sort(x))
        got_order = tj.device_get(argsort(x))
        ok = np.array_equal(got_order, np.argsort(x, axis=-1, kind="stable")) and (
            got_sort.tobytes() == np.sort(x, axis=-1, kind="stable").tobytes()
        )
        print(f"{np.dtype(dt).name:8} {shape!s:12} {'ok' if ok else 'MISMATCH'}")

for n in (1024, 2048, 4096):
    x = cp.asarray(rng.normal(size=(n, n)).astype(np.float32))
    calls = {
        "kernel": lambda x: row_sort.row_sort(x, cp, indices=False),
        "tnp.sort": sort,
        "tnp.argsort": argsort,
        "cupy.sort": lambda x: cp.sort(x, axis=-1),
    }
    times = {name: timed(lambda c=call, a=x: c(a)) for name, call in calls.items()}
    print(f"n={n}: " + ", ".join(f"{k} {v:.3f}" for k, v in times.items()))
