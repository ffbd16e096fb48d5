"""Probes for a GPU session (issue 12's open GPU questions), printed, not asserted:

1. linear algebra of a matrix holding inf or NaN on cuda against cpu: is each result NaN
   for that matrix on both (JAX's convention), or does cuSOLVER return finite values?
2. cholesky 4096x4096 float32: CuPy's call (which tracejit makes) against cuSOLVER's legacy
   `?potrf` and 64-bit `Xpotrf` called directly through CuPy's bindings, and torch.
3. the host cost of a tracejit call with a library step (rfft), small and large, against
   CuPy's own call, with the profile of the tracejit call.
4. fft over a leading axis: CuPy's call, its strided-plan `fftn`, transposes, and torch.

    python benchmarks/gpu_probe.py
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time

import gpu_bench  # (benchmarks/ is the script's folder)
import numpy as np

import tracejit as tj
import tracejit.numpy as tnp


def timeit(fn, sync):
    """Median milliseconds of 15 synchronized calls (gpu_bench's timer)."""
    return 1e3 * gpu_bench.timeit(fn, sync, 15, warmup=1)


def nonfinite(cp):
    print("\n== 1. linalg of a stack [good, inf, NaN] on cuda and cpu: NaN for the bad ones?")
    good = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    inf, nan = good.copy(), good.copy()
    inf[0, 1] = inf[1, 0] = np.inf
    nan[2, 2] = np.nan
    a = np.stack([good, inf, nan])
    b = np.ones((3, 3, 2))
    la = tnp.linalg
    fns = {
        "eigh": lambda m: la.eigh(m),
        "eigvalsh": lambda m: la.eigvalsh(m),
        "solve": lambda m: la.solve(m, b),
        "inv": lambda m: la.inv(m),
        "cholesky": lambda m: la.cholesky(m),
        "det": lambda m: la.det(m),
        "slogdet": lambda m: la.slogdet(m),
        "qr": lambda m: la.qr(m),
        "svd": lambda m: la.svd(m),
        "svdvals": lambda m: la.svd(m, compute_uv=False),
        "pinv": lambda m: la.pinv(m),
        "norm2": lambda m: la.norm(m, 2, axis=(-2, -1)),
    }
    for name, fn in fns.items():
        row = []
        for dev in ("cuda", "cpu"):
            try:
                out = tj.jit(fn, device=dev)(a)
                outs = [np.asarray(tj.device_get(o)) for o in tj.tree_flatten(out)[0]]
                nan_of = ["".join("N" if np.isnan(o[i]).all() else
                                  ("n" if np.isnan(o[i]).any() else "f") for i in range(3))
                          for o in outs]  # fmt: skip
                row.append(f"{dev}: {' '.join(nan_of)}")
            except Exception as e:  # noqa: BLE001 (a probe reports every failure)
                row.append(f"{dev}: {type(e).__name__}: {str(e)[:80]}")
        print(
            f"{name:9s} " + " | ".join(row) + "   (per output: good/inf/nan matrix:"
            " N all NaN, n some NaN, f finite)"
        )


def cholesky(cp):
    print("\n== 2. cholesky 4096x4096 float32 (ms, median of 15)")
    n = 4096
    g = cp.random.standard_normal((n, n), dtype=cp.float32)
    spd = g @ g.T / n + cp.eye(n, dtype=cp.float32)
    sync = cp.cuda.Device().synchronize
    want = cp.linalg.cholesky(spd)
    print(f"cupy.linalg.cholesky        {timeit(lambda: cp.linalg.cholesky(spd), sync):.3f}")
    f = tj.jit(lambda m: tnp.linalg.cholesky(m), device="cuda")
    print(f"tracejit                    {timeit(lambda: f(spd), sync):.3f}")
    from cupy_backends.cuda.libs import cusolver

    handle = cp.cuda.device.get_cusolver_handle()
    info = cp.empty(1, cp.int32)
    a = cp.empty_like(spd)
    # spd is symmetric, so its row-major buffer read column-major is spd itself. Fill mode
    # UPPER (1) leaves L in the row-major lower triangle (CuPy's way); LOWER (0) leaves L^T
    # there, so L costs a transposed copy more.
    for uplo, name in ((1, "UPPER, as CuPy"), (0, "LOWER, + transpose")):
        try:
            lwork = cusolver.spotrf_bufferSize(handle, uplo, n, a.data.ptr, n)
            work = cp.empty(lwork, cp.float32)

            def legacy(uplo=uplo, lwork=lwork, work=work):
                cp.copyto(a, spd)
                cusolver.spotrf(handle, uplo, n, a.data.ptr, n, work.data.ptr, lwork,
                                info.data.ptr)  # fmt: skip
                return a if uplo == 1 else cp.ascontiguousarray(a.T)

            ms = timeit(legacy, sync)
            ok = bool(cp.allclose(cp.tril(legacy()), want, rtol=1e-3, atol=1e-3))
            print(f"spotrf {name:20s} {ms:.3f}  ok={ok}")
        except Exception as e:  # noqa: BLE001
            print(f"spotrf {name} failed:", type(e).__name__, e)
    _xpotrf(cp, spd, want, handle, sync)
    print(f"copy alone                  {timeit(lambda: cp.copyto(a, spd), sync):.3f}")
    _torch_row("torch.linalg.cholesky", lambda torch, t: torch.linalg.cholesky(t), spd, 27)


def _torch_row(label: str, fn, array, width: int) -> None:
    """One timing row of torch's `fn(torch, tensor)` on `array` (a CuPy array), if torch runs."""
    try:
        import torch

        t = torch.as_tensor(array, device="cuda")
        ms = timeit(lambda: fn(torch, t), torch.cuda.synchronize)
        print(f"{label:{width}s} {ms:.3f}")
    except Exception as e:  # noqa: BLE001
        print(f"{label} failed:", type(e).__name__, e)


def _libcusolver():
    """libcusolver, as CuPy loaded it (its wheel's folder, else the loader's path)."""
    import ctypes
    import glob
    import os

    import cupy_backends.cuda.libs.cusolver as binding

    site = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(binding.__file__))))
    for path in sorted(glob.glob(os.path.join(site, "nvidia", "**", "libcusolver.so*"),
                                 recursive=True)) + ["libcusolver.so.12", "libcusolver.so.11",
                                                     "libcusolver.so"]:  # fmt: skip
        try:
            return ctypes.CDLL(path), path
        except OSError:
            continue
    raise OSError("libcusolver not found")


def _xpotrf(cp, spd, want, handle, sync):
    """cusolverDnXpotrf (the 64-bit API, which CuPy 14 does not bind) through ctypes."""
    import ctypes

    try:
        lib, path = _libcusolver()
        print("libcusolver:", path)
        c_p, c_i64, c_sz = ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t
        params = c_p()
        assert lib.cusolverDnCreateParams(ctypes.byref(params)) == 0
        n = spd.shape[0]
        a = cp.empty_like(spd)
        info = cp.empty(1, cp.int32)
        r32f = 0  # CUDA_R_32F
        for uplo, name in ((1, "UPPER"), (0, "LOWER, + transpose")):
            dev, host = c_sz(), c_sz()
            status = lib.cusolverDnXpotrf_bufferSize(
                c_p(handle), params, ctypes.c_int(uplo), c_i64(n), ctypes.c_int(r32f),
                c_p(a.data.ptr), c_i64(n), ctypes.c_int(r32f), ctypes.byref(dev),
                ctypes.byref(host),
            )  # fmt: skip
            assert status == 0, f"bufferSize status {status}"
            dwork = cp.empty(max(dev.value, 1), cp.uint8)
            hwork = np.empty(max(host.value, 1), np.uint8)

            def run(uplo=uplo, dev=dev, host=host, dwork=dwork, hwork=hwork):
                cp.copyto(a, spd)
                status = lib.cusolverDnXpotrf(
                    c_p(handle), params, ctypes.c_int(uplo), c_i64(n), ctypes.c_int(r32f),
                    c_p(a.data.ptr), c_i64(n), ctypes.c_int(r32f), c_p(dwork.data.ptr),
                    c_sz(dev.value), c_p(hwork.ctypes.data), c_sz(host.value),
                    c_p(info.data.ptr),
                )  # fmt: skip
                assert status == 0, f"Xpotrf status {status}"
                return a if uplo == 1 else cp.ascontiguousarray(a.T)

            ms = timeit(run, sync)
            ok = bool(cp.allclose(cp.tril(run()), want, rtol=1e-3, atol=1e-3))
            print(f"Xpotrf {name:20s} {ms:.3f}  ok={ok}  info={int(info.get()[0])}")
    except Exception as e:  # noqa: BLE001
        print("Xpotrf through ctypes failed:", type(e).__name__, e)


def overhead(cp):
    print("\n== 3. a library step's host cost: rfft (ms, median of 15)")
    sync = cp.cuda.Device().synchronize
    f = tj.jit(lambda v: tnp.fft.rfft(v), device="cuda")
    g = tj.jit(lambda v: tnp.sin(v) * 2.0, device="cuda")

    def line(x):
        n = x.size.bit_length() - 1
        tj_ms, cp_ms = timeit(lambda: f(x), sync), timeit(lambda: cp.fft.rfft(x), sync)
        print(f"n=2^{n}: tracejit {tj_ms:.3f}  cupy {cp_ms:.3f}  tracejit elementwise "
              f"{timeit(lambda: g(x), sync):.3f}")  # fmt: skip

    for n in (1 << 10, 1 << 24):
        line(cp.random.standard_normal(n, dtype=cp.float32))
    z = cp.random.standard_normal((4096, 4096), dtype=cp.float32).astype(cp.complex64)
    h = tj.jit(lambda v: tnp.fft.fft(v, axis=0), device="cuda")
    print(
        f"fft axis 0 4096^2 c64: tracejit {timeit(lambda: h(z), sync):.3f}  cupy "
        f"{timeit(lambda: cp.fft.fft(z, axis=0), sync):.3f}"
    )
    x = cp.random.standard_normal(1 << 10, dtype=cp.float32)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(300):
        f(x)
    sync()
    prof.disable()
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
    print("profile of 300 tracejit rfft calls (2^10), by own time:")
    print("\n".join(s.getvalue().splitlines()[:40]))


def fft_axis0(cp):
    print("\n== 4. fft over axis 0 of 4096x4096 complex64: layouts (ms, median of 15)")
    sync = cp.cuda.Device().synchronize
    z = cp.random.standard_normal((4096, 4096), dtype=cp.float32).astype(cp.complex64)
    out = cp.empty_like(z)

    def copied():
        out[...] = cp.fft.fft(z, axis=0)  # what the library step did: CuPy's view, copied
        return out

    ways = {
        "cupy fft(axis=0), a view": lambda: cp.fft.fft(z, axis=0),
        "  ... copied into place": copied,
        "cupy fftn(axes=(0,)), strided plan": lambda: cp.fft.fftn(z, axes=(0,)),
        "transpose, fft last, transpose": lambda: cp.ascontiguousarray(
            cp.fft.fft(cp.ascontiguousarray(z.T), axis=-1).T
        ),
    }
    want = cp.fft.fft(z, axis=0)
    for name, fn in ways.items():
        ok = bool(cp.allclose(fn(), want, rtol=1e-3, atol=1e-2))
        print(f"{name:38s} {timeit(fn, sync):.3f}  ok={ok}")
    h = tj.jit(lambda v: tnp.fft.fft(v, axis=0), device="cuda")
    print(f"{'tracejit':38s} {timeit(lambda: h(z), sync):.3f}")
    _torch_row("torch.fft.fft(dim=0)", lambda torch, t: torch.fft.fft(t, dim=0), z, 38)


def main():
    import cupy as cp

    for part in (nonfinite, cholesky, overhead, fft_axis0):
        t0 = time.perf_counter()
        try:
            part(cp)
        except Exception as e:  # noqa: BLE001
            print(f"{part.__name__} FAILED: {type(e).__name__}: {e}")
        print(f"({part.__name__}: {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
