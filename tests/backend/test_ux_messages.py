"""The messages a new user meets first (issue 15): each names the actual problem and the fix."""

import logging

import numpy as np
import pytest

import tracejit as tj


def test_cache_miss_explanation_names_only_the_closest_earlier_signature(caplog):
    f = tj.jit(lambda x: x + 1)
    tj.config.explain_cache_misses = True
    try:
        with caplog.at_level(logging.WARNING, logger="tracejit"):
            for n in (1, 2, 3):
                f(np.ones(n, np.float32))
            caplog.clear()
            f(np.ones(3, np.float64))
    finally:
        tj.config.explain_cache_misses = False
    (record,) = caplog.records
    text = record.getMessage()
    assert "closest of 3 earlier signatures" in text
    assert text.endswith("argument 'x' changed: f32[3] -> f64[3]")
    assert "f32[1]" not in text and "f32[2]" not in text


def test_printing_a_tracer_says_how_to_see_its_value(capsys):
    @tj.jit
    def f(x):
        print(x)
        return x

    f(np.ones(3, np.float32))
    out = capsys.readouterr().out
    assert out.startswith("Tracer<f32[3]> (a value being traced")
    assert "to see them" in out


def test_np_asarray_of_a_list_argument_says_lists_are_pytrees():
    @tj.jit
    def f(a):
        return np.asarray(a) * 2

    with pytest.raises(tj.errors.ConcretizationError) as info:
        f([np.ones(2), np.ones(2)])
    msg = str(info.value)
    assert "'a[0]' is an element of a list or tuple argument" in msg
    assert "np.asarray(a) before the call" in msg
    assert "tnp.asarray or tnp.stack" in msg
    both_fixes = tj.jit(lambda a: tj.numpy.asarray(a) * 2)
    for a in (np.ones((2, 2)), [np.ones(2), np.ones(2)]):
        np.testing.assert_array_equal(both_fixes(a), np.full((2, 2), 2.0))


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        (np.ones(2), "an array is not hashable"),
        ([1, 2], "use a tuple instead of a list"),
        ({1}, "use a frozenset instead of a set"),
    ],
)
def test_unhashable_static_argument_names_its_type(value, hint):
    f = tj.jit(lambda x, s: x, static_argnums=1)
    with pytest.raises(TypeError, match=f"static argument of type {type(value).__name__}") as e:
        f(np.ones(2), value)
    assert hint in str(e.value)
    assert ("list" in str(e.value)) == isinstance(value, list)
