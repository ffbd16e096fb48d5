"""Probe: CuPy's eig/eigvals (cuSOLVER Xgeev) against NumPy's LAPACK geev on the card.

Prints whether cupy.linalg.eig exists, which dtypes and stacks it takes, its eigenvalue
order and eigenvector normalization against NumPy's, and times (ms) at a few sizes.
"""

import statistics
import time

import cupy as cp
import numpy as np


def timed(fn, reps=5):
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(ts)


print(
    "cupy",
    cp.__version__,
    "has eig:",
    hasattr(cp.linalg, "eig"),
    "eigvals:",
    hasattr(cp.linalg, "eigvals"),
)
rng = np.random.default_rng(0)
for dt in (np.float32, np.float64, np.complex64, np.complex128):
    a = rng.standard_normal((6, 6)).astype(dt)
    if np.iscomplexobj(a):
        a = a + 1j * rng.standard_normal((6, 6)).astype(dt)
    try:
        w, v = cp.linalg.eig(cp.asarray(a))
        wn, vn = np.linalg.eig(a)
        w, v = cp.asnumpy(w), cp.asnumpy(v)
        same_order = np.allclose(w, wn, rtol=1e-4, atol=1e-4)
        # normalization: unit columns; largest-magnitude component real (LAPACK's)
        k = np.abs(v).argmax(0)
        big = v[k, np.arange(6)]
        print(
            dt.__name__,
            "->",
            w.dtype,
            v.dtype,
            "order as numpy:",
            same_order,
            "| w:",
            np.round(w, 3),
            "| np:",
            np.round(wn, 3),
            "| col norms",
            np.round(np.linalg.norm(v, axis=0), 5),
            "| max |imag| of largest comp",
            float(np.abs(big.imag).max()),
            "| resid",
            float(np.abs(a @ v - v * w).max()),
            "| v == np v:",
            np.allclose(v, vn, atol=1e-4),
        )
    except Exception as e:  # noqa: BLE001
        print(dt.__name__, "FAILED", type(e).__name__, e)
try:
    s = cp.asarray(rng.standard_normal((3, 5, 5)).astype(np.float32))
    w, v = cp.linalg.eig(s)
    print("stack", w.shape, v.shape)
except Exception as e:  # noqa: BLE001
    print("stack FAILED", type(e).__name__, e)
try:
    bad = cp.asarray(np.array([[1.0, np.nan], [0.0, 1.0]], np.float32))
    print("nan input ->", cp.linalg.eigvals(bad))
except Exception as e:  # noqa: BLE001
    print("nan input FAILED", type(e).__name__, e)
for n in (256, 1024):
    a = rng.standard_normal((n, n)).astype(np.float32)
    g = cp.asarray(a)
    t_cp = timed(lambda g=g: cp.linalg.eig(g), 3)
    t_cpv = (
        timed(lambda g=g: cp.linalg.eigvals(g), 3)
        if hasattr(cp.linalg, "eigvals")
        else float("nan")
    )
    t_np = timed(lambda a=a: np.linalg.eig(a), 3)
    t_h = timed(lambda g=g: np.linalg.eig(cp.asnumpy(g)), 3)
    print(
        f"eig {n}x{n} f32 ms: cupy eig {t_cp:.1f}, cupy eigvals {t_cpv:.1f}, "
        f"numpy {t_np:.1f}, host round trip {t_h:.1f}"
    )
try:
    import jax
    import jax.numpy as jnp

    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    x = jax.device_put(a)
    f = jax.jit(jnp.linalg.eigvals)
    f(x).block_until_ready()
    t0 = time.perf_counter()
    f(x).block_until_ready()
    print("jax eigvals 1024 ms", 1e3 * (time.perf_counter() - t0), jax.devices())
except Exception as e:  # noqa: BLE001
    print("jax eigvals:", type(e).__name__, str(e)[:200])
