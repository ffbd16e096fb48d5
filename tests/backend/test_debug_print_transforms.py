"""tj.debug.print under differentiation prints once, in the forward pass, as JAX does:
the backward (and the transposition that builds forward mode) never prints again."""

from __future__ import annotations

import numpy as np

import tracejit as tj
from tracejit import lax


def _f(x):
    tj.debug.print("s={s}", s=x.sum())
    return (x * x).sum()


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_print_once_under_grad_jvp_checkpoint_and_second_order(capsys):
    x = np.arange(3.0)
    np.testing.assert_array_equal(tj.jvp(_f, (x,), (x,))[1], 10.0)
    assert _lines(capsys) == ["s=3.0"]
    g = tj.jit(tj.grad(lambda v: tj.checkpoint(_f)(v) * 2.0))(x)  # recomputed, not reprinted
    np.testing.assert_array_equal(g, 4 * x)
    assert _lines(capsys) == ["s=3.0"]
    np.testing.assert_array_equal(tj.grad(lambda v: tj.grad(_f)(v).sum())(x), [2.0] * 3)
    assert _lines(capsys) == ["s=3.0"]


def test_print_in_a_scan_body_once_per_iteration_under_jit_grad(capsys):
    def prod(xs):
        def body(c, xi):
            tj.debug.print("c={c}", c=c)
            return c * xi, None

        return lax.scan(body, 1.0, xs)[0]

    xs = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tj.jit(tj.grad(prod))(xs), [6.0, 3.0, 2.0])
    assert _lines(capsys) == ["c=1.0", "c=1.0", "c=2.0"]


def test_a_scalar_carry_prints_as_a_scalar_on_every_device(device, capsys):
    # CuPy's ascontiguousarray (as NumPy's) makes a 0-d argument 1-d; the CUDA loop's first
    # iteration printed the initial carry as [0.]
    def total(xs):
        def body(c, x):
            tj.debug.print("c={c}", c=c)
            return c + x, None

        return lax.scan(body, np.float64(0.0), xs)[0]

    out = tj.jit(total, device=device)(np.arange(1.0, 4.0))
    assert tj.device_get(out).shape == () and float(tj.device_get(out)) == 6.0
    assert _lines(capsys) == ["c=0.0", "c=1.0", "c=3.0"]
