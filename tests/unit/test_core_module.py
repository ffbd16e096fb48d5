"""The compiled module `tracejit._core`: it imports, reports how it was built, and turns every
C++ exception into the matching `tracejit.errors` class with its message intact."""

from __future__ import annotations

import importlib.metadata

import pytest

from tracejit import (
    _core,  # built by `pip install -e .`; a missing build is a failure
    errors,
)

TRACEJIT_KINDS = {
    "shape": errors.ShapeError,
    "unsupported": errors.UnsupportedError,
    "compile": errors.CompileError,
    "device": errors.DeviceError,
    "cache": errors.CacheError,
    "argument": errors.ArgumentError,
    "concretization": errors.ConcretizationError,
    "base": errors.TracejitError,
}


def test_version_matches_the_installed_distribution():
    assert _core.version() == "0.1.0"
    assert _core.version() == importlib.metadata.version("tracejit")


def test_build_info_says_how_the_module_was_built():
    info = _core.build_info()
    for key in (
        "version",
        "compiler_id",
        "compiler_version",
        "cplusplus",
        "build_type",
        "pybind11_version",
        "assertions",
    ):
        assert key in info, key
    assert info["version"] == _core.version()
    assert info["cplusplus"] >= 201703  # C++17
    # pyproject.toml asks for Release; a developer may rebuild with -Ccmake.build-type=Debug.
    assert info["build_type"] in ("Release", "Debug", "RelWithDebInfo", "MinSizeRel")
    assert info["pybind11_version"].count(".") >= 2


@pytest.mark.parametrize("kind", sorted(TRACEJIT_KINDS))
def test_each_cpp_error_arrives_as_its_python_class(kind):
    expected = TRACEJIT_KINDS[kind]
    message = f"{kind} failed: operand f32[4,8] does not fit"
    with pytest.raises(expected) as caught:
        _core._raise_for_test(kind, message)
    # The exact class, not a subclass or a sibling, and one users can catch as the base class.
    assert type(caught.value) is expected
    assert isinstance(caught.value, errors.TracejitError)
    assert str(caught.value) == message


def test_shape_error_is_also_a_value_error():
    with pytest.raises(ValueError, match="bad shape"):
        _core._raise_for_test("shape", "bad shape")


def test_unsupported_error_is_also_a_not_implemented_error():
    with pytest.raises(NotImplementedError, match="no such op"):
        _core._raise_for_test("unsupported", "no such op")


def test_non_ascii_message_survives_translation():
    message = "Form (3,) passt nicht zu (4,) — ∑ über Achse 1"
    with pytest.raises(errors.ShapeError) as caught:
        _core._raise_for_test("shape", message)
    assert str(caught.value) == message


def test_bad_alloc_becomes_memory_error():
    with pytest.raises(MemoryError) as caught:
        _core._raise_for_test("bad_alloc", "ignored")
    assert not isinstance(caught.value, errors.TracejitError)


def test_other_std_exceptions_fall_through_to_pybind11_defaults():
    with pytest.raises(RuntimeError, match="plain runtime error") as caught:
        _core._raise_for_test("runtime", "plain runtime error")
    assert not isinstance(caught.value, errors.TracejitError)
    # std::invalid_argument -> ValueError, untouched by the translator.
    with pytest.raises(ValueError, match="unknown kind 'nope'") as caught:
        _core._raise_for_test("nope", "")
    assert not isinstance(caught.value, errors.TracejitError)


def test_a_runtime_built_from_another_abi_header_is_refused(monkeypatch):
    import hashlib

    from tracejit import _core
    from tracejit.backend_cpu import abi
    from tracejit.errors import CompileError

    assert _core.abi_sha256() == hashlib.sha256(abi.ABI.encode("utf-8")).hexdigest()
    monkeypatch.setattr(_core, "abi_sha256", lambda: "0" * 64)  # a stale build
    abi.check_runtime_abi.cache_clear()
    try:
        with pytest.raises(CompileError, match="rebuild it"):
            abi.check_runtime_abi()
    finally:
        abi.check_runtime_abi.cache_clear()
