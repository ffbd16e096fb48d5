"""jit: results equal NumPy, the trace cache, static arguments, pytrees, weak scalars."""

import collections
import logging
import re

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp


def counting(fn):
    calls = []

    def wrapper(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)

    wrapper.calls = calls
    return wrapper


def test_jit_matches_numpy_and_returns_numpy_arrays():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    f = tj.jit(lambda x, y: np.tanh(x * y + 0.5 * x) * 2 - y)
    out = f(x, y)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, np.tanh(x * y + 0.5 * x) * 2 - y, rtol=1e-6)


def test_no_retrace_for_same_signature_and_retrace_for_new_shape_or_dtype():
    body = counting(lambda x: x * 2.0)
    f = tj.jit(body)
    f(np.ones(3, np.float32))
    f(np.zeros(3, np.float32))
    assert len(body.calls) == 1
    f(np.ones(4, np.float32))
    assert len(body.calls) == 2
    f(np.ones(4, np.float64))
    assert len(body.calls) == 3


def test_python_scalars_are_weak_traced_values_not_constants():
    body = counting(lambda x, s: x * s)
    f = tj.jit(body)
    x = np.ones(3, np.float32)
    a = f(x, 2.0)
    b = f(x, 3.0)
    assert len(body.calls) == 1  # one trace serves every float value
    np.testing.assert_array_equal(a, [2, 2, 2])
    np.testing.assert_array_equal(b, [3, 3, 3])
    assert a.dtype == np.float32  # the weak scalar does not promote float32


def test_weak_scalar_promotion_follows_numpy2():
    f = tj.jit(lambda x: x * 2.0 + 1)
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        x = np.arange(3, dtype=dtype)
        assert f(x).dtype == (x * 2.0 + 1).dtype
    g = tj.jit(lambda x, y: x + y)
    i32, f32 = np.arange(3, dtype=np.int32), np.ones(3, np.float32)
    assert g(i32, f32).dtype == np.result_type(i32, f32)
    assert g(i32, 1.5).dtype == (i32 + 1.5).dtype


def test_static_argnums_and_argnames():
    body = counting(lambda x, n, *, mode="add": x + n if mode == "add" else x * n)
    f = tj.jit(body, static_argnums=1, static_argnames="mode")
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(f(x, 3), [4, 4])
    np.testing.assert_array_equal(f(x, 3, mode="mul"), [3, 3])
    np.testing.assert_array_equal(f(x, 5, mode="mul"), [5, 5])
    assert len(body.calls) == 3
    f(x, 5, mode="mul")
    assert len(body.calls) == 3


def test_static_argument_enables_python_control_flow():
    @tj.jit(static_argnums=(1,))
    def power(x, n):
        out = x
        for _ in range(n - 1):
            out = out * x
        return out

    x = np.array([1.5, 2.0])
    np.testing.assert_allclose(power(x, 3), x**3)


def test_unhashable_static_argument_is_a_clear_error():
    f = tj.jit(lambda x, shape: x, static_argnums=1)
    with pytest.raises(TypeError, match="hashable"):
        f(np.ones(2), [1, 2])


Point = collections.namedtuple("Point", ["x", "y"])


def test_pytrees_in_and_out():
    @tj.jit
    def f(params, pts, extra=None):
        out = {"sum": params["w"] * pts.x + params["b"], "pair": (pts.y, None)}
        return out, [pts.x - pts.y]

    params = {"w": np.float32(2), "b": np.ones(3, np.float32)}
    pts = Point(np.arange(3, dtype=np.float32), np.ones(3, np.float32))
    out, rest = f(params, pts)
    np.testing.assert_array_equal(out["sum"], 2 * pts.x + 1)
    assert out["pair"][1] is None
    assert isinstance(rest, list)
    np.testing.assert_array_equal(rest[0], pts.x - pts.y)


def test_registered_class_as_argument():
    class Box:
        def __init__(self, v):
            self.v = v

    tj.register_pytree_node(Box, lambda b: ((b.v,), None), lambda aux, ch: Box(*ch))
    f = tj.jit(lambda b: Box(b.v + 1))
    out = f(Box(np.zeros(2)))
    assert isinstance(out, Box)
    np.testing.assert_array_equal(out.v, [1, 1])


def test_keyword_arguments_are_traced():
    body = counting(lambda x, scale: x * scale)
    f = tj.jit(body)
    np.testing.assert_array_equal(f(np.ones(2), scale=np.full(2, 3.0)), [3, 3])
    np.testing.assert_array_equal(f(np.ones(2), scale=np.full(2, 4.0)), [4, 4])
    assert len(body.calls) == 1


def test_explain_cache_misses_names_the_changed_argument(caplog):
    tj.config.explain_cache_misses = True
    try:
        f = tj.jit(lambda x, y: x + y)
        with caplog.at_level(logging.WARNING, logger="tracejit"):
            f(np.ones(3, np.float32), np.ones(3, np.float32))
            f(np.ones(3, np.float32), np.ones(1, np.float32))
    finally:
        tj.config.explain_cache_misses = False
    text = caplog.text
    assert "'y' changed: f32[3] -> f32[1]" in text
    assert "'x'" not in text.split("cache miss")[-1]


def test_outputs_may_be_constants_and_scalars():
    f = tj.jit(lambda x: (x, 3, np.float32(2)))
    _, b, c = f(np.ones(2))
    assert b.shape == () and int(b) == 3
    assert c.dtype == np.float32


def test_lower_as_text_and_compile():
    f = tj.jit(lambda x: tnp.exp(x) + 1.0)
    lowered = f.lower(np.ones(3, np.float32))
    text = lowered.as_text()
    assert "exp" in text and "f32[3]" in text
    compiled = lowered.compile()
    assert isinstance(compiled.source(), str) and compiled.source()
    assert compiled.kernels()
    out = compiled(np.zeros(3, np.float32))  # the function's result, as from the jitted call
    np.testing.assert_allclose(out, np.full(3, 2.0, np.float32), rtol=1e-6)
    assert out.shape == (3,) and out.dtype == np.float32


def test_jit_inside_jit_inlines():
    inner = tj.jit(lambda x: x * 3.0)
    outer = tj.jit(lambda x: inner(x) + inner(x + 1.0))
    np.testing.assert_allclose(outer(np.ones(2)), [9.0, 9.0])
    ir = str(tj.make_ir(lambda x: inner(x) + 1.0)(np.ones(2)))
    assert "mul" in ir


def test_eager_tnp_returns_numpy_arrays():
    out = tnp.exp(np.zeros(3, np.float32))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_array_equal(out, [1, 1, 1])


def test_jit_on_numpy_device_and_unknown_device():
    f = tj.jit(lambda x: x + 1, device="numpy")
    np.testing.assert_array_equal(f(np.zeros(2)), [1, 1])
    with pytest.raises(tj.errors.DeviceError, match="unknown device"):
        tj.jit(lambda x: x, device="tpu")


def test_non_array_argument_is_a_clear_error():
    f = tj.jit(lambda x, s: x)
    with pytest.raises(TypeError, match="argument s of type str.*static_argnums"):
        f(np.ones(2), "hello")


def test_decorator_with_options_and_wraps():
    @tj.jit(static_argnames=("n",))
    def repeat_add(x, n=2):
        """doc"""
        for _ in range(n):
            x = x + 1
        return x

    assert repeat_add.__name__ == "repeat_add" and repeat_add.__doc__ == "doc"
    np.testing.assert_array_equal(repeat_add(np.zeros(1), n=3), [3])


def test_log_compiles_reports_unused_arguments(caplog):
    tj.config.log_compiles = True
    try:
        f = tj.jit(lambda x, unused, params: x + params["b"], device="numpy")
        with caplog.at_level(logging.WARNING, logger="tracejit"):
            f(np.ones(2), np.ones(3), {"b": np.ones(2), "w": np.ones(4)})
    finally:
        tj.config.log_compiles = False
    assert "no output depends on argument(s) 'unused', \"params['w']\"" in caplog.text


def test_log_compiles_reports_every_phase_and_the_cache_key(caplog):
    tj.config.log_compiles = True
    try:
        f = tj.jit(tj.value_and_grad(lambda w, x: tnp.sum(tnp.tanh(x @ w))), device="cpu")
        with caplog.at_level(logging.WARNING, logger="tracejit"):
            f(np.ones((3, 2)), np.ones((4, 3)))
    finally:
        tj.config.log_compiles = False
    text = caplog.text
    for phase in ("trace", "autodiff", "passes", "fusion", "codegen", "C++ compile", "load"):
        assert phase in text, phase
    assert re.search(r"cache (hit|miss) [0-9a-f]{64}", text)


def test_a_compiled_function_takes_and_returns_the_jitted_functions_structures():
    f = tj.jit(lambda p, n: {"y": p["w"] * n, "pair": (p["b"] + 1.0, p["w"].sum())},
               static_argnums=1)  # fmt: skip
    params = {"w": np.arange(3.0), "b": np.ones(2)}
    compiled = f.lower(params, 2).compile()
    got, want = compiled(params, 2), f(params, 2)
    assert got.keys() == want.keys() and isinstance(got["pair"], tuple)
    for g, w in zip(tj.tree_flatten(got)[0], tj.tree_flatten(want)[0]):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(tj.errors.ArgumentError, match="static arguments"):
        compiled(params, 3)
    with pytest.raises(tj.errors.ArgumentError, match="structured as"):
        compiled({"w": np.arange(3.0)}, 2)


def test_a_compiled_function_prints_what_the_jitted_one_prints(capsys):
    f = tj.jit(lambda x: tj.debug.print("x is {}", x) or x * 2.0)
    compiled = f.lower(np.ones(2)).compile()
    np.testing.assert_array_equal(compiled(np.full(2, 3.0)), [6.0, 6.0])
    assert capsys.readouterr().out == "x is [3. 3.]\n"


def test_scalar_and_static_arguments_on_the_fast_path_run_compiled(device):
    # the fast path hands a compiled function scalars converted as the general path does
    f = tj.jit(
        lambda x, lr, n, training=False: x * lr + n if training else x - n,
        static_argnames="training",
        device=device,
    )
    x = np.arange(4, dtype=np.int32)
    for lr, n in [(2, 3), (5, -1), (7, 2**31 - 32)]:  # the second and third calls are keyed
        out = f(x, lr, n, training=True)
        assert len(f._executables) == 1 and out.dtype == np.int32
        np.testing.assert_array_equal(tj.device_get(out), x * lr + n)
    np.testing.assert_array_equal(tj.device_get(f(x, 2, 3)), x - 3)
    with pytest.raises(tj.errors.IntegerOverflowError, match=r"argument n .*int32"):
        f(x, 2, 2**31, training=True)
