"""Large programs for benchmarks/compile_scaling.py, written as a user would write them.

Each is plain NumPy-style code with a Python loop (the loop unrolls under `jit`, as in JAX).
`xp` is the array module: `numpy` for tracejit (plain `np.*` calls on tracers trace) and
`jax.numpy` for JAX. `make(name, size, xp)` returns `(loss, args)`; the benchmark compiles
`grad(loss)` of the first argument.

- rnn:   a tanh RNN, `size` steps, squared error on the last state.
- lstm:  HIPS autograd's LSTM example (examples/lstm.py there), `size` steps.
- fluid: HIPS autograd's stable-fluids example (examples/fluidsim/fluidsim.py), `size` steps.
"""

from __future__ import annotations

import numpy as np

RNN_BATCH, RNN_IN, RNN_HIDDEN = 8, 16, 32
LSTM_BATCH, LSTM_IN, LSTM_STATE = 4, 32, 32  # the example's one-hot characters, 32-wide state
FLUID_SIZE = 32  # the example's 50x50 grid, smaller so one step stays cheap to run


# ---------------------------------------------------------------- tanh RNN


def rnn_loss(xp, params, xs, y):
    h = xp.zeros((xs.shape[1], params["wh"].shape[0]), dtype=xs.dtype)
    for x in xs:
        h = xp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
    return xp.sum((h @ params["wo"] - y) ** 2)


def _rnn_args(steps: int, rng) -> tuple:
    f = np.float32
    params = {
        "wx": (rng.standard_normal((RNN_IN, RNN_HIDDEN)) * 0.3).astype(f),
        "wh": (rng.standard_normal((RNN_HIDDEN, RNN_HIDDEN)) * 0.2).astype(f),
        "b": np.zeros(RNN_HIDDEN, f),
        "wo": (rng.standard_normal((RNN_HIDDEN, 4)) * 0.3).astype(f),
    }
    xs = rng.standard_normal((steps, RNN_BATCH, RNN_IN)).astype(f)
    y = rng.standard_normal((RNN_BATCH, 4)).astype(f)
    return params, xs, y


# ---------------------------------------------------------------- LSTM (autograd's example)


def _sigmoid(xp, x):
    return 0.5 * (xp.tanh(x) + 1.0)


def _logsumexp(xp, x):
    m = xp.max(x, axis=1, keepdims=True)
    return m + xp.log(xp.sum(xp.exp(x - m), axis=1, keepdims=True))


def _concat_and_multiply(xp, weights, *args):
    cat_state = xp.hstack(args + (xp.ones((args[0].shape[0], 1), dtype=args[0].dtype),))
    return xp.dot(cat_state, weights)


def _lstm_predict(xp, params, inputs):
    def update_lstm(x, hiddens, cells):
        change = xp.tanh(_concat_and_multiply(xp, params["change"], x, hiddens))
        forget = _sigmoid(xp, _concat_and_multiply(xp, params["forget"], x, hiddens))
        ingate = _sigmoid(xp, _concat_and_multiply(xp, params["ingate"], x, hiddens))
        outgate = _sigmoid(xp, _concat_and_multiply(xp, params["outgate"], x, hiddens))
        cells = cells * forget + ingate * change
        hiddens = outgate * xp.tanh(cells)
        return hiddens, cells

    def hiddens_to_output_probs(hiddens):
        output = _concat_and_multiply(xp, params["predict"], hiddens)
        return output - _logsumexp(xp, output)

    num_sequences = inputs.shape[1]
    hiddens = xp.repeat(params["init hiddens"], num_sequences, axis=0)
    cells = xp.repeat(params["init cells"], num_sequences, axis=0)
    output = [hiddens_to_output_probs(hiddens)]
    for x in inputs:
        hiddens, cells = update_lstm(x, hiddens, cells)
        output.append(hiddens_to_output_probs(hiddens))
    return output


def lstm_loss(xp, params, inputs, targets):
    logprobs = _lstm_predict(xp, params, inputs)
    loglik = 0.0
    num_time_steps, num_examples, _ = inputs.shape
    for t in range(num_time_steps):
        loglik = loglik + xp.sum(logprobs[t] * targets[t])
    return -loglik / (num_time_steps * num_examples)


def _lstm_args(steps: int, rng) -> tuple:
    f = np.float32
    n_in, n_state = LSTM_IN, LSTM_STATE

    def w(rows, cols):
        return (rng.standard_normal((rows, cols)) * 0.1).astype(f)

    params = {
        "init cells": w(1, n_state),
        "init hiddens": w(1, n_state),
        "change": w(n_in + n_state + 1, n_state),
        "forget": w(n_in + n_state + 1, n_state),
        "ingate": w(n_in + n_state + 1, n_state),
        "outgate": w(n_in + n_state + 1, n_state),
        "predict": w(n_state + 1, n_in),
    }
    chars = rng.integers(0, n_in, size=(steps + 1, LSTM_BATCH))
    onehot = np.eye(n_in, dtype=f)[chars]
    return params, onehot[:-1], onehot[1:]


# ---------------------------------------------------------------- stable fluids


def _project(xp, vx, vy):
    p = xp.zeros(vx.shape, dtype=vx.dtype)
    h = 1.0 / vx.shape[0]
    div = (
        -0.5
        * h
        * (
            xp.roll(vx, -1, axis=0)
            - xp.roll(vx, 1, axis=0)
            + xp.roll(vy, -1, axis=1)
            - xp.roll(vy, 1, axis=1)
        )
    )
    for _ in range(10):
        p = (
            div
            + xp.roll(p, 1, axis=0)
            + xp.roll(p, -1, axis=0)
            + xp.roll(p, 1, axis=1)
            + xp.roll(p, -1, axis=1)
        ) / 4.0
    vx = vx - 0.5 * (xp.roll(p, -1, axis=0) - xp.roll(p, 1, axis=0)) / h
    vy = vy - 0.5 * (xp.roll(p, -1, axis=1) - xp.roll(p, 1, axis=1)) / h
    return vx, vy


def _advect(xp, f, vx, vy):
    rows, cols = f.shape
    cell_ys, cell_xs = np.meshgrid(np.arange(rows), np.arange(cols))  # concrete grid
    center_xs = (cell_xs - vx).ravel()
    center_ys = (cell_ys - vy).ravel()
    left_ix = xp.floor(center_xs).astype(np.int32)
    top_ix = xp.floor(center_ys).astype(np.int32)
    rw = center_xs - left_ix
    bw = center_ys - top_ix
    left_ix = xp.mod(left_ix, rows)
    right_ix = xp.mod(left_ix + 1, rows)
    top_ix = xp.mod(top_ix, cols)
    bot_ix = xp.mod(top_ix + 1, cols)
    flat_f = (1 - rw) * ((1 - bw) * f[left_ix, top_ix] + bw * f[left_ix, bot_ix]) + rw * (
        (1 - bw) * f[right_ix, top_ix] + bw * f[right_ix, bot_ix]
    )
    return xp.reshape(flat_f, (rows, cols))


def fluid_loss(xp, params, smoke, target, steps):
    n = FLUID_SIZE
    vx = xp.reshape(params[: n * n], (n, n))
    vy = xp.reshape(params[n * n :], (n, n))
    for _ in range(steps):
        vx_updated = _advect(xp, vx, vx, vy)
        vy_updated = _advect(xp, vy, vx, vy)
        vx, vy = _project(xp, vx_updated, vy_updated)
        smoke = _advect(xp, smoke, vx, vy)
    return xp.mean((target - smoke) ** 2)


def _fluid_args(steps: int, rng) -> tuple:
    f = np.float32
    n = FLUID_SIZE
    params = (rng.standard_normal(2 * n * n) * 0.5).astype(f)
    yy, xx = np.mgrid[0:n, 0:n]
    smoke = np.exp(-((xx - n / 2) ** 2 + (yy - n / 2) ** 2) / (n * 2.0)).astype(f)
    target = np.zeros((n, n), f)
    target[: n // 2] = 1.0
    return params, smoke, target


PROGRAMS = {
    "rnn": (rnn_loss, _rnn_args),
    "lstm": (lstm_loss, _lstm_args),
    "fluid": (fluid_loss, _fluid_args),
}


def make(name: str, size: int, xp, seed: int = 0):
    """`(loss(params, *data), args)` for program `name` at `size` steps, over module `xp`."""
    loss, make_args = PROGRAMS[name]
    args = make_args(size, np.random.default_rng(seed))

    def bound(*a):
        return loss(xp, *a, size) if name == "fluid" else loss(xp, *a)

    bound.__name__ = f"{name}{size}"
    return bound, args
