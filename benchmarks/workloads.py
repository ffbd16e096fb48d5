"""The benchmark workloads (W1-W4), written once per system, plus their NumPy references.

Each system has a `build_<system>(name, data)` returning a `Built`: `call()` runs one call
and returns its raw outputs, `sync(out)` waits for them (JAX is asynchronous), `fetch(out)`
turns them into a list of NumPy arrays for the check against `reference(name, data)`.

Workloads (sizes from `make_data(name, scale)`; scale "full" is the benchmark, "tiny" the
smoke test):
    w1         tanh(x*y + 0.5*x)*2 - y                      2**22 float32
    softmax    row softmax, exp(x - max) / sum             4096x1024 float32
    layernorm  (x - mean) / sqrt(var + 1e-5), no affine   4096x1024 float32
    mlp        784-512-512-10 relu MLP, softmax cross-entropy on one-hot labels, batch 256:
               loss and gradient (value_and_grad) and the SGD update in one compiled call
    dispatch   x + 1 on 8 float32 (per-call overhead)

>>> import numpy as np
>>> data = make_data("w1", "tiny")
>>> out = build_numpy("w1", data)
>>> check("w1", out.fetch(out.call()), reference("w1", data))
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

WORKLOADS = ("w1", "softmax", "layernorm", "mlp", "dispatch")
EPS = 1e-5  # layernorm epsilon, as torch.nn.LayerNorm's default
LR = 0.01  # SGD learning rate of the MLP step

SIZES = {
    "full": {"w1": 1 << 22, "rows": (4096, 1024), "mlp": (256, 784, 512, 512, 10), "dispatch": 8},
    "tiny": {"w1": 1000, "rows": (7, 33), "mlp": (5, 12, 9, 8, 4), "dispatch": 8},
}


@dataclass
class Built:
    call: Callable[[], Any]
    sync: Callable[[Any], None]
    fetch: Callable[[Any], list[np.ndarray]]


def _noop(_out) -> None:
    return None


# ---------------------------------------------------------------- data and references


def make_data(name: str, scale: str = "full", seed: int = 0) -> dict[str, Any]:
    """The inputs of one workload as float32 NumPy arrays (a dict; the MLP's params nested)."""
    rng = np.random.default_rng(seed)
    sizes = SIZES[scale]
    if name == "w1":
        n = sizes["w1"]
        return {"x": rng.standard_normal(n, np.float32), "y": rng.standard_normal(n, np.float32)}
    if name in ("softmax", "layernorm"):
        return {"x": rng.standard_normal(sizes["rows"], np.float32) * 3}
    if name == "dispatch":
        return {"x": np.arange(sizes["dispatch"], dtype=np.float32)}
    if name == "mlp":
        batch, *widths = sizes["mlp"]
        params = {}
        for i, (fan_in, fan_out) in enumerate(itertools.pairwise(widths), start=1):
            scale_ = np.float32(np.sqrt(2.0 / fan_in))  # He initialization for relu layers
            params[f"w{i}"] = rng.standard_normal((fan_in, fan_out), np.float32) * scale_
            params[f"b{i}"] = np.zeros(fan_out, np.float32) + np.float32(0.01)
        x = rng.standard_normal((batch, widths[0]), np.float32)
        y = np.eye(widths[-1], dtype=np.float32)[rng.integers(0, widths[-1], batch)]
        return {"params": params, "x": x, "y": y}
    raise ValueError(f"unknown workload {name!r}; use one of {WORKLOADS}")


def _np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _np_layernorm(x):
    xc = x - x.mean(axis=-1, keepdims=True)
    return xc / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + np.float32(EPS))


def _np_mlp_step(params, x, y):
    """(loss, new params) by hand-written backpropagation; the oracle of the MLP step."""
    h1 = np.maximum(x @ params["w1"] + params["b1"], 0)
    h2 = np.maximum(h1 @ params["w2"] + params["b2"], 0)
    z = h2 @ params["w3"] + params["b3"]
    shifted = z - z.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    batch = x.shape[0]
    loss = -(y * logp).sum() / batch
    dz = (np.exp(logp) * y.sum(axis=-1, keepdims=True) - y) / batch
    dh2 = (dz @ params["w3"].T) * (h2 > 0)
    dh1 = (dh2 @ params["w2"].T) * (h1 > 0)
    grads = {
        "w3": h2.T @ dz, "b3": dz.sum(0),
        "w2": h1.T @ dh2, "b2": dh2.sum(0),
        "w1": x.T @ dh1, "b1": dh1.sum(0),
    }  # fmt: skip
    lr = np.asarray(LR, x.dtype)
    return loss, {k: params[k] - lr * grads[k] for k in params}


def reference(name: str, data: dict) -> list[np.ndarray]:
    """The NumPy result of a workload, as a flat list (MLP: loss, then params by sorted key)."""
    if name == "w1":
        x, y = data["x"], data["y"]
        return [np.tanh(x * y + np.float32(0.5) * x) * np.float32(2) - y]
    if name == "softmax":
        return [_np_softmax(data["x"])]
    if name == "layernorm":
        return [_np_layernorm(data["x"])]
    if name == "dispatch":
        return [data["x"] + np.float32(1)]
    loss, new = _np_mlp_step(data["params"], data["x"], data["y"])
    return [np.asarray(loss)] + [new[k] for k in sorted(new)]


def _flat_mlp(loss, new) -> list[np.ndarray]:
    return [np.asarray(loss)] + [np.asarray(new[k]) for k in sorted(new)]


def check(name: str, got: list[np.ndarray], want: list[np.ndarray], params=None) -> None:
    """Raise AssertionError unless `got` matches the NumPy reference `want`.

    For the MLP step the SGD update (new - old params) is compared, not the new params, so a
    wrong gradient cannot hide behind the unchanged bulk of the weights.
    """
    if len(got) != len(want):
        raise AssertionError(f"{name}: {len(got)} outputs, expected {len(want)}")
    olds = [None] * len(want)
    if name == "mlp":
        olds = [None] + [params[k] for k in sorted(params)]
    for i, (g, w, old) in enumerate(zip(got, want, olds)):
        g = np.asarray(g, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        if old is not None:
            g, w = g - old, w - old
        if g.shape != w.shape:
            raise AssertionError(f"{name} output {i}: shape {g.shape}, expected {w.shape}")
        atol = 1e-5 if old is None else 2e-3 * float(np.abs(w).max(initial=0.0))
        if not np.allclose(g, w, rtol=2e-3, atol=atol):
            err = float(np.abs(g - w).max())
            raise AssertionError(f"{name} output {i}: max abs error {err:.3g} vs NumPy")


# ---------------------------------------------------------------- NumPy


def build_numpy(name: str, data: dict) -> Built:
    """NumPy eagerly, the same formulas as `reference`."""
    d = data
    if name == "mlp":
        return Built(
            lambda: _np_mlp_step(d["params"], d["x"], d["y"]), _noop, lambda o: _flat_mlp(*o)
        )
    return Built(lambda: reference(name, d), _noop, lambda o: o)


# ---------------------------------------------------------------- tracejit


def _tj_mlp_step():
    import tracejit as tj
    import tracejit.numpy as tnp

    def loss_fn(params, x, y):
        h1 = tnp.maximum(x @ params["w1"] + params["b1"], 0.0)
        h2 = tnp.maximum(h1 @ params["w2"] + params["b2"], 0.0)
        logits = h2 @ params["w3"] + params["b3"]
        return -tnp.sum(y * tj.nn.log_softmax(logits)) / x.shape[0]

    def step(params, x, y):
        loss, grads = tj.value_and_grad(loss_fn)(params, x, y)
        return loss, tj.tree_map(lambda p, g: p - LR * g, params, grads)

    return tj.jit(step)


def build_tracejit(name: str, data: dict) -> Built:
    """tracejit with device="cpu" (generated C++); NumPy arrays in and out."""
    import tracejit as tj
    import tracejit.numpy as tnp

    d = data
    if name == "mlp":
        step = _tj_mlp_step()
        return Built(lambda: step(d["params"], d["x"], d["y"]), _noop, lambda o: _flat_mlp(*o))
    if name == "w1":
        f = tj.jit(lambda x, y: tnp.tanh(x * y + 0.5 * x) * 2 - y)
        return Built(lambda: [f(d["x"], d["y"])], _noop, lambda o: o)
    fun = {
        "softmax": lambda x: _generic_softmax(tnp, x),
        "layernorm": lambda x: _generic_layernorm(tnp, x),
        "dispatch": lambda x: x + 1,
    }[name]
    f = tj.jit(fun)
    return Built(lambda: [f(d["x"])], _noop, lambda o: o)


def _generic_softmax(m, x):
    e = m.exp(x - m.max(x, axis=-1, keepdims=True))
    return e / m.sum(e, axis=-1, keepdims=True)


def _generic_layernorm(m, x):
    xc = x - m.mean(x, axis=-1, keepdims=True)
    return xc / m.sqrt(m.mean(xc * xc, axis=-1, keepdims=True) + EPS)


# ---------------------------------------------------------------- JAX


def build_jax(name: str, data: dict) -> Built:
    """jax.jit on the CPU; inputs are placed on the device once, outside the timed call."""
    import jax
    import jax.numpy as jnp

    d = jax.tree_util.tree_map(jax.device_put, data)
    sync = jax.block_until_ready

    def fetch(out):
        return [np.asarray(o) for o in jax.tree_util.tree_leaves(out)]

    if name == "mlp":

        def loss_fn(params, x, y):
            h1 = jnp.maximum(x @ params["w1"] + params["b1"], 0.0)
            h2 = jnp.maximum(h1 @ params["w2"] + params["b2"], 0.0)
            logits = h2 @ params["w3"] + params["b3"]
            return -jnp.sum(y * jax.nn.log_softmax(logits)) / x.shape[0]

        @jax.jit
        def step(params, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
            return loss, jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)

        # tree_leaves orders a dict by sorted key, as _flat_mlp does
        return Built(lambda: step(d["params"], d["x"], d["y"]), sync, fetch)
    if name == "w1":
        f = jax.jit(lambda x, y: jnp.tanh(x * y + 0.5 * x) * 2 - y)
        return Built(lambda: f(d["x"], d["y"]), sync, fetch)
    fun = {
        "softmax": lambda x: _generic_softmax(jnp, x),
        "layernorm": lambda x: _generic_layernorm(jnp, x),
        "dispatch": lambda x: x + 1,
    }[name]
    f = jax.jit(fun)
    return Built(lambda: f(d["x"]), sync, fetch)


# ---------------------------------------------------------------- torch.compile


def build_torch(name: str, data: dict) -> Built:
    """torch.compile (inductor, default mode) of a function; tensors made once from NumPy.

    The MLP step is one compiled function doing forward, backward (torch.func.grad_and_value,
    so autograd is traced into the same graph, like jax.value_and_grad) and the SGD update.
    """
    import torch

    d = _to_torch(data, torch)

    def fetch(out):
        if isinstance(out, tuple):
            loss, new = out
            return [loss.detach().numpy()] + [new[k].detach().numpy() for k in sorted(new)]
        return [out.detach().numpy()]

    if name == "mlp":

        def loss_fn(params, x, y):
            h1 = torch.relu(x @ params["w1"] + params["b1"])
            h2 = torch.relu(h1 @ params["w2"] + params["b2"])
            logits = h2 @ params["w3"] + params["b3"]
            return -(y * torch.log_softmax(logits, dim=-1)).sum() / x.shape[0]

        @torch.compile
        def step(params, x, y):
            grads, loss = torch.func.grad_and_value(loss_fn)(params, x, y)
            return loss, {k: params[k] - LR * grads[k] for k in params}

        return Built(lambda: step(d["params"], d["x"], d["y"]), _noop, fetch)
    if name == "w1":
        f = torch.compile(lambda x, y: torch.tanh(x * y + 0.5 * x) * 2 - y)
        return Built(lambda: f(d["x"], d["y"]), _noop, fetch)
    fun = {
        "softmax": _torch_softmax,
        "layernorm": _torch_layernorm,
        "dispatch": lambda x: x + 1,
    }[name]
    f = torch.compile(fun)
    return Built(lambda: f(d["x"]), _noop, fetch)


def _to_torch(data, torch):
    if isinstance(data, dict):
        return {k: _to_torch(v, torch) for k, v in data.items()}
    return torch.from_numpy(np.ascontiguousarray(data))


def _torch_softmax(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def _torch_layernorm(x):
    xc = x - x.mean(dim=-1, keepdim=True)
    return xc / ((xc * xc).mean(dim=-1, keepdim=True) + EPS).sqrt()


BUILDERS = {
    "tracejit": build_tracejit,
    "numpy": build_numpy,
    "jax": build_jax,
    "torch": build_torch,
}
