"""Every user-facing error: its class, what it names, and the user's source line."""

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import errors

THIS_FILE = __file__


def test_error_hierarchy():
    for cls in (
        errors.ConcretizationError,
        errors.TracerLeakError,
        errors.ShapeError,
        errors.UnsupportedError,
        errors.CompileError,
        errors.DeviceError,
        errors.CacheError,
    ):
        assert issubclass(cls, errors.TracejitError)
    assert tj.errors is errors


def test_bool_of_tracer_names_argument_line_and_remedy():
    def f(x, threshold):
        if x > threshold:  # the offending line
            return x
        return -x

    with pytest.raises(errors.ConcretizationError) as info:
        tj.jit(f)(np.float32(1), np.float32(0))
    msg = str(info.value)
    assert "bool()" in msg
    assert "'x'" in msg and "'threshold'" in msg
    assert info.value.__notes__ == [f"at {info.value.source}"]  # the user's line, as a note
    assert info.value.source.startswith(f"{THIS_FILE}:") and "(f)" in info.value.source
    assert "tnp.where" in msg and "static_argnums" in msg


def test_int_float_index_of_tracer_are_concretization_errors():
    x = np.ones(3)
    for what, fn in (
        ("int()", lambda x: int(x)),
        ("float()", lambda x: float(x)),
        ("__index__", lambda x: [1, 2][x]),
    ):
        with pytest.raises(errors.ConcretizationError, match="static_argnums") as info:
            tj.jit(fn)(x)
        assert what in str(info.value)
    with pytest.raises(errors.ConcretizationError, match="np.asarray"):
        tj.jit(lambda x: np.asarray(x))(x)


def test_concretization_names_nested_argument_paths():
    with pytest.raises(errors.ConcretizationError, match=r"params\['w'\]"):
        tj.jit(lambda params: bool(params["w"] > 0))({"w": np.float32(1)})


def test_tracer_leak_names_where_it_was_created():
    leaked = []

    @tj.jit
    def f(x):
        y = x * 2.0  # created here
        leaked.append(y)
        return y

    f(np.ones(2))
    with pytest.raises(errors.TracerLeakError) as info:
        tnp.exp(leaked[0])
    msg = str(info.value)
    assert "after its trace ended" in msg
    assert f"{THIS_FILE}:" in msg and "return the value" in msg


def test_leaked_tracer_used_inside_another_trace():
    leaked = []
    tj.jit(lambda x: leaked.append(x + 1) or x)(np.ones(2))
    with pytest.raises(errors.TracerLeakError):
        tj.jit(lambda y: y + leaked[0])(np.ones(2))


def test_shape_error_names_op_shapes_and_line():
    def f(x, y):
        return x + y  # bad shapes

    with pytest.raises(errors.ShapeError) as info:
        tj.jit(f)(np.ones((2, 3)), np.ones((4,)))
    msg = str(info.value)
    assert "add" in msg and "(2, 3)" in msg and "(4,)" in msg
    assert info.value.__notes__ == [f"at {info.value.source}"]  # the user's line, as a note
    assert info.value.source.startswith(f"{THIS_FILE}:") and "(f)" in info.value.source


def test_unsupported_numpy_function_is_named():
    # a NumPy function tracejit.numpy does not have (np.fft.fft was one until it landed)
    with pytest.raises(errors.UnsupportedError, match=r"numpy\.busday_count"):
        tj.jit(lambda x: np.busday_count(x, x))(np.ones(4))


def test_unsupported_dtype_is_named():
    with pytest.raises(errors.UnsupportedError, match=r"datetime64\[s\]"):
        tj.jit(lambda x: x)(np.zeros(2, "datetime64[s]"))


def test_ufunc_out_argument_is_unsupported():
    def f(x):
        np.exp(x, out=x)
        return x

    with pytest.raises(errors.UnsupportedError, match="out="):
        tj.jit(f)(np.ones(2))


def test_setitem_on_tracer_is_unsupported_with_remedy():
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(errors.UnsupportedError, match="immutable.*tnp.where"):
        tj.jit(f)(np.ones(2))


def test_wrong_dtype_kind_for_bitwise_is_unsupported():
    with pytest.raises(errors.UnsupportedError, match="bitwise_and"):
        tj.jit(lambda x: tnp.bitwise_and(x, x))(np.ones(2))


def test_where_with_one_argument_explains_data_dependent_shape():
    with pytest.raises(errors.UnsupportedError, match="data-dependent"):
        tj.jit(lambda x: tnp.where(x > 0))(np.ones(2))


def test_a_compiled_function_given_another_dtype_raises_argument_error_not_shape_error():
    compiled = tj.jit(lambda x: x * 2).lower(np.ones(3, np.float32)).compile()
    with pytest.raises(TypeError, match="argument 0 has dtype float64.*expects float32") as info:
        compiled(np.ones(3, np.float64))
    assert isinstance(info.value, errors.ArgumentError)
    assert not isinstance(info.value, errors.ShapeError)
    with pytest.raises(errors.ShapeError, match="argument 0 has shape"):  # a shape stays one
        compiled(np.ones(4, np.float32))
