"""A ptxas miscompile, reproduced: k14_row of the ten-loss complex gradient program of
tests/backend/test_complex.py alone, on its inputs, compiled in variants.

On an H100 (CUDA 13.2's NVRTC and driver 580.159.04) "as generated", ptxas -O2, the driver's
JIT of the PTX and -fmad=true gave a wrong b59[1]; -O1, -G, `#pragma unroll 1` and no
`__launch_bounds__` gave the emulator's values (saved beside it as .npy). Run on a GPU machine
from the repository root: `python benchmarks/diag/k14_variants.py`."""

import sys
import tempfile

sys.path[:0] = ["tests", "tests/backend"]
import cupy
import numpy as np
from test_complex import _pair

from tracejit.backend_cuda import nvrtc

D = "benchmarks/diag/"
z = _pair(np.complex128, (5,), seed=9)
b56, b79 = np.load(D + "k14_b56.npy"), np.load(D + "k14_b79.npy")
w59, w89 = np.load(D + "k14_b59.npy"), np.load(D + "k14_b89.npy")
with open(D + "k14.cu") as f:
    src0 = f.read()
base = nvrtc.OPTIONS
cc = int(cupy.cuda.Device().compute_capability)


def run(name, src, extra=(), drop=(), ptx=False):
    try:
        nvrtc.OPTIONS = tuple(o for o in base if o not in drop) + tuple(extra)
        arch, suffix = (f"-arch=compute_{cc}", ".ptx") if ptx else (f"-arch=sm_{cc}", ".cubin")
        binary = nvrtc.compile_source(src, arch, suffix)
        path = tempfile.mktemp(suffix=suffix)
        with open(path, "wb") as f:
            f.write(binary)
        fn = cupy.RawModule(path=path).get_function("k14_row")
        a0, a56, a79 = cupy.asarray(z), cupy.asarray(b56), cupy.asarray(b79)
        o59, o89 = cupy.full(5, np.nan, np.complex128), cupy.full(5, np.nan, np.complex128)
        fn((1,), (256,), tuple(np.uint64(a.data.ptr) for a in (a0, a56, o59, a79, o89)))
        g59, g89 = o59.get(), o89.get()
        ok = np.allclose(g59, w59, 1e-12, 1e-12) and np.allclose(g89, w89, 1e-12, 1e-12)
        print(f"{name:40s}", "ok" if ok else "WRONG", "" if ok else (g59 - w59, g89 - w89))
    except Exception as e:  # noqa: BLE001 - a variant that fails to build is reported
        print(f"{name:40s}", "FAILED", type(e).__name__, str(e)[:200])


run("as generated", src0)
run("pragma unroll 1", src0.replace("#pragma unroll\n", "#pragma unroll 1\n"))
run("no launch_bounds", src0.replace("__launch_bounds__(256) ", ""))
run("ptxas -O2", src0, ["--ptxas-options=-O2"])
run("ptxas -O1", src0, ["--ptxas-options=-O1"])
run("no expensive opts", src0, ["--ptxas-options=--allow-expensive-optimizations=false"])
run("PTX, driver JIT", src0, ptx=True)
run("-fmad=true", src0, ["-fmad=true"], drop=("-fmad=false",))
run("-dopt=on", src0, ["-dopt=on"])
run("-G", src0, ["-G"])
run("-lineinfo", src0, ["-lineinfo"])
run("--extra-device-vectorization", src0, ["--extra-device-vectorization"])
nvrtc.OPTIONS = base
