"""tracejit.numpy as an Array API (2024.12) namespace: the version and inspection object,
`asarray(copy=, device=)`, expand_dims' IndexError for an out-of-range axis, and a traced
value's `__array_namespace__`, `.device` and `.to_device`, eagerly and under `jit`.

Jitted functions here run on device="numpy" (trace + reference interpreter): what is
checked happens while tracing, and tests/unit compiles nothing.
"""

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import AxisError, DeviceError, ShapeError, TracejitError

TRACE_DEVICE = "numpy"
STANDARD_DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def traced(fn, *args):
    """`fn(*args)` under jit on the reference interpreter."""
    return tj.jit(fn, device=TRACE_DEVICE)(*args)


# ---------------------------------------------------------------- namespace info


def test_the_namespace_states_its_standard_version():
    assert tnp.__array_api_version__ == "2024.12"


def test_capabilities_say_what_jit_cannot_do():
    caps = tnp.__array_namespace_info__().capabilities()
    assert caps["boolean indexing"] is False and caps["data-dependent shapes"] is False
    assert caps["max dimensions"] is None or isinstance(caps["max dimensions"], int)


def test_devices_are_tracejit_s_names():
    info = tnp.__array_namespace_info__()
    assert info.default_device() == "cpu"
    assert "cpu" in info.devices() and set(info.devices()) <= {"cpu", "cuda"}
    assert ("cuda" in info.devices()) == tj.devices.cuda_available()


def test_default_dtypes_are_the_ones_tnp_gives():
    defaults = tnp.__array_namespace_info__().default_dtypes()
    assert defaults == {
        "real floating": tnp.asarray(1.0).dtype,
        "complex floating": tnp.asarray(1j).dtype,
        "integral": tnp.arange(3).dtype,
        "indexing": tnp.argmax(np.ones(3)).dtype,
    }
    assert tnp.__array_namespace_info__().default_dtypes(device="cpu") == defaults


def test_dtypes_are_the_standard_s_by_name():
    found = tnp.__array_namespace_info__().dtypes()
    assert list(found) == STANDARD_DTYPES
    assert all(found[name] == np.dtype(name) for name in found)


@pytest.mark.parametrize(
    "kind, names",
    [
        ("bool", ["bool"]),
        ("signed integer", ["int8", "int16", "int32", "int64"]),
        ("unsigned integer", ["uint8", "uint16", "uint32", "uint64"]),
        ("integral", STANDARD_DTYPES[1:9]),
        ("real floating", ["float32", "float64"]),
        ("complex floating", ["complex64", "complex128"]),
        ("numeric", STANDARD_DTYPES[1:]),
        (("bool", "real floating"), ["bool", "float32", "float64"]),
        (("integral", "signed integer"), STANDARD_DTYPES[1:9]),
    ],
)
def test_dtypes_of_a_kind_as_isdtype_reads_it(kind, names):
    found = tnp.__array_namespace_info__().dtypes(kind=kind)
    assert list(found) == names
    assert all(tnp.isdtype(dt, kind) for dt in found.values())


def test_dtypes_refuse_an_unknown_kind_or_device():
    info = tnp.__array_namespace_info__()
    with pytest.raises(ValueError, match="unknown kind 'floating'"):
        info.dtypes(kind="floating")
    with pytest.raises(ValueError, match="device 'tpu' is not available"):
        info.dtypes(device="tpu")
    with pytest.raises(ValueError, match="device 'tpu' is not available"):
        info.default_dtypes(device="tpu")


# ---------------------------------------------------------------- asarray(copy=, device=)


def test_copy_true_never_shares_a_numpy_input_s_memory():
    a = np.arange(4.0)
    out = tnp.asarray(a, copy=True)
    assert not np.shares_memory(out, a) and np.array_equal(out, a)
    out[0] = 9.0
    assert a[0] == 0.0
    assert not np.shares_memory(tnp.asarray(a, dtype=np.float64, copy=True), a)
    assert np.shares_memory(tnp.asarray(a), a)  # copy=None: as before


def test_copy_false_views_what_needs_no_copy():
    a = np.arange(4.0)
    assert np.shares_memory(tnp.asarray(a, copy=False), a)
    assert np.shares_memory(tnp.asarray(a, dtype="float64", copy=False), a)


@pytest.mark.parametrize(
    "obj, dtype, named",
    [
        ([1.0, 2.0], None, "a Python list"),
        ((1, 2), None, "a Python tuple"),
        (1.5, None, "a Python float"),
        (np.float32(1.5), None, "a NumPy scalar of float32"),
        (np.arange(3.0), "float32", "a NumPy array of float64"),
    ],
)
def test_copy_false_raises_where_numpy_would_copy(obj, dtype, named):
    with pytest.raises(ValueError) as numpy_too:
        np.asarray(obj, dtype=dtype, copy=False)
    assert numpy_too.type is ValueError
    with pytest.raises(ValueError, match=f"copy=False.*from {named} needs a copy"):
        tnp.asarray(obj, dtype=dtype, copy=False)


def test_copy_under_jit():
    const = np.arange(3.0)

    def fn(x):
        same = tnp.asarray(x, copy=False)
        assert same is x and tnp.asarray(x, copy=True).shape == x.shape
        assert tnp.asarray(x, dtype=x.dtype, copy=False) is x
        with pytest.raises(ValueError, match="float32 from a traced float64 value"):
            tnp.asarray(x, dtype=np.float32, copy=False)
        with pytest.raises(ValueError, match="from a Python list needs a copy"):
            tnp.asarray([x[0], x[1]], copy=False)
        stacked = tnp.asarray([x[0], x[1]], copy=True)
        assert not np.shares_memory(tnp.asarray(const, copy=True), const)
        return same + tnp.asarray(const, copy=False) + stacked.sum()

    np.testing.assert_array_equal(traced(fn, np.ones(3)), np.ones(3) + const + 2.0)


def test_asarray_device_is_where_tnp_arrays_live():
    assert tnp.asarray([1, 2], device="cpu").tolist() == [1, 2]
    with pytest.raises(DeviceError, match="asarray: unknown device 'tpu'"):
        tnp.asarray([1, 2], device="tpu")
    with pytest.raises(DeviceError, match=r"live on 'cpu', not 'cuda'.*tj.jit\(f, device="):
        tnp.asarray([1, 2], device="cuda")

    def fn(x):
        with pytest.raises(DeviceError, match="not 'cuda'"):
            tnp.asarray(x, device="cuda")
        return tnp.asarray(x, device=x.device) * 2

    np.testing.assert_array_equal(traced(fn, np.ones(2)), [2.0, 2.0])


# ---------------------------------------------------------------- expand_dims axis range


@pytest.mark.parametrize("axis", [3, -4, (0, 5)])
def test_expand_dims_out_of_range_is_an_index_error_as_numpy_s_axis_error(axis):
    x = np.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError):
        np.expand_dims(x, axis)
    for run in (lambda f: f(x), lambda f: traced(f, x)):
        with pytest.raises(IndexError, match="expand_dims: axis .* out of bounds") as err:
            run(lambda a: tnp.expand_dims(a, axis))
        assert isinstance(err.value, ValueError) and isinstance(err.value, AxisError)
        assert isinstance(err.value, ShapeError) and isinstance(err.value, TracejitError)


def test_other_axis_errors_stay_shape_errors_and_gain_index_error():
    # the helper is shared: every out-of-range axis is NumPy's AxisError kind now
    with pytest.raises(ShapeError, match="sum: axis 2 is out of bounds") as err:
        tnp.sum(np.ones((2, 3)), axis=2)
    assert isinstance(err.value, IndexError)
    with pytest.raises(ShapeError, match="repeated axis") as err:  # NumPy: a ValueError only
        tnp.expand_dims(np.ones(2), (0, 0))
    assert not isinstance(err.value, IndexError)


# ---------------------------------------------------------------- traced values


def test_a_traced_value_names_its_namespace():
    def fn(x):
        assert x.__array_namespace__() is tnp
        assert x.__array_namespace__(api_version="2024.12") is tnp
        assert x.__array_namespace__("2023.12") is tnp
        with pytest.raises(ValueError, match="Array API version '2099.12' is not supported"):
            x.__array_namespace__(api_version="2099.12")
        xp = x.__array_namespace__()
        return xp.sum(xp.expand_dims(x, 0), axis=1)

    np.testing.assert_array_equal(traced(fn, np.arange(3.0)), [3.0])


def test_a_traced_value_s_device_and_to_device():
    def fn(x):
        assert x.device == "cpu" and x.to_device("cpu") is x and x.to_device(x.device) is x
        with pytest.raises(DeviceError, match=r"to_device: .* not 'cuda'.*device_put"):
            x.to_device("cuda")
        with pytest.raises(DeviceError, match="to_device: unknown device 'gpu0'"):
            x.to_device("gpu0")
        return x.to_device("cpu") + 1

    np.testing.assert_array_equal(traced(fn, np.zeros(2)), [1.0, 1.0])


def test_eager_arrays_keep_numpy_s_array_api():
    # eager results are NumPy arrays (ConstArray views): their namespace is NumPy's own
    out = tnp.asarray([1.0])
    assert out.device == "cpu" and out.__array_namespace__() is np
