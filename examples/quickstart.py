"""Quickstart: jit a NumPy function, print its IR, and check the result against NumPy.

python examples/quickstart.py
"""

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp


def layer(x, w, b):
    """A dense layer with a GELU-like activation, written with plain NumPy calls."""
    h = x @ w + b
    return 0.5 * h * (1.0 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    b = np.zeros(4, np.float32)

    print("IR of layer:")
    print(tj.make_ir(layer)(x, w, b))

    fast = tj.jit(layer)
    got = fast(x, w, b)
    want = layer(x, w, b)  # the same function, run by NumPy
    err = float(np.max(np.abs(got - want)))
    print(f"\nmax |tracejit - numpy| = {err:.2e}  (dtype {got.dtype}, shape {got.shape})")
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    softmax = tj.jit(lambda z: tnp.exp(z) / tnp.sum(tnp.exp(z), axis=-1, keepdims=True))
    np.testing.assert_allclose(softmax(got).sum(axis=-1), 1.0, rtol=1e-5)
    print("quickstart OK")


if __name__ == "__main__":
    main()
