"""Train an MLP on scikit-learn's bundled digits dataset (8x8 images, 10 classes) with
`tj.jit(tj.value_and_grad(loss))` and Adam, printing loss and accuracy per epoch.

    python examples/train_mlp.py [--epochs 30] [--device cpu]
    mpiexec -n 2 python examples/train_mlp.py --distributed

With `--distributed` (needs `pip install -e ".[distributed]"`), every process trains on its
share of each batch under `tj.distributed.spmd`; the gradients are averaged with one
`tj.lax.pmean` of the whole gradient dict (one all-reduce of the flattened gradients), so the
parameters match a one-process run on the whole batch up to float rounding.

The dataset ships with scikit-learn (no download). Parameters are initialized with
`tj.random`, the loss uses `tj.nn.log_softmax`, and one jitted step computes the loss and the
gradient of a dict of parameters. It reaches >= 95% test accuracy in a few seconds.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp

HIDDEN = 64
BATCH = 64
# Adam's usual constants (Kingma & Ba, 2015); 3e-3 suits this small network.
LEARNING_RATE, BETA1, BETA2, ADAM_EPS = 3e-3, 0.9, 0.999, 1e-8


def init_params(key, sizes):
    """He-normal weights from tj.random, zero biases, float32."""
    params = {}
    keys = tj.random.split(key, len(sizes) - 1)
    for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
        w = tj.random.normal(keys[i], (n_in, n_out), np.float32) * np.sqrt(2.0 / n_in)
        params[f"w{i}"] = w.astype(np.float32)
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    return params


def predict(params, x):
    h = tj.nn.relu(x @ params["w0"] + params["b0"])
    h = tj.nn.relu(h @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def loss(params, x, y_onehot):
    logits = predict(params, x)
    return -tnp.mean(tnp.sum(y_onehot * tj.nn.log_softmax(logits), axis=-1))


def adam_update(params, grads, state, step):
    m, v = state
    m = {k: BETA1 * m[k] + (1 - BETA1) * grads[k] for k in params}
    v = {k: BETA2 * v[k] + (1 - BETA2) * grads[k] ** 2 for k in params}
    scale = LEARNING_RATE * np.sqrt(1 - BETA2**step) / (1 - BETA1**step)
    new = {
        k: (params[k] - scale * m[k] / (np.sqrt(v[k]) + ADAM_EPS)).astype(np.float32)
        for k in params
    }
    return new, (m, v)


def make_step(distributed: bool, device):
    """The jitted training step: (params, x, y) -> (loss, grads) on the whole batch."""
    if not distributed:
        return tj.jit(tj.value_and_grad(loss), device=device)

    def local_step(params, x, y):  # x, y: this process's share of the batch
        value, grads = tj.value_and_grad(loss)(params, x, y)
        return tj.lax.pmean((value, grads), axis_name="batch")  # one bucket per dtype

    return tj.jit(tj.distributed.spmd(local_step, axis_name="batch"), device=device)


def shard(idx, distributed: bool):
    """This process's equal share of the batch `idx` (all of it without --distributed)."""
    if not distributed:
        return idx
    n = len(idx) // tj.distributed.process_count()
    start = tj.distributed.process_index() * n
    return idx[start : start + n]


def load_digits_split(seed: int = 0):
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = tj.random.permutation(tj.random.key(seed), len(x))
    n_test = len(x) // 5
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def train(args, data, log=print):
    """Train from the same initial parameters; returns (params, steps, test accuracy)."""
    x_train, y_train, x_test, y_test = data
    params = init_params(tj.random.key(42), [64, HIDDEN, HIDDEN, 10])
    state = ({k: np.zeros_like(p) for k, p in params.items()},) * 2
    step_fn = make_step(args.distributed, args.device)
    accuracy_fn = tj.jit(lambda p, x: tnp.argmax(predict(p, x), axis=-1), device=args.device)
    y_train_1h = np.asarray(tj.nn.one_hot(y_train, 10))

    step, acc = 0, 0.0
    n_batches = len(x_train) // BATCH  # full batches only: one shape, one compilation
    for epoch in range(1, args.epochs + 1):
        order = tj.random.permutation(tj.random.fold_in(tj.random.key(1), epoch), len(x_train))
        losses = []
        for b in range(n_batches):
            if step == args.steps:
                break
            idx = shard(order[b * BATCH : (b + 1) * BATCH], args.distributed)
            value, grads = step_fn(params, x_train[idx], y_train_1h[idx])
            step += 1
            params, state = adam_update(params, grads, state, step)
            losses.append(float(value))
        acc = float(np.mean(accuracy_fn(params, x_test) == y_test))
        log(f"epoch {epoch:3d}  loss {np.mean(losses):.4f}  test accuracy {acc:.2%}")
        if step == args.steps:
            break
    return params, step, acc


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--device", default=None, help="cpu (default), numpy or cuda")
    parser.add_argument("--distributed", action="store_true", help="one process per mpiexec rank")
    parser.add_argument("--steps", type=int, default=None, help="stop after this many steps")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    if args.distributed:
        tj.distributed.initialize()
    leader = tj.distributed.process_index() == 0
    start = time.perf_counter()
    _, step, acc = train(args, load_digits_split(), print if leader else lambda _: None)
    if leader:
        seconds = time.perf_counter() - start
        print(f"trained {step} steps in {seconds:.1f} s; final test accuracy {acc:.2%}")
    if args.steps is None and acc < 0.95:
        raise SystemExit(f"test accuracy {acc:.2%} is below 95%")


if __name__ == "__main__":
    main()
