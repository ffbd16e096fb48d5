"""Known tracing-JIT pitfalls, each asserting today's behaviour and saying what to do instead.

Silent wrong results first: these are the ones a user cannot see coming.
"""

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

# ---------------------------------------------------------------- silent wrong results


def test_global_array_changed_after_compilation_is_not_seen():
    """Closed-over arrays are baked into the compiled function as constants.

    Do instead: pass the array as an argument.
    """
    table = np.array([1.0, 2.0])
    f = tj.jit(lambda x: x * table)
    np.testing.assert_array_equal(f(np.ones(2)), [1.0, 2.0])
    table[:] = [10.0, 20.0]
    np.testing.assert_array_equal(f(np.ones(2)), [1.0, 2.0])  # still the old table
    g = tj.jit(lambda x, t: x * t)
    np.testing.assert_array_equal(g(np.ones(2), table), [10.0, 20.0])


def test_closed_over_python_number_is_baked_in():
    """A Python number read from an enclosing scope is a constant of the trace.

    Do instead: pass it as an argument (traced as a weak scalar, no retrace per value).
    """
    scale = 2.0
    f = tj.jit(lambda x: x * scale)
    assert f(np.ones(1))[0] == 2.0
    scale = 3.0  # rebinding the closed-over name is exactly the pitfall
    assert f(np.ones(1))[0] == 2.0


def test_numpy_random_inside_jit_is_drawn_once_at_trace_time():
    """np.random runs in Python while tracing; its draw becomes a constant.

    Do instead: tracejit.random with an explicit key argument.
    """
    f = tj.jit(lambda x: x + np.random.default_rng().standard_normal(3))
    a = f(np.zeros(3))
    b = f(np.zeros(3))
    np.testing.assert_array_equal(a, b)  # the same "random" numbers on every call


def test_out_of_range_indices_are_clamped_not_raised():
    """Compiled code cannot raise on data, so gathers clamp indices (as JAX does).

    NumPy raises IndexError here. Do instead: validate indices before the call.
    """
    f = tj.jit(lambda x, i: tnp.take(x, i))
    x = np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(f(x, np.array([5, -1])), [30.0, 30.0])
    with pytest.raises(IndexError):
        np.take(x, np.array([5]))


def test_integer_overflow_wraps_like_numpy():
    """int32 arithmetic wraps around silently, as in NumPy. Do instead: use int64."""
    f = tj.jit(lambda x: x * 2)
    big = np.array([2**30], np.int32)
    np.testing.assert_array_equal(f(big), big * 2)
    assert f(big)[0] < 0


# ---------------------------------------------------------------- surprises that are loud or slow


def test_python_side_effects_run_once_at_trace_time():
    """print/append run while tracing, not on every call.

    Do instead: return the values you want to inspect.
    """
    log = []

    @tj.jit
    def f(x):
        log.append("traced")
        return x + 1

    f(np.ones(2))
    f(np.ones(2))
    assert log == ["traced"]


def test_list_arguments_are_pytrees_and_their_length_is_static():
    """A list is a pytree: each element is traced, a new length retraces.

    Do instead: stack the list into one array when its length varies.
    """
    traces = []

    @tj.jit
    def total(xs):
        traces.append(len(xs))
        out = xs[0]
        for x in xs[1:]:
            out = out + x
        return out

    assert total([np.ones(2), np.ones(2)])[0] == 2
    assert total([np.ones(2), np.ones(2), np.ones(2)])[0] == 3
    assert traces == [2, 3]


def test_python_scalar_arguments_are_traced_so_control_flow_on_them_fails():
    """Python scalars are traced (one trace for all values), so `if n > 0` cannot run.

    Do instead: static_argnums for values that steer Python control flow.
    """

    def f(x, n):
        return x * 2 if n > 0 else x

    with pytest.raises(tj.errors.ConcretizationError, match="static_argnums"):
        tj.jit(f)(np.ones(2), 1)
    np.testing.assert_array_equal(tj.jit(f, static_argnums=1)(np.ones(2), 1), [2, 2])


def test_every_new_shape_retraces():
    """The cache is keyed on shapes: many shapes mean many compiles.

    Do instead: pad to a few bucket sizes; tj.config.explain_cache_misses shows why.
    """
    traces = []
    f = tj.jit(lambda x: traces.append(x.shape) or x + 1)
    for n in range(1, 5):
        f(np.ones(n))
    assert len(traces) == 4


def test_float64_stays_float64():
    """Unlike JAX's default, float64 inputs compute in float64 (NumPy's rule).

    Do instead: cast to float32 yourself if you want float32 speed.
    """
    assert tj.jit(lambda x: x * 2.0)(np.ones(2)).dtype == np.float64
