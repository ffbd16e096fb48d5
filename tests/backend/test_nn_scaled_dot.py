"""tj.nn.scaled_dot_general and get_scaled_dot_general_config against JAX's definition,
restated in NumPy with ml_dtypes' casts (tests/_scaled_oracle.py): the product of the
quantized operands for dimension numbers that move batch and contracting axes, and the
custom VJP (quantized products of the cotangent for mxfp8; exact products masked where
the operand was clipped for nvfp4), eagerly and compiled for the test device."""

from __future__ import annotations

import dataclasses
import warnings

import ml_dtypes
import numpy as np
import pytest
from _scaled_oracle import gradients, quantized_matmul

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import ArgumentError, ShapeError, TracejitTypeError, TracejitValueError

RNG = np.random.default_rng(7)
# lhs (2, 4, 3, 8): batch axis 0, free axis 2, contracting (3, 1) paired with rhs's (0, 3)
LHS = (RNG.standard_normal((2, 4, 3, 8)) * 4).astype(np.float32)
RHS = RNG.standard_normal((8, 2, 5, 4)).astype(np.float32)
DIMS = (((3, 1), (0, 3)), ((0,), (1,)))
# the gradient's products contract the free axes too: (2, 32, 64) x (2, 32, 64)
A = (RNG.standard_normal((2, 32, 64)) * 10).astype(np.float32)
B = RNG.standard_normal((2, 32, 64)).astype(np.float32)
W = RNG.standard_normal((2, 32, 32)).astype(np.float32)  # the output's cotangent
DIMS3 = (((2,), (2,)), ((0,), (0,)))
W4 = RNG.standard_normal((2, 3, 5)).astype(np.float32)
GS = np.array([0.01], np.float32)  # nvfp4 clips |x| above 0.01 * 6 * 448


def _configs(mode, gs=GS):
    return [tj.nn.get_scaled_dot_general_config(mode, gs if mode == "nvfp4" else None)] * 3


def _to_3d(lhs, rhs):
    """The 4-d case flattened by hand: lhs (batch, free, K = axis 3 then axis 1), rhs's."""
    return lhs.transpose(0, 2, 3, 1).reshape(2, 3, 32), rhs.transpose(1, 2, 0, 3).reshape(2, 5, 32)


def _grads_from_3d(ga, gb):
    return ga.reshape(2, 3, 8, 4).transpose(0, 3, 1, 2), gb.reshape(2, 5, 8, 4).transpose(
        2, 0, 1, 3
    )


def _loss(configs, dims, w):
    return lambda a, b: tnp.sum(tj.nn.scaled_dot_general(a, b, dims, configs=configs) * w)


def _forward_and_grads(lhs, rhs, a, b, gs, padded=True):
    """Per mode: the 4-d product, its gradients (free sizes 3 and 5: padded to a block;
    with `padded`) and the gradients of the 3-d case (free sizes 32, where JAX's are
    defined)."""
    outs = {}
    for mode in ("mxfp8", "nvfp4"):
        cfg = _configs(mode, gs)
        fwd = tj.nn.scaled_dot_general(lhs, rhs, DIMS, configs=cfg)
        grads4 = tj.grad(_loss(cfg, DIMS, W4), argnums=(0, 1))(lhs, rhs) if padded else ()
        outs[mode] = fwd, grads4, tj.grad(_loss(cfg, DIMS3, W), argnums=(0, 1))(a, b)
    return outs


def _assert_close(got, want, **tol):
    got = np.asarray(tj.device_get(got))
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, **tol)


def _check(outs):
    for mode, (fwd, grads4, grads3) in outs.items():
        gs = GS[0] if mode == "nvfp4" else None
        a3, b3 = _to_3d(LHS, RHS)
        _assert_close(fwd, quantized_matmul(a3, b3, mode, gs, gs), rtol=2e-6, atol=1e-6)
        want4 = _grads_from_3d(*gradients(a3, b3, W4, mode, gs)) if grads4 else ()
        for got, want in zip(grads4 + grads3, want4 + gradients(A, B, W, mode, gs), strict=True):
            _assert_close(got, want, rtol=2e-6, atol=1e-4)


def test_forward_and_custom_vjp_match_jax():
    _check(_forward_and_grads(LHS, RHS, A, B, GS))
    clipped = np.abs(A) > GS[0] * 6 * 448
    assert clipped.any() and not clipped.all()  # nvfp4's mask is exercised
    exact = np.einsum("bmk,bnk->bmn", A.astype(np.float64), B)
    approx = tj.nn.scaled_dot_general(A, B, DIMS3, configs=_configs("mxfp8"))
    assert not np.array_equal(approx, exact.astype(np.float32))  # it did quantize


def test_compiled_matches(device):
    """The global scale is a jit argument (traced) here; the padded gradients are eager's."""
    run = tj.jit(lambda *xs: _forward_and_grads(*xs, padded=False), device=device)
    _check(run(LHS, RHS, A, B, GS))


def test_without_configs_it_is_dot_general():
    want = np.einsum("bkfa,abgk->bfg", LHS.astype(np.float64), RHS.astype(np.float64))
    got = tj.nn.scaled_dot_general(LHS.astype(np.float64), RHS, DIMS)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)
    x, y = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5))  # no batch axes
    got = tj.nn.scaled_dot_general(x, y, (((1,), (0,)), ((), ())), preferred_element_type=None)
    np.testing.assert_allclose(got, x @ y, rtol=1e-14)


def test_no_batch_axes_and_preferred_types():
    x = RNG.standard_normal((4, 64)).astype(np.float32)
    y = RNG.standard_normal((3, 64)).astype(np.float32)
    want = quantized_matmul(x[None], y[None], "mxfp8")[0]
    dims = (((1,), (1,)), ((), ()))
    cfg = _configs("mxfp8")
    got = tj.nn.scaled_dot_general(x, y, dims, configs=cfg)
    np.testing.assert_allclose(got, want, rtol=2e-6)
    for dt in (np.float16, ml_dtypes.bfloat16, np.dtype(np.float32)):
        out = tj.nn.scaled_dot_general(x, y, dims, preferred_element_type=dt, configs=cfg)
        assert out.dtype == dt
        np.testing.assert_array_equal(out, np.asarray(got).astype(dt))


def test_mixed_modes_multiply_each_global_scale_back():
    mx, nv = _configs("mxfp8")[0], _configs("nvfp4")[0]
    got = tj.nn.scaled_dot_general(A, B, DIMS3, configs=[mx, nv, mx])
    want = quantized_matmul(A, B, "mxfp8", None, GS[0], mode_b="nvfp4")
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-5)


def test_configs_are_jaxs():
    mx, nv = (tj.nn.get_scaled_dot_general_config(m) for m in ("mxfp8", "nvfp4"))
    assert (mx.mode, mx.block_size, mx.global_scale, mx.infer_only) == ("mxfp8", 32, None, False)
    assert (mx.data_type, mx.scale_type) == (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu)
    assert (nv.mode, nv.block_size) == ("nvfp4", 16)
    assert (nv.data_type, nv.scale_type) == (ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(nv.global_scale, np.ones((1,), np.float32))
    assert nv.global_scale.dtype == np.float32


def test_bad_input_gets_named_errors():
    sdg, cfg = tj.nn.scaled_dot_general, _configs("mxfp8")
    with pytest.raises(TracejitValueError):
        tj.nn.get_scaled_dot_general_config("fp8")
    with pytest.raises(ShapeError, match="multiple"):
        sdg(A[:, :, :48], B[:, :, :48], DIMS3, configs=cfg)
    with pytest.raises(ShapeError, match="differ"):
        sdg(A, B[:, :, :32], DIMS3, configs=cfg)
    with pytest.raises(ShapeError):
        sdg(A, B, (((3,), (2,)), ((0,), (0,))), configs=cfg)
    with pytest.raises(ArgumentError):
        sdg(A, B, ((2, 2), (0, 0)), configs=cfg)
    with pytest.raises(TracejitTypeError, match="preferred_element_type"):
        sdg(A, B, DIMS3, preferred_element_type=np.float64, configs=cfg)
    with pytest.raises(TracejitTypeError):
        sdg(A, B, DIMS3, configs=[cfg[0], "mxfp8", cfg[0]])
    nv64 = tj.nn.get_scaled_dot_general_config("nvfp4", np.array([0.5]))
    with pytest.raises(TracejitTypeError, match="float32"):
        sdg(A, B, DIMS3, configs=[nv64] * 3)
    for short in (cfg[:1], {0: cfg[0], 1: cfg[1]}):  # JAX: IndexError; a dict of configs
        with pytest.raises(ArgumentError, match="list of BlockScaleConfig"):
            sdg(A, B, DIMS3, configs=short)
    with pytest.raises(TracejitTypeError, match="preferred_element_type"):
        sdg(A, B, DIMS3, preferred_element_type=None, configs=cfg)
    # quantizing a complex operand dropped its imaginary part silently (JAX raises)
    with pytest.raises(TracejitTypeError, match="complex64"):
        sdg(A.astype(np.complex64), B, DIMS3, configs=cfg)
    # a float block size was used as is, a string one failed inside a comparison
    for size in (32.0, "32"):
        with pytest.raises(TracejitTypeError, match="block_size"):
            sdg(A, B, DIMS3, configs=[dataclasses.replace(cfg[0], block_size=size)] * 3)


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_forward_only_calls_take_the_configs_jax_takes(mode):
    """The cotangent's config is read only by the gradient (traced only when one is asked):
    without one, two configs (or a third that is not one) do, as in JAX."""
    cfg, dims = _configs(mode), (((1,), (1,)), ((), ()))
    g = GS if mode == "nvfp4" else None
    want = tj.jit(lambda a, b: tj.nn.scaled_dot_general(a, b, DIMS3, configs=cfg))(A, B)
    _assert_close(want, quantized_matmul(A, B, mode, g, g), rtol=1e-6, atol=1e-5)
    for cs in (cfg[:2], tuple(cfg[:2]), [*cfg[:2], None], [*cfg, None]):
        fwd = lambda a, b, cs=cs: tj.nn.scaled_dot_general(a, b, DIMS3, configs=cs)
        np.testing.assert_array_equal(tj.jit(fwd)(A, B), want)
        per_example = lambda a, b, cs=cs: tj.nn.scaled_dot_general(a, b, dims, configs=cs)
        np.testing.assert_array_equal(tj.vmap(per_example)(A, B), want)
    grad = lambda cs: tj.grad(_loss(cs, DIMS3, W), argnums=(0, 1))(A, B)
    with pytest.raises(ArgumentError, match=r"configs\[2\].*holds 2"):
        grad(cfg[:2])
    with pytest.raises(TracejitTypeError, match=r"configs\[2\] is a NoneType"):
        grad([*cfg[:2], None])
    for got, ref in zip(grad([*cfg, None]), grad(cfg)):  # a fourth entry is ignored, as in JAX
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_vmap_over_odd_axes_matches_each_example(device, mode):
    # examples along lhs axis 2 and rhs axis 0, the result's batch axis last; gradients too
    gs = np.array([0.004], np.float32)  # nvfp4 clips some of A's entries (|x| > 0.004*6*448)
    cfg = _configs(mode, gs)
    lhs, rhs, w = np.moveaxis(A, 0, 2), B, np.moveaxis(W, 0, 2)
    dims = (((1,), (1,)), ((), ()))
    fwd = lambda a, b: tj.nn.scaled_dot_general(a, b, dims, configs=cfg)
    grads = tj.grad(lambda a, b, w: tnp.sum(fwd(a, b) * w), argnums=(0, 1))
    fun = lambda a, b, w: (tj.vmap(fwd, in_axes=(2, 0), out_axes=-1)(a, b),
                           tj.vmap(grads, in_axes=(2, 0, 2), out_axes=(0, 1))(a, b, w))  # fmt: skip
    out, (ga, gb) = tj.jit(fun, device=device)(lhs, rhs, w)
    g = gs if mode == "nvfp4" else None
    want = quantized_matmul(A, B, mode, g, g)
    _assert_close(out, np.moveaxis(want, 0, -1), rtol=1e-6, atol=1e-5)
    wa, wb = gradients(A, B, W, mode, g)
    _assert_close(ga, wa, rtol=1e-5, atol=1e-4)
    _assert_close(gb, np.moveaxis(wb, 0, 1), rtol=1e-5, atol=1e-4)


def test_implementation_is_ignored_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="ignored"):
        got = tj.nn.scaled_dot_general(A, B, DIMS3, configs=_configs("mxfp8"),
                                       implementation="cudnn")  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = tj.nn.scaled_dot_general(A, B, DIMS3, configs=_configs("mxfp8"))
    np.testing.assert_array_equal(got, want)
