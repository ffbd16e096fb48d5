"""First call and steady step of `jit(grad(loss))`: loops written with `lax.scan` vs unrolled.

    python benchmarks/lax_scan.py                    # RNN 200 (scan, unrolled), LSTM 100 (scan)
    python benchmarks/lax_scan.py --quick            # RNN 50, LSTM 30
    python benchmarks/lax_scan.py --runs rnn:scan:200,rnn:unrolled:200
    python benchmarks/lax_scan.py --jax                # jax.jit(jax.grad) beside each row
    python benchmarks/lax_scan.py --torch --runs lstm:scan:100   # and torch.compile (LSTM)

The unrolled programs are compile_programs.py's (a Python loop, unrolled by tracing); the scan
programs compute the same loss with the loop body written once for `lax.scan` (`fori_loop`
for the stable-fluids simulation's time steps). Each
measurement runs in a fresh process over an empty disk cache: "first" is the first call
(trace, autodiff, passes, C++ compile, run) in wall time and in CPU seconds (this process and
the compiler), "step" the median of later calls. With --jax, the same loss under
`jax.jit(jax.grad)` (`jax.lax.scan` for the scan form) runs beside each row. With --torch,
`torch.compile(loss)` of the LSTM, differentiated by `torch.autograd.grad` (AOTAutograd
compiles the backward too), runs beside its rows, its time loop a
Python loop in both forms (compile_programs.lstm_loss over torch, which dynamo unrolls).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FULL = "rnn:scan:200,rnn:unrolled:200,lstm:scan:100"
QUICK = "rnn:scan:50,rnn:unrolled:50,lstm:scan:30,lstm:unrolled:30"
STEADY_CALLS = 20


def rnn_scan_loss(xp, lax, params, xs, y):
    def step(h, x):
        return xp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"]), None

    h0 = xp.zeros((xs.shape[1], params["wh"].shape[0]), dtype=xs.dtype)
    h, _ = lax.scan(step, h0, xs)
    return xp.sum((h @ params["wo"] - y) ** 2)


def lstm_scan_loss(xp, lax, params, inputs, targets):
    import compile_programs as cp

    def probs(hiddens):
        output = cp._concat_and_multiply(xp, params["predict"], hiddens)
        return output - cp._logsumexp(xp, output)

    def step(state, xt):
        x, target = xt
        hiddens, cells = state
        gates = [
            cp._concat_and_multiply(xp, params[k], x, hiddens)
            for k in ("change", "forget", "ingate", "outgate")
        ]
        change = xp.tanh(gates[0])
        forget, ingate, outgate = (cp._sigmoid(xp, g) for g in gates[1:])
        cells = cells * forget + ingate * change
        hiddens = outgate * xp.tanh(cells)
        return (hiddens, cells), xp.sum(probs(hiddens) * target)

    n = inputs.shape[1]
    state = (
        xp.repeat(params["init hiddens"], n, axis=0),
        xp.repeat(params["init cells"], n, axis=0),
    )
    # The unrolled example scores output t (made before input t) against target t.
    first = xp.sum(probs(state[0]) * targets[0])
    _, scores = lax.scan(step, state, (inputs[:-1], targets[1:]))
    steps, examples, _ = inputs.shape
    return -(first + xp.sum(scores)) / (steps * examples)


def fluid_fori_loss(xp, lax, params, smoke, target, steps):
    """compile_programs.fluid_loss with its time loop as `fori_loop` (same body)."""
    import compile_programs as cp

    n = cp.FLUID_SIZE
    vx = xp.reshape(params[: n * n], (n, n))
    vy = xp.reshape(params[n * n :], (n, n))

    def step(i, state):
        vx, vy, smoke = state
        vx_updated = cp._advect(xp, vx, vx, vy)
        vy_updated = cp._advect(xp, vy, vx, vy)
        vx, vy = cp._project(xp, vx_updated, vy_updated)
        return vx, vy, cp._advect(xp, smoke, vx, vy)

    # The example's advection promotes to its grid's dtype (float64 under NumPy rules): the
    # loop carries that dtype from the start, as the unrolled program does after one step.
    dt = cp._advect(xp, vx, vx, vy).dtype
    state = (vx.astype(dt), vy.astype(dt), smoke.astype(dt))
    _, _, smoke = lax.fori_loop(0, steps, step, state)
    return xp.mean((target - smoke) ** 2)


def _loss(program: str, form: str, size: int, xp, lax):
    import compile_programs as cp

    loss, args = cp.make(program, size, xp)
    if form == "scan":
        scan_loss = {"rnn": rnn_scan_loss, "lstm": lstm_scan_loss, "fluid": fluid_fori_loss}
        extra = (size,) if program == "fluid" else ()

        def loss(*a):
            return scan_loss[program](xp, lax, *a, *extra)

    return loss, args


class _TorchAsNumpy:
    """The NumPy names compile_programs' LSTM calls, over torch (`xp` for --torch)."""

    def __init__(self, torch):
        self.torch = torch
        self.tanh, self.exp, self.log, self.hstack = torch.tanh, torch.exp, torch.log, torch.hstack

    def ones(self, shape, dtype):
        return self.torch.ones(shape, dtype=dtype)

    def dot(self, a, b):
        return a @ b

    def max(self, x, axis, keepdims=False):
        return self.torch.amax(x, dim=axis, keepdim=keepdims)

    def sum(self, x, axis=None, keepdims=False):
        return x.sum() if axis is None else x.sum(dim=axis, keepdim=keepdims)

    def repeat(self, x, n, axis):
        return self.torch.repeat_interleave(x, n, dim=axis)


def _torch_step(program: str, size: int):
    import torch

    if program != "lstm":
        raise SystemExit("--torch: only the LSTM rows have a torch program")
    loss, args = _loss(program, "unrolled", size, _TorchAsNumpy(torch), None)
    args = [
        {k: torch.from_numpy(v) for k, v in a.items()}
        if isinstance(a, dict)
        else torch.from_numpy(a)
        for a in args
    ]
    for t in args[0].values():
        t.requires_grad_()
    compiled = torch.compile(loss)  # dynamo + AOTAutograd: a compiled forward and backward

    def step(params, *data):
        grads = torch.autograd.grad(compiled(params, *data), list(params.values()))
        return dict(zip(params, grads))

    def leaves_of(g):
        return [t.detach().numpy() for t in g.values()]

    return step, args, leaves_of


def _child(system: str, program: str, form: str, size: int) -> dict:
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent))
    import numpy as np

    if system == "torch":
        step, args, leaves_of = _torch_step(program, size)
    elif system == "jax":
        import jax
        import jax.numpy as jnp

        loss, args = _loss(program, form, size, jnp, jax.lax)
        jitted = jax.jit(jax.grad(loss))

        def step(*a):
            return jax.block_until_ready(jitted(*a))

        leaves_of = jax.tree_util.tree_leaves
    else:
        import tracejit as tj
        from tracejit import lax

        loss, args = _loss(program, form, size, np, lax)
        step = tj.jit(tj.grad(loss))
        leaves_of = tj.tree_leaves
    t0, c0 = time.perf_counter(), _cpu_seconds()
    first = step(*args)
    total, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    times = []
    for _ in range(STEADY_CALLS):
        t = time.perf_counter()
        step(*args)
        times.append(time.perf_counter() - t)
    leaves = [np.asarray(x) for x in leaves_of(first)]
    checksum = float(sum(np.sum(np.abs(x), dtype=np.float64) for x in leaves))
    step_s = sorted(times)[len(times) // 2]
    return {"first": total, "cpu": cpu, "step": step_s, "checksum": checksum}


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (the C++ compiler): unlike wall
    time, it does not grow when other work shares the cores."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _run(system: str, program: str, form: str, size: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="tj-lax-") as cache:
        env = dict(os.environ, TRACEJIT_CACHE_DIR=cache)
        cmd = [sys.executable, __file__, "--child", system, program, form, str(size)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", help="program:form:size,... (form: scan or unrolled)")
    parser.add_argument("--jax", action="store_true", help="also jax.jit(jax.grad) per row")
    parser.add_argument("--torch", action="store_true", help="also torch.compile (LSTM rows)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        print(json.dumps(_child(*a.child[:3], int(a.child[3]))))
        return
    runs = a.runs or (QUICK if a.quick else FULL)
    systems = ("tracejit",) + (("jax",) if a.jax else ()) + (("torch",) if a.torch else ())
    head = f"{'system':<9} {'program':<8} {'form':<9} {'steps':>5} {'first call s':>13}"
    print(f"{head} {'(cpu s)':>8} {'step ms':>9}  checksum")
    for item in runs.split(","):
        program, form, size = item.split(":")
        for system in systems:
            r = _run(system, program, form, int(size))
            row = f"{system:<9} {program:<8} {form:<9} {size:>5}"
            if "error" in r:
                print(f"{row}  error: {r['error']}", flush=True)
                continue
            print(
                f"{row} {r['first']:>13.2f} {r['cpu']:>8.2f} {r['step'] * 1e3:>9.3f}  "
                f"{r['checksum']:.6g}",
                flush=True,
            )


if __name__ == "__main__":
    main()
