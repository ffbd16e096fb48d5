"""Graph passes, numerics: log1p/expm1/logsumexp/log-softmax goldens and stable-reference checks."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
from _passes_util import check_golden, ir
from hypothesis import given
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.ir.interpret import evaluate
from tracejit.ir.passes import cse, numerics, optimize
from tracejit.tracer.core import bind

# ---------------------------------------------------------------- numerics


def test_log1p_golden():
    before = """
    { lambda a:f32[3] . let
        b:f32[] = const[value=1.0]
        c:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] b
        d:f32[3] = add c a
        e:f32[3] = log d
      in (e,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[3] = log1p a
      in (b,) }
    """
    check_golden(ir(lambda x: tnp.log(1.0 + x), (3,)), numerics, before, after)


def test_expm1_golden():
    before = """
    { lambda a:f32[3] . let
        b:f32[3] = exp a
        c:f32[] = const[value=1.0]
        d:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] c
        e:f32[3] = sub b d
      in (e,) }
    """
    after = """
    { lambda a:f32[3] . let
        b:f32[3] = expm1 a
      in (b,) }
    """
    check_golden(ir(lambda x: tnp.exp(x) - 1.0, (3,)), numerics, before, after)


STABLE_SHIFT = """
    b:f32[2] = reduce_max[axes=(1,)] a
    c:f32[2] = stop_gradient b
    d:bool[2] = isfinite c
    e:f32[] = const[value=0.0]
    f:f32[2] = broadcast_in_dim[dims=(), shape=(2,)] e
    g:f32[2] = select d c f
    h:f32[2,3] = broadcast_in_dim[dims=(0,), shape=(2, 3)] g
    i:f32[2,3] = sub a h
    j:f32[2,3] = exp i
    k:f32[2] = reduce_sum[axes=(1,)] j
    l:f32[2] = log k
"""


def _with_shift(tail: str, out: str) -> str:
    lines = ["{ lambda a:f32[2,3] . let"]
    lines += ["    " + s.strip() for s in (STABLE_SHIFT + tail).strip().splitlines()]
    return "\n".join(lines) + f"\n  in ({out},) }}"


def test_logsumexp_golden():
    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = exp a
        c:f32[2] = reduce_sum[axes=(1,)] b
        d:f32[2] = log c
      in (d,) }
    """
    after = _with_shift("m:f32[2] = add l g", "m")
    g = ir(lambda x: tnp.log(tnp.sum(tnp.exp(x), axis=1)), (2, 3))
    check_golden(g, numerics, before, after)


def test_logsumexp_keepdims_golden():
    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = exp a
        c:f32[2] = reduce_sum[axes=(1,)] b
        d:f32[2,1] = reshape[shape=(2, 1)] c
        e:f32[2,1] = log d
      in (e,) }
    """
    after = _with_shift("m:f32[2] = add l g\nn:f32[2,1] = reshape[shape=(2, 1)] m", "n")
    g = ir(lambda x: tnp.log(tnp.sum(tnp.exp(x), axis=1, keepdims=True)), (2, 3))
    check_golden(g, numerics, before, after)


LOG_SOFTMAX_AFTER = _with_shift(
    "m:f32[2,3] = broadcast_in_dim[dims=(0,), shape=(2, 3)] l\nn:f32[2,3] = sub i m", "n"
)


def test_log_softmax_golden():
    def naive(x):
        e = tnp.exp(x)
        return tnp.log(e / tnp.sum(e, axis=1, keepdims=True))

    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = exp a
        c:f32[2] = reduce_sum[axes=(1,)] b
        d:f32[2,1] = reshape[shape=(2, 1)] c
        e:f32[2,3] = broadcast_in_dim[dims=(0, 1), shape=(2, 3)] d
        f:f32[2,3] = div b e
        g:f32[2,3] = log f
      in (g,) }
    """
    check_golden(ir(naive, (2, 3)), numerics, before, LOG_SOFTMAX_AFTER)


def test_log_softmax_without_keepdims_golden():
    def naive(x):
        e = tnp.exp(x)
        return tnp.log(e / bind("broadcast_in_dim", tnp.sum(e, axis=1), shape=(2, 3), dims=(0,)))

    before = """
    { lambda a:f32[2,3] . let
        b:f32[2,3] = exp a
        c:f32[2] = reduce_sum[axes=(1,)] b
        d:f32[2,3] = broadcast_in_dim[dims=(0,), shape=(2, 3)] c
        e:f32[2,3] = div b d
        f:f32[2,3] = log e
      in (f,) }
    """
    check_golden(ir(naive, (2, 3)), numerics, before, LOG_SOFTMAX_AFTER)


def test_log_softmax_with_two_exp_calls():
    # users write exp twice: two exp nodes, but both read the one value the pattern binds
    g = ir(lambda x: tnp.log(tnp.exp(x) / tnp.sum(tnp.exp(x), axis=1, keepdims=True)), (2, 3))
    assert str(numerics(g)) == LOG_SOFTMAX_AFTER
    assert str(optimize(g, stage="pre_grad")) == LOG_SOFTMAX_AFTER


def test_log_softmax_over_a_size_one_axis():
    # tnp drops the broadcast when the keepdims shape already is x's shape
    g = ir(lambda x: tnp.log(tnp.exp(x) / tnp.sum(tnp.exp(x), axis=1, keepdims=True)), (3, 1))
    out = optimize(g, verify_each=True)
    assert "div" not in str(out)
    x = np.array([[1000.0], [-1000.0], [0.5]], np.float32)
    np.testing.assert_array_equal(evaluate(out, [x])[0], np.zeros((3, 1), np.float32))


def test_mismatched_softmax_axes_are_not_rewritten():
    def wrong(x):  # sums over axis 1 but broadcasts back along axis 0
        s = tnp.sum(tnp.exp(x), axis=1)
        return tnp.log(tnp.exp(x) / bind("broadcast_in_dim", s, shape=(3, 3), dims=(1,)))

    g = cse(ir(wrong, (3, 3)))
    assert numerics(g) is g


def test_the_stable_form_is_left_alone():
    def stable(x):
        s = x - tnp.max(x, axis=1, keepdims=True)
        return tnp.log(tnp.sum(tnp.exp(s), axis=1))

    g = ir(stable, (2, 3))
    assert numerics(g) is g


def test_log_of_a_user_shifted_softmax_is_rewritten_without_a_second_shift():
    def shifted_softmax_log(x):
        s = x - tnp.max(x, axis=1, keepdims=True)
        return tnp.log(tnp.exp(s) / tnp.sum(tnp.exp(s), axis=1, keepdims=True))

    x = np.array([[0.0, -200.0, 10.0]], np.float32)
    g = tj.make_ir(shifted_softmax_log)(x)
    out = optimize(g, verify_each=True)
    assert [n.prim.name for n in out.nodes].count("reduce_max") == 1
    with np.errstate(all="ignore"):
        assert np.isneginf(evaluate(g, [x])[0]).any()  # exp(-210) underflows to 0
    np.testing.assert_allclose(evaluate(out, [x])[0], _log_softmax_ref(x, 1), **_tol(x.dtype, x))


def _naive_log_softmax(axis):
    return lambda x: tnp.log(tnp.exp(x) / tnp.sum(tnp.exp(x), axis=axis, keepdims=True))


def _log_softmax_ref(x, axis):
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def test_naive_log_softmax_of_large_logits_is_finite(device):
    x = np.array([[1000.0, -1000.0, 0.0], [1.0, 2.0, 3.0]], np.float32)
    out = tj.device_get(tj.jit(_naive_log_softmax(-1), device=device)(x))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, _log_softmax_ref(x, -1), rtol=1e-6, atol=1e-4)
    with np.errstate(all="ignore"):  # without the rewrite: log(inf / inf)
        assert not np.isfinite(evaluate(ir(_naive_log_softmax(-1), (2, 3)), [x])[0]).all()


def _tol(dtype, x):
    eps = np.finfo(dtype).eps
    return {"rtol": 32 * eps, "atol": 32 * eps * (1.0 + float(np.abs(x).max(initial=0.0)))}


@st.composite
def _logits(draw):
    shape = draw(st.sampled_from([(1,), (4,), (2, 3), (3, 1), (2, 1, 4)]))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    scale = draw(st.sampled_from([1.0, 30.0, 1000.0]))
    unit = st.floats(-1, 1, width=np.dtype(dtype).itemsize * 8)
    x = draw(hnp.arrays(dtype, shape, elements=unit)) * dtype(scale)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    return x, axis


@given(_logits())
def test_log_softmax_rewrite_matches_stable_reference(case):
    x, axis = case
    g = optimize(tj.make_ir(_naive_log_softmax(axis))(x), verify_each=True)
    out = evaluate(g, [x])[0]
    assert out.dtype == x.dtype and np.isfinite(out).all()
    np.testing.assert_allclose(out, _log_softmax_ref(x, axis), **_tol(x.dtype, x))


@given(_logits(), st.booleans())
def test_logsumexp_rewrite_matches_stable_reference(case, keepdims):
    x, axis = case
    fn = lambda x: tnp.log(tnp.sum(tnp.exp(x), axis=axis, keepdims=keepdims))
    g = optimize(tj.make_ir(fn)(x), verify_each=True)
    out = evaluate(g, [x])[0]
    x64 = x.astype(np.float64)
    m = x64.max(axis=axis, keepdims=True)
    ref = m + np.log(np.exp(x64 - m).sum(axis=axis, keepdims=True))
    ref = ref if keepdims else np.squeeze(ref, axis)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, ref, **_tol(x.dtype, x))


def test_logsumexp_of_all_minus_inf_stays_minus_inf():
    x = np.full((2, 3), -np.inf)
    g = optimize(tj.make_ir(lambda x: tnp.log(tnp.sum(tnp.exp(x), axis=1)))(x))
    np.testing.assert_array_equal(evaluate(g, [x])[0], [-np.inf, -np.inf])


@given(
    hnp.arrays(
        np.float64,
        st.integers(1, 6),
        elements=st.floats(-0.999, 50) | st.floats(-1e-12, 1e-12),
    )
)
def test_log1p_and_expm1_rewrites_match_numpy(x):
    g = optimize(tj.make_ir(lambda x: (tnp.log(1.0 + x), tnp.exp(x) - 1.0))(x))
    assert {n.prim.name for n in g.nodes} == {"log1p", "expm1"}
    log1p, expm1 = evaluate(g, [x])
    np.testing.assert_allclose(log1p, np.log1p(x), rtol=1e-15)
    np.testing.assert_allclose(expm1, np.expm1(x), rtol=1e-15)
