"""Per-example gradients of an MLP: `jit(vmap(grad(loss)))` against a Python loop of the
jitted `grad`, with JAX's `jit(vmap(grad))` and torch.func's `vmap(grad)` (eager and under
`torch.compile`) beside when installed.

    python benchmarks/per_example_grads.py [--examples 256] [--repeats 20]

Each result is checked against the loop before it is timed; times are medians after warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

D_IN, D_HIDDEN, D_OUT = 64, 128, 10


def _params(rng):
    return {
        "w1": (rng.standard_normal((D_IN, D_HIDDEN)) * 0.1).astype(np.float32),
        "b1": np.zeros(D_HIDDEN, np.float32),
        "w2": (rng.standard_normal((D_HIDDEN, D_OUT)) * 0.1).astype(np.float32),
    }


def _median_s(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _tracejit(params, x, y, repeats):
    import tracejit as tj
    import tracejit.numpy as tnp

    def loss(p, x, y):
        h = tnp.tanh(x @ p["w1"] + p["b1"])
        return ((h @ p["w2"] - y) ** 2).sum()

    batched = tj.jit(tj.vmap(tj.grad(loss), in_axes=(None, 0, 0)))
    one = tj.jit(tj.grad(loss))

    def loop():
        return [one(params, x[i], y[i]) for i in range(len(x))]

    got, want = batched(params, x, y), loop()
    for k in params:
        np.testing.assert_allclose(got[k], np.stack([g[k] for g in want]), rtol=1e-4, atol=1e-5)
    return {
        "tracejit jit(vmap(grad))": _median_s(lambda: batched(params, x, y), repeats),
        "tracejit loop of jit(grad)": _median_s(loop, max(3, repeats // 5)),
    }, got


def _jax(params, x, y, repeats, want):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}
    jax.config.update("jax_platforms", "cpu")

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return ((h @ p["w2"] - y) ** 2).sum()

    fn = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    got = fn(params, x, y)
    for k in params:
        np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=1e-4, atol=1e-5)
    return {
        "jax jit(vmap(grad))": _median_s(lambda: jax.block_until_ready(fn(params, x, y)), repeats)
    }


def _torch(params, x, y, repeats, want):
    try:
        import torch
        from torch.func import grad, vmap
    except ImportError:
        return {}
    p = {k: torch.from_numpy(v) for k, v in params.items()}
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def loss(p, x, y):
        h = torch.tanh(x @ p["w1"] + p["b1"])
        return ((h @ p["w2"] - y) ** 2).sum()

    fn = vmap(grad(loss), in_dims=(None, 0, 0))
    compiled = torch.compile(fn)
    times = {}
    for name, f in (("torch.func vmap(grad)", fn), ("torch.compile(vmap(grad))", compiled)):
        got = f(p, tx, ty)
        for k in params:
            np.testing.assert_allclose(got[k].numpy(), want[k], rtol=1e-4, atol=1e-5)
        times[name] = _median_s(lambda f=f: f(p, tx, ty), repeats)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    params = _params(rng)
    x = rng.standard_normal((args.examples, D_IN)).astype(np.float32)
    y = rng.standard_normal((args.examples, D_OUT)).astype(np.float32)
    times, want = _tracejit(params, x, y, args.repeats)
    times.update(_jax(params, x, y, args.repeats, want))
    times.update(_torch(params, x, y, args.repeats, want))
    base = times["tracejit jit(vmap(grad))"]
    print(f"per-example gradients, MLP {D_IN}-{D_HIDDEN}-{D_OUT}, {args.examples} examples")
    for name, t in times.items():
        print(f"  {name:32s} {t * 1e3:9.3f} ms   {t / base:7.2f}x")


if __name__ == "__main__":
    main()
