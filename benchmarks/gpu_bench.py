"""GPU benchmarks: tracejit (device="cuda") vs CuPy eager, JAX and torch.compile, one table.

W1  tanh(x*y + 0.5*x)*2 - y on 2**26 float32, with the copy-bandwidth floor measured here
W2  row softmax and layernorm on 16384x4096 float32
W3  MLP training step (value_and_grad + SGD in one jit), batch 4096, 4096-wide layers, f32
W4  library calls: solve and cholesky 4096x4096, rfft and sort of 2**24, f32 (cuSOLVER,
    cuFFT and CuPy's sort through tracejit's LibraryStep; CuPy's direct call is their floor)
W5  values-only linalg (eigvalsh, svdvals 2048x2048), fft over axis 0 of 4096x4096 c64,
    cumsum/cumprod over rows and columns of 4096x4096 f32 (the scan kernels)
S   (`--only sweep`, not in the default run) issue 12's sizes: sort, solve, cholesky, thin svd
    and fft2 at n = 1024, 2048, 4096 (svd to 2048), eigvals at 1024
G   CUDA graphs: a launch-bound chain of small kernels (softmax, column sums, cumsum,
    layernorm on 64x256) per call with tj.config.cuda_graphs "never" vs "always", and what
    "auto" chose (a matmul is never captured: CuPy refuses cuBLAS during stream capture)

Times are medians of several calls after warm-up, each bracketed by a device synchronize
(per framework: cupy Device.synchronize, jax block_until_ready, torch.cuda.synchronize).
fp32 matmuls run in full fp32 everywhere (JAX precision "highest", torch TF32 off, CuPy's
default), so W3 compares the same arithmetic. Every tracejit result is checked against CuPy's.

    python benchmarks/gpu_bench.py --json results.json [--quick] [--budget 240] [--only w1,w4]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp

REPS = 15


def timeit(fn, sync, reps: int = REPS, warmup: int = 2) -> float:
    """Median seconds of one synchronized call of `fn`."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def first_call(fn, sync) -> float:
    t0 = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - t0


# ---------------------------------------------------------------- the math, per framework


def _torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def rmax(x, axis=-1):
    return x.amax(dim=axis, keepdim=True) if _torch(x) else x.max(axis=axis, keepdims=True)


def rsum(x, axis=-1, keep=True):
    return x.sum(dim=axis, keepdim=keep) if _torch(x) else x.sum(axis=axis, keepdims=keep)


def rmean(x, axis=-1, keep=True):
    return x.mean(dim=axis, keepdim=keep) if _torch(x) else x.mean(axis=axis, keepdims=keep)


def relu(m, x):
    return m.relu(x) if _torch(x) else m.maximum(x, 0.0)


def w1(m, x, y):
    return m.tanh(x * y + 0.5 * x) * 2 - y


def softmax(m, x):
    e = m.exp(x - rmax(x))
    return e / rsum(e)


def layernorm(m, x, g, b):
    mu = rmean(x)
    var = rmean((x - mu) ** 2)
    return (x - mu) / m.sqrt(var + 1e-5) * g + b


def log_softmax(m, z):
    s = z - rmax(z)
    return s - m.log(rsum(m.exp(s)))


def mlp_loss(m, p, x, y):
    h1 = relu(m, x @ p["w1"] + p["b1"])
    h2 = relu(m, h1 @ p["w2"] + p["b2"])
    z = h2 @ p["w3"] + p["b3"]
    return -rmean(rsum(y * log_softmax(m, z)), axis=0, keep=False).sum()


def mlp_step_manual(m, p, x, y, lr=0.01):
    """The same step with the backward pass written out (CuPy eager, torch.compile)."""
    h1 = relu(m, x @ p["w1"] + p["b1"])
    h2 = relu(m, h1 @ p["w2"] + p["b2"])
    z = h2 @ p["w3"] + p["b3"]
    logp = log_softmax(m, z)
    loss = -rmean(rsum(y * logp), axis=0, keep=False).sum()
    n = x.shape[0]
    dz = (m.exp(logp) * rsum(y) - y) / n
    dh2 = (dz @ p["w3"].T) * (h2 > 0)
    dh1 = (dh2 @ p["w2"].T) * (h1 > 0)
    grads = {
        "w3": h2.T @ dz, "b3": rsum(dz, 0, False),
        "w2": h1.T @ dh2, "b2": rsum(dh2, 0, False),
        "w1": x.T @ dh1, "b1": rsum(dh1, 0, False),
    }  # fmt: skip
    return loss, {k: p[k] - lr * grads[k] for k in p}


def tj_mlp_step(p, x, y, lr=0.01):
    loss, g = tj.value_and_grad(lambda q: mlp_loss(tnp, q, x, y))(p)
    return loss, tj.tree_map(lambda a, b: a - lr * b, p, g)


# ---------------------------------------------------------------- peers


def load_jax():
    try:
        import jax
        import jax.numpy as jnp

        if not any(d.platform == "gpu" for d in jax.devices()):
            return None, "JAX has no GPU backend"
        jax.config.update("jax_default_matmul_precision", "highest")
        return (jax, jnp), ""
    except Exception as err:  # noqa: BLE001 - any import/backend failure skips the column
        return None, f"JAX unavailable ({err.__class__.__name__})"


def load_torch():
    try:
        import torch

        if not torch.cuda.is_available():
            return None, "torch has no CUDA"
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        return torch, ""
    except Exception as err:  # noqa: BLE001
        return None, f"torch unavailable ({err.__class__.__name__})"


# ---------------------------------------------------------------- workloads


class Bench:
    def __init__(self, quick: bool, budget: float):
        import cupy

        self.cp = cupy
        self.start = time.perf_counter()
        self.budget = budget
        self.quick = quick
        self.rows: list[dict] = []
        self.notes: list[str] = []
        self.jax, why = load_jax()
        if why:
            self.notes.append(why)
        self.torch, why = load_torch()
        if why:
            self.notes.append(why)

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def over_budget(self) -> bool:
        return time.perf_counter() - self.start > self.budget

    def check(self, name, got, want, rtol):
        got, want = tj.tree_flatten(got)[0], tj.tree_flatten(want)[0]
        ok = all(
            bool(self.cp.allclose(self.cp.asarray(g), self.cp.asarray(w), rtol=rtol, atol=rtol))
            for g, w in zip(got, want)
        )
        if not ok:
            self.notes.append(f"{name}: tracejit result DIFFERS from CuPy's")
        return ok

    def peers(self, row, jax_fn, jax_args, torch_fn, torch_args):
        if self.jax is not None and not self.over_budget():
            jax, _ = self.jax
            f = jax.jit(jax_fn)
            out = f(*jax_args)
            jax.block_until_ready(out)
            row["jax_ms"] = 1e3 * timeit(
                lambda: jax.block_until_ready(f(*jax_args)), lambda: None, self.reps()
            )
        if self.torch is not None and not self.over_budget():
            torch = self.torch
            f = torch.compile(torch_fn)
            t0 = time.perf_counter()
            f(*torch_args)
            torch.cuda.synchronize()
            row["torch_compile_s"] = time.perf_counter() - t0
            row["torch_ms"] = 1e3 * timeit(
                lambda: f(*torch_args), torch.cuda.synchronize, self.reps()
            )

    def reps(self) -> int:
        return 5 if self.quick else REPS

    def run_tj(self, row, f, args):
        row["tj_first_call_s"] = first_call(lambda: f(*args), self.sync)
        row["tj_ms"] = 1e3 * timeit(lambda: f(*args), self.sync, self.reps())
        return f(*args)

    def w1(self):
        cp = self.cp
        n = 1 << (22 if self.quick else 26)
        x = cp.random.standard_normal(n, dtype=cp.float32)
        y = cp.random.standard_normal(n, dtype=cp.float32)
        dst = cp.empty_like(x)
        copy = timeit(lambda: cp.copyto(dst, x), self.sync, self.reps())
        gbps = 2 * x.nbytes / copy / 1e9
        self.notes.append(f"copy bandwidth (cupy.copyto, read+write) {gbps:.0f} GB/s")
        row = {"workload": f"W1 tanh 2^{int(math.log2(n))} f32", "floor_ms": 1e3 * copy * 1.5}
        got = self.run_tj(row, tj.jit(lambda a, b: w1(tnp, a, b), device="cuda"), (x, y))
        row["cupy_ms"] = 1e3 * timeit(lambda: w1(cp, x, y), self.sync, self.reps())
        row["ok"] = self.check("W1", got, w1(cp, x, y), 1e-5)
        self._peers_elementwise(row, w1, (x, y))
        self.rows.append(row)

    def _peers_elementwise(self, row, fn, cupy_args):
        jargs = targs = ()
        if self.jax is not None:
            jargs = tuple(self.jax[1].asarray(a.get()) for a in cupy_args)
        if self.torch is not None:
            targs = tuple(self.torch.as_tensor(a, device="cuda") for a in cupy_args)
        jnp = self.jax[1] if self.jax is not None else None
        self.peers(
            row,
            lambda *a: fn(jnp, *a),
            jargs,
            lambda *a: fn(self.torch, *a),
            targs,
        )

    def w2(self):
        cp = self.cp
        rows, cols = (2048, 4096) if self.quick else (16384, 4096)
        x = cp.random.standard_normal((rows, cols), dtype=cp.float32)
        g = cp.random.standard_normal(cols, dtype=cp.float32)
        b = cp.random.standard_normal(cols, dtype=cp.float32)
        dst = cp.empty_like(x)
        copy = 1e3 * timeit(lambda: cp.copyto(dst, x), self.sync, self.reps())
        for name, fn, args in [("softmax", softmax, (x,)), ("layernorm", layernorm, (x, g, b))]:
            if self.over_budget():
                self.notes.append(f"W2 {name} skipped: over the time budget")
                continue
            row = {"workload": f"W2 {name} {rows}x{cols}", "floor_ms": copy}
            f = tj.jit(lambda *a, fn=fn: fn(tnp, *a), device="cuda")
            got = self.run_tj(row, f, args)
            row["cupy_ms"] = 1e3 * timeit(lambda fn=fn, args=args: fn(cp, *args), self.sync)
            row["ok"] = self.check(f"W2 {name}", got, fn(cp, *args), 1e-4)
            self._peers_elementwise(row, fn, args)
            self.rows.append(row)

    def w3(self):
        cp = self.cp
        batch, width, n_out = (512, 1024, 256) if self.quick else (4096, 4096, 1024)
        rng = cp.random.default_rng(0)

        def init(shape):
            return (rng.standard_normal(shape, dtype=cp.float32) / math.sqrt(shape[0])).astype(
                cp.float32
            )

        p = {
            "w1": init((width, width)), "b1": cp.zeros(width, cp.float32),
            "w2": init((width, width)), "b2": cp.zeros(width, cp.float32),
            "w3": init((width, n_out)), "b3": cp.zeros(n_out, cp.float32),
        }  # fmt: skip
        x = rng.standard_normal((batch, width), dtype=cp.float32)
        y = cp.eye(n_out, dtype=cp.float32)[rng.integers(0, n_out, batch)]
        row = {"workload": f"W3 MLP step b{batch} w{width}", "floor_ms": float("nan")}
        got = self.run_tj(row, tj.jit(tj_mlp_step, device="cuda"), (p, x, y))
        want = mlp_step_manual(cp, p, x, y)
        row["cupy_ms"] = 1e3 * timeit(lambda: mlp_step_manual(cp, p, x, y), self.sync)
        row["ok"] = self.check("W3", got, want, 2e-3)
        flops = 2 * batch * (2 * width * width + width * n_out) * 3
        row["tj_tflops"] = flops / (row["tj_ms"] * 1e-3) / 1e12
        jargs = targs = ()
        jax_fn = None
        if self.jax is not None:
            jax, jnp = self.jax
            jp = {k: jnp.asarray(v.get()) for k, v in p.items()}
            jargs = (jp, jnp.asarray(x.get()), jnp.asarray(y.get()))

            def jax_fn(q, a, t):
                loss, g = jax.value_and_grad(lambda r: mlp_loss(jnp, r, a, t))(q)
                return loss, jax.tree_util.tree_map(lambda u, v: u - 0.01 * v, q, g)

        if self.torch is not None:
            tp = {k: self.torch.as_tensor(v, device="cuda") for k, v in p.items()}
            targs = (
                tp,
                self.torch.as_tensor(x, device="cuda"),
                self.torch.as_tensor(y, device="cuda"),
            )
        self.peers(row, jax_fn, jargs, lambda q, a, t: mlp_step_manual(self.torch, q, a, t), targs)
        self.rows.append(row)

    def w4(self):
        """Library calls: tracejit's LibraryStep (CuPy on the device) against CuPy's own call
        (the floor for it: the same cuSOLVER/cuFFT/sort), JAX and torch."""
        cp = self.cp
        n = 1024 if self.quick else 4096
        rng = cp.random.default_rng(1)
        a = rng.standard_normal((n, n), dtype=cp.float32) + n * cp.eye(n, dtype=cp.float32)
        b = rng.standard_normal((n, 64), dtype=cp.float32)
        spd = a @ a.T
        x = rng.standard_normal(1 << (20 if self.quick else 24), dtype=cp.float32)

        def sort(m, v):
            out = m.sort(v)
            return out.values if hasattr(out, "values") else out  # torch.sort: (values, indices)

        cases = [
            (f"W4 solve {n}x{n} f32, 64 rhs", lambda m, p, q: m.linalg.solve(p, q), (a, b), 1e-3),
            (f"W4 cholesky {n}x{n} f32", lambda m, p: m.linalg.cholesky(p), (spd,), 1e-3),
            (f"W4 rfft 2^{int(math.log2(x.size))} f32", lambda m, v: m.fft.rfft(v), (x,), 1e-3),
            (f"W4 sort 2^{int(math.log2(x.size))} f32", sort, (x,), 0.0),
        ]
        self._library_cases(cases)

    def w5(self):
        """Values-only linalg (no vectors computed), fft over a leading axis, scan kernels."""
        cp = self.cp
        n, m = (512, 1024) if self.quick else (2048, 4096)
        rng = cp.random.default_rng(2)
        g = rng.standard_normal((n, n), dtype=cp.float32)
        sym = (g + g.T) / 2
        z = (
            rng.standard_normal((m, m), dtype=cp.float32)
            + 1j * rng.standard_normal((m, m), dtype=cp.float32)
        ).astype(cp.complex64)
        s = rng.standard_normal((m, m), dtype=cp.float32)
        p = 1 + 1e-3 * s

        def svdvals(mod, v):
            if hasattr(mod.linalg, "svdvals"):
                return mod.linalg.svdvals(v)
            return mod.linalg.svd(v, compute_uv=False)

        cases = [
            (f"W5 eigvalsh {n}x{n} f32", lambda mod, v: mod.linalg.eigvalsh(v), (sym,), 1e-3),
            (f"W5 svdvals {n}x{n} f32", svdvals, (g,), 1e-3),
            (f"W5 fft axis 0 {m}x{m} c64", lambda mod, v: mod.fft.fft(v, None, 0), (z,), 1e-3),
            (f"W5 cumsum axis 1 {m}x{m} f32", lambda mod, v: mod.cumsum(v, 1), (s,), 1e-3),
            (f"W5 cumsum axis 0 {m}x{m} f32", lambda mod, v: mod.cumsum(v, 0), (s,), 1e-3),
            (f"W5 cumprod axis 1 {m}x{m} f32", lambda mod, v: mod.cumprod(v, 1), (p,), 1e-3),
        ]
        self._library_cases(cases)

    def sweep(self):
        """Issue 12's rows at n = 1024, 2048, 4096: sort along rows of n x n, solve with one
        right-hand side, cholesky, the thin svd with its vectors (to 2048), fft2 of complex64."""
        cp = self.cp
        rng = cp.random.default_rng(3)

        def sort(m, v):
            out = m.sort(v, -1)
            return out.values if hasattr(out, "values") else out

        def svd(m, v):  # the vectors' column sums of |.|: sign-free, and they must be computed
            u, s, vh = m.linalg.svd(v, full_matrices=False)
            return m.abs(u).sum(0) + s + m.abs(vh).sum(1)

        def eigvals(m, v):  # the order is no library's promise: sorted magnitudes
            return m.sort(m.abs(m.linalg.eigvals(v)))

        for n in (256, 512) if self.quick else (1024, 2048, 4096):
            a = rng.standard_normal((n, n), dtype=cp.float32)
            well = a + n * cp.eye(n, dtype=cp.float32)
            z = (a + 1j * a.T).astype(cp.complex64)
            cases = [
                (f"S sort {n}x{n} rows f32", sort, (a,), 0.0),
                (
                    f"S solve {n}x{n} f32",
                    lambda m, p, q: m.linalg.solve(p, q),
                    (well, a[:, :1].copy()),
                    1e-3,
                ),
                (
                    f"S cholesky {n}x{n} f32",
                    lambda m, p: m.linalg.cholesky(p),
                    (well @ well.T,),
                    1e-3,
                ),
                (f"S fft2 {n}x{n} c64", lambda m, v: m.fft.fft2(v), (z,), 1e-3),
            ]
            if n <= 2048:  # (4096: seconds per call, minutes for the four systems)
                cases.append((f"S svd {n}x{n} f32", svd, (well,), 1e-2))
            if n == 1024:  # eig is forward only in the issue; one size (~0.2 s a call)
                cases.append((f"S eigvals {n}x{n} f32 (|w| sorted)", eigvals, (a,), 1e-3))
            self._library_cases(cases)

    def _library_cases(self, cases):
        cp = self.cp
        for name, fn, args, rtol in cases:
            if self.over_budget():
                self.notes.append(f"{name} skipped: over the time budget")
                continue
            row = {"workload": name, "floor_ms": float("nan")}
            got = self.run_tj(row, tj.jit(lambda *v, fn=fn: fn(tnp, *v), device="cuda"), args)
            row["cupy_ms"] = 1e3 * timeit(lambda fn=fn, args=args: fn(cp, *args), self.sync)
            row["ok"] = self.check(name, got, fn(cp, *args), rtol)
            self._peers_elementwise(row, fn, args)
            self.rows.append(row)


def _graph_chain(x, y):
    a = tnp.tanh(x) * y
    centered = a - a.mean(axis=-1, keepdims=True)
    norm = centered / tnp.sqrt((centered * centered).mean(axis=-1, keepdims=True) + 1e-5)
    return tj.nn.softmax(a, axis=-1), a.sum(axis=0), tnp.cumsum(a, axis=1), norm


def graphs_bench(bench: Bench) -> None:
    """Per-call time of a launch-bound chain of small kernels with and without CUDA graphs."""
    from tracejit.backend_cuda import graphs

    cp = bench.cp
    rng = np.random.default_rng(0)
    x, y = (cp.asarray(rng.normal(size=(64, 256)).astype(np.float32)) for _ in range(2))
    row = {"workload": "G kernel chain 64x256 (graphs)"}
    times, modes = {}, {}
    for setting in ("never", "always", "auto"):
        tj.config.cuda_graphs = setting
        # a new executable per setting, with its own graph decision
        f = tj.jit(_graph_chain, device="cuda").lower(x, y).compile()
        n = graphs.WARMUP + 2 * graphs.TRIALS + 4  # past warm-up, capture and measurement
        for _ in range(n):
            f(x, y)
        bench.sync()
        times[setting] = 1e3 * timeit(lambda f=f: f(x, y), bench.sync, 50)
        runner = f.executable.graphs
        modes[setting] = runner.mode if runner is not None else "ineligible"
        if setting == "auto" and runner is not None and runner.times["graph"]:
            # what "auto" decided on: the median host time per call of each mode (graphs.py)
            medians = {k: 1e6 * statistics.median(v) for k, v in runner.times.items()}
            modes["auto_host_us"] = {k: round(v, 1) for k, v in medians.items()}
    tj.config.cuda_graphs = "auto"
    row["tj_ms"] = times["auto"]
    bench.notes.append(
        "CUDA graphs, kernel chain per call: never {never:.3f} ms, always {always:.3f} ms, "
        "auto {auto:.3f} ms".format(**times)
        + f" (modes: {modes})"
    )
    row["ok"] = True
    bench.rows.append(row)


def table(rows: list[dict]) -> str:
    cols = [("workload", "workload", "{}"), ("floor_ms", "floor", "{:.3f}"),
            ("tj_ms", "tracejit", "{:.3f}"), ("cupy_ms", "cupy", "{:.3f}"),
            ("jax_ms", "jax", "{:.3f}"), ("torch_ms", "torch.c", "{:.3f}"),
            ("tj_first_call_s", "tj 1st s", "{:.2f}"), ("ok", "ok", "{}")]  # fmt: skip
    lines = [" | ".join(h for _, h, _ in cols)]
    for r in rows:
        cells = []
        for key, _, fmt in cols:
            v = r.get(key)
            cells.append(
                "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)
            )
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="gpu_bench.json")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--budget", type=float, default=240.0, help="seconds before peers are skipped")
    ap.add_argument("--only", default="w1,w2,w3,w4,w5,graphs", help="workloads, comma-separated")
    args = ap.parse_args(argv)
    bench = Bench(args.quick, args.budget)
    cp = bench.cp
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    card = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    for name in args.only.split(","):
        try:
            graphs_bench(bench) if name == "graphs" else getattr(bench, name)()
        except Exception as err:  # noqa: BLE001 - report and go on to the next workload
            bench.notes.append(f"{name.upper()} FAILED: {err.__class__.__name__}: {err}"[:400])
        cp.get_default_memory_pool().free_all_blocks()
    print(f"GPU benchmarks on {card} (ms, median of {bench.reps()}; floor = copy-bandwidth bound)")
    print(table(bench.rows))
    for note in bench.notes:
        print("note:", note)
    result = {"card": card, "rows": bench.rows, "notes": bench.notes, "quick": args.quick}
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1, default=str)
    return 0 if all(r.get("ok") for r in bench.rows) and bench.rows else 1


if __name__ == "__main__":
    sys.exit(main())
