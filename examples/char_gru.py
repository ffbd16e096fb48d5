"""A character-level GRU language model, trained on the Zen of Python (it ships with Python).

    python examples/char_gru.py [--steps 300] [--hidden 64]

The recurrence over a sequence is one `tracejit.lax.scan`, so the compiled program is a loop
(forward, then a reverse loop for the gradient) whatever the sequence length. One jitted
`tj.value_and_grad` step trains all parameters with Adam; the script prints the loss as it
goes and then samples text from the model.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import io
import sys
import time
from pathlib import Path

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gallery import save_plot

SEQ, BATCH = 32, 16
# Adam's usual constants (Kingma & Ba, 2015)
LEARNING_RATE, BETA1, BETA2, ADAM_EPS = 1e-2, 0.9, 0.999, 1e-8


def zen_of_python() -> str:
    with contextlib.redirect_stdout(io.StringIO()):  # importing `this` prints the poem
        import this
    return codecs.decode(this.s, "rot13")  # the module keeps its text rot13-encoded


def init_params(key, vocab: int, hidden: int) -> dict:
    keys = tj.random.split(key, 4)

    def dense(k, n_in, n_out):
        return (tj.random.normal(k, (n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)

    return {
        "wx": dense(keys[0], vocab, 3 * hidden),  # update, reset and candidate gates
        "wh": dense(keys[1], hidden, 2 * hidden),
        "wc": dense(keys[2], hidden, hidden),
        "b": np.zeros(3 * hidden, np.float32),
        "wo": dense(keys[3], hidden, vocab),
        "bo": np.zeros(vocab, np.float32),
    }


def gru_step(params, h, x):
    """One GRU step (Cho et al., 2014) on a batch: h (B, H), x one-hot (B, V)."""
    n = h.shape[-1]
    gx = x @ params["wx"] + params["b"]
    gh = h @ params["wh"]
    z = tj.nn.sigmoid(gx[:, :n] + gh[:, :n])
    r = tj.nn.sigmoid(gx[:, n : 2 * n] + gh[:, n:])
    candidate = tnp.tanh(gx[:, 2 * n :] + (r * h) @ params["wc"])
    return (1 - z) * h + z * candidate


def loss(params, inputs, targets):
    """Mean cross-entropy of next-character predictions; inputs/targets (T, B, V) one-hot."""
    h0 = tnp.zeros((inputs.shape[1], params["wh"].shape[0]), np.float32)

    def step(h, x):
        h = gru_step(params, h, x)
        return h, h

    _, hs = lax.scan(step, h0, inputs)  # (T, B, H)
    logits = hs @ params["wo"] + params["bo"]
    return -tnp.mean(tnp.sum(targets * tj.nn.log_softmax(logits), axis=-1))


def adam(params, grads, state, step):
    m, v = state
    m = {k: BETA1 * m[k] + (1 - BETA1) * grads[k] for k in params}
    v = {k: BETA2 * v[k] + (1 - BETA2) * grads[k] ** 2 for k in params}
    scale = LEARNING_RATE * np.sqrt(1 - BETA2**step) / (1 - BETA1**step)
    new = {k: params[k] - scale * m[k] / (np.sqrt(v[k]) + ADAM_EPS) for k in params}
    return {k: p.astype(np.float32) for k, p in new.items()}, (m, v)  # scale is a float64


def sample(params, chars: list[str], seed_text: str, n: int, rng) -> str:
    """Feed `seed_text`, then draw `n` characters from the model's predictions."""
    index = {c: i for i, c in enumerate(chars)}

    @tj.jit
    def step(p, h, x):
        h = gru_step(p, h, x)
        return h, tj.nn.softmax(h @ p["wo"] + p["bo"])

    h = np.zeros((1, params["wh"].shape[0]), np.float32)
    eye = np.eye(len(chars), dtype=np.float32)
    out = seed_text
    for c in seed_text:
        h, probs = step(params, h, eye[index[c]][None])
    for _ in range(n):
        p = np.asarray(probs[0], np.float64)
        c = rng.choice(len(chars), p=p / p.sum())
        out += chars[c]
        h, probs = step(params, h, eye[c][None])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--plot", default="char_gru.png", help="PNG of the loss ('' for none)")
    args = parser.parse_args()

    text = zen_of_python()
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text])
    eye = np.eye(len(chars), dtype=np.float32)
    params = init_params(tj.random.key(0), len(chars), args.hidden)
    state = ({k: np.zeros_like(p) for k, p in params.items()},) * 2
    train_step = tj.jit(tj.value_and_grad(loss))
    rng = np.random.default_rng(0)
    print(f"{len(text)} characters, {len(chars)} distinct; GRU with {args.hidden} units")

    start, first, value, losses = time.perf_counter(), None, float("nan"), []
    for step in range(1, args.steps + 1):
        starts = rng.integers(0, len(ids) - SEQ - 1, BATCH)
        window = np.stack([ids[s : s + SEQ + 1] for s in starts], axis=1)  # (T+1, B)
        value, grads = train_step(params, eye[window[:-1]], eye[window[1:]])
        params, state = adam(params, grads, state, step)
        first = float(value) if first is None else first
        losses.append(float(value))
        if step == 1:
            print(f"compiled the training step in {time.perf_counter() - start:.1f} s")
        if step % max(1, args.steps // 10) == 0:
            bar = "#" * (20 * step // args.steps)
            print(f"[{bar:<20}] step {step:4d}  loss {float(value):.3f}", flush=True)
    print(f"loss {first:.3f} -> {float(value):.3f} in {time.perf_counter() - start:.1f} s")
    print("sample:", repr(sample(params, chars, "Beautiful is ", 60, rng)))
    save_plot(args.plot, {"training loss": losses}, "character GRU", "step", "cross-entropy")
    if not float(value) < first:
        raise SystemExit("the loss did not go down")


if __name__ == "__main__":
    main()
