"""Diagnose test_complex_gradients_follow_jax_convention[cuda] on a real GPU (var grad[1]).

Runs the ten-loss program with NVRTC options varied and prints grad['var'], and b56 / b59
(the var gradient's inputs) step by step."""
import os, sys, tempfile
sys.path[:0] = ["tests", "tests/backend"]
import numpy as np
import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend_cuda import launcher, nvrtc
from test_complex import LOSSES, _pair, _wirtinger_fd

z = _pair(np.complex128, (5,), seed=9)
want = _wirtinger_fd(lambda v: LOSSES["var"](np, v), z)
print("want var grad", want)

def grads(z):
    return {name: tj.grad(lambda z, fn=fn: fn(tnp, z))(z) for name, fn in LOSSES.items()}

base = nvrtc.OPTIONS
for extra in ([], ["-G"], ["--ptxas-options=-O0"], ["--ptxas-options=-O1"], ["-fmad=true"]):
    try:
        nvrtc.OPTIONS = tuple(o for o in base if not (extra == ["-fmad=true"] and o == "-fmad=false")) + tuple(extra)
        launcher._modules.clear()
        tj.config.cache_dir = tempfile.mkdtemp()
        f = tj.jit(grads, device="cuda")
        got = f(z)
        g = np.asarray(tj.device_get(got["var"]))
        print(extra, "var grad[1]", g[1], "ok" if np.allclose(g, want, 1e-6, 1e-7) else "WRONG",
              "others wrong:", [n for n, fn in LOSSES.items() if not np.allclose(
                  np.asarray(tj.device_get(got[n])), _wirtinger_fd(lambda v, fn=fn: fn(np, v), z), 1e-6, 1e-7)])
    except Exception as e:
        print(extra, "FAILED", type(e).__name__, str(e)[:300])
nvrtc.OPTIONS = base
launcher._modules.clear()
tj.config.cache_dir = tempfile.mkdtemp()
exe = tj.jit(grads, device="cuda").lower(z).compile().executable
import cupy
call = exe.start([z])
names = [getattr(s, "name", type(s).__name__) for s in exe.schedule.steps]
for name, step in zip(names, exe.steps):
    step(call)
    cupy.cuda.Device().synchronize()
    if name in ("k13_reduce", "k14_row"):
        for b in (0, 56, 59):
            print(name, "b%d" % b, call.array(b).get())
