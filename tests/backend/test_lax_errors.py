"""tracejit.lax errors: bad bodies and operands raise named errors that say what differs."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.errors import ShapeError, UnsupportedError


def test_scan_carry_shape_mismatch_names_both_types():
    with pytest.raises(
        ShapeError,
        match=r"carry output carry has type f64\[3\] but the carry input carry has type f64\[\]",
    ):
        lax.scan(lambda c, x: (c + x, None), np.float64(0.0), np.ones((2, 3)))


def test_scan_carry_dtype_mismatch_names_both_types():
    with pytest.raises(ShapeError, match=r"carry\[1\] has type f64\[2\] but the carry input.*f32"):
        tj.jit(
            lambda xs: lax.scan(
                lambda c, x: ((c[0], c[1] + x), None), (np.int64(0), np.zeros(2, np.float32)), xs
            )
        )(np.ones((3, 2)))


def test_scan_carry_structure_mismatch():
    with pytest.raises(ShapeError, match="structure"):
        lax.scan(lambda c, x: ((c, c), None), np.float64(0.0), np.ones(2))


def test_scan_body_must_return_a_pair():
    with pytest.raises(ShapeError, match="pair"):
        lax.scan(lambda c, x: c + x, np.float64(0.0), np.ones(2))


def test_scan_lengths_must_agree():
    with pytest.raises(ShapeError, match=r"different leading axis sizes \[2, 3\]"):
        lax.scan(lambda c, x: (c, None), 0.0, (np.ones(2), np.ones(3)))
    with pytest.raises(ShapeError, match="pass length="):
        lax.scan(lambda c, x: (c, None), 0.0, None)
    with pytest.raises(ShapeError, match="length=4"):
        lax.scan(lambda c, x: (c, None), 0.0, np.ones(3), length=4)
    with pytest.raises(ShapeError, match="unroll"):
        lax.scan(lambda c, x: (c, None), 0.0, np.ones(3), unroll=0)


def test_weak_scalar_carry_takes_the_bodys_dtype():
    c, _ = tj.jit(lambda xs: lax.scan(lambda c, x: (c + x, None), 0.0, xs))(np.ones(3, np.float32))
    assert c.dtype == np.float32 and c == 3.0


def test_while_loop_predicate_must_be_a_boolean_scalar():
    with pytest.raises(ShapeError, match=r"cond_fun must return a boolean scalar.*f64\[\]"):
        lax.while_loop(lambda v: v * 1.0, lambda v: v - 1.0, np.float64(3.0))
    with pytest.raises(ShapeError, match=r"bool\[2\]"):
        lax.while_loop(lambda v: v > 0, lambda v: v - 1.0, np.ones(2))


def test_while_loop_body_type_mismatch():
    with pytest.raises(ShapeError, match=r"val has type f64\[2\] but the input val has type f64"):
        lax.while_loop(lambda v: v > 0, lambda v: tnp.stack([v, v]), np.float64(3.0))


def test_cond_predicate_must_be_a_boolean_scalar():
    with pytest.raises(ShapeError, match=r"boolean scalar, got bool\[2\]"):
        lax.cond(np.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(ShapeError, match=r"boolean scalar, got f64\[\]"):
        tj.jit(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(1.5)


def test_cond_branches_must_agree():
    with pytest.raises(
        ShapeError,
        match=r"output of true_fun out has type f64\[2\] but the output of false_fun out has type f32\[2\]",
    ):
        lax.cond(True, lambda x: x, lambda x: x.astype(np.float32), np.ones(2))
    with pytest.raises(ShapeError, match="structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, np.ones(2))


def test_switch_index_must_be_an_integer_scalar():
    with pytest.raises(ShapeError, match="integer scalar"):
        lax.switch(1.0, [lambda: 1.0, lambda: 2.0])
    with pytest.raises(ShapeError, match="non-empty"):
        lax.switch(0, [])


def test_select_n_checks_its_operands():
    with pytest.raises(ShapeError, match=r"case 1 has type f32\[2\]"):
        lax.select_n(np.array([True, False]), np.ones(2), np.ones(2, np.float32))
    with pytest.raises(ShapeError, match="2 cases"):
        lax.select_n(np.bool_(True), np.ones(2), np.ones(2), np.ones(2))
    with pytest.raises(ShapeError, match="scalar or have the cases' shape"):
        lax.select_n(np.ones(3, bool), np.ones(2), np.ones(2))


def test_fori_loop_bounds_must_be_integers():
    with pytest.raises(ShapeError, match="integers"):
        lax.fori_loop(0.0, 3, lambda i, v: v, 1.0)


def test_reverse_mode_through_while_loop_says_to_use_scan():
    def f(x):
        return lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, x)

    with pytest.raises(UnsupportedError, match=r"while_loop.*lax\.scan.*fori_loop"):
        tj.grad(f)(1.0)
    with pytest.raises(UnsupportedError, match="while_loop"):
        tj.grad(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2.0, x))(1.0, np.int64(3))
    with pytest.raises(UnsupportedError, match="forward mode .* works"):
        tj.vjp(f, 1.0)


def test_tracer_leaking_out_of_a_body_is_reported():
    leaked = []

    def body(c, x):
        leaked.append(c)
        return c + x, None

    tj.jit(lambda xs: lax.scan(body, np.float64(0.0), xs))(np.ones(2))
    with pytest.raises(tj.errors.TracerLeakError):
        tj.jit(lambda x: x + leaked[0])(np.float64(1.0))
