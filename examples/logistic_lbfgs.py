"""Logistic regression with L-BFGS: SciPy's optimizer, tracejit's compiled loss and gradient.

    python examples/logistic_lbfgs.py [--max-iter 200] [--l2 1e-3]

Fits an L2-regularized logistic regression to scikit-learn's bundled breast-cancer dataset
(569 samples, 30 features; no download). `scipy.optimize.minimize(method="L-BFGS-B",
jac=True)` asks for the loss and its gradient at each point; one jitted
`tj.value_and_grad(loss)` in float64 gives both. Prints the loss as the optimizer goes and
the test accuracy (about 97%).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import minimize

import tracejit as tj
import tracejit.numpy as tnp


def loss(w, x, y, l2):
    """Mean logistic loss with labels y in {0, 1}, plus l2 * |w|^2 (not on the bias)."""
    logits = x @ w[:-1] + w[-1]
    # -log p(y | x) = log(1 + exp(z)) - y z; softplus computes log(1 + exp(z)) stably
    return tnp.mean(tj.nn.softplus(logits) - y * logits) + l2 * tnp.sum(w[:-1] ** 2)


def load(seed: int = 0):
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    x, y = data.data.astype(np.float64), data.target.astype(np.float64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = len(x) // 4
    test, train = order[:n_test], order[n_test:]
    mean, std = x[train].mean(axis=0), x[train].std(axis=0)  # standardize with train stats
    x = (x - mean) / std
    return x[train], y[train], x[test], y[test]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-iter", type=int, default=200)
    parser.add_argument("--l2", type=float, default=1e-3)
    args = parser.parse_args()

    x_train, y_train, x_test, y_test = load()
    value_and_grad = tj.jit(tj.value_and_grad(loss))
    calls = []

    def fun(w):
        value, grad = value_and_grad(w, x_train, y_train, args.l2)
        calls.append(float(value))
        if len(calls) % 10 == 1:
            print(f"evaluation {len(calls):4d}  loss {float(value):.6f}", flush=True)
        return float(value), np.asarray(grad, np.float64)

    start = time.perf_counter()
    w0 = np.zeros(x_train.shape[1] + 1)
    result = minimize(fun, w0, jac=True, method="L-BFGS-B", options={"maxiter": args.max_iter})
    predict = (x_test @ result.x[:-1] + result.x[-1]) > 0
    accuracy = float(np.mean(predict == (y_test > 0.5)))
    print(
        f"L-BFGS: {result.nit} iterations, {len(calls)} evaluations in "
        f"{time.perf_counter() - start:.1f} s; final loss {result.fun:.6f} "
        f"({'converged' if result.success else result.message}); test accuracy {accuracy:.2%}"
    )
    if accuracy < 0.9:
        raise SystemExit(f"test accuracy {accuracy:.2%} is below 90%")


if __name__ == "__main__":
    main()
