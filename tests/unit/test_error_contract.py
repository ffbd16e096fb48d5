"""One error contract: tracejit raises only `TracejitError` subclasses, each also the builtin
class users catch; each carries the user's line as a note and keeps its attributes."""

from __future__ import annotations

import ast
import builtins
import importlib
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import errors

PACKAGE = Path(tj.__file__).resolve().parent
BUILTIN_ERRORS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception)
}


def _builtin_exceptions_made(path: Path, root: Path = PACKAGE) -> list[str]:
    """`file:line name` of every builtin exception class raised or constructed in `path`,
    and `file:line assert` of every assert statement (a bare AssertionError).

    A bare `raise NotImplementedError` (no message) marks an abstract method and is allowed.
    """
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Assert):  # an AssertionError, and none at all under -O
            found.append(f"{path.relative_to(root)}:{node.lineno} assert")
            continue
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Name):
            name = node.exc.id  # `raise KeyError`
            if name == "NotImplementedError":
                continue
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id  # `raise KeyError(...)`, `err = KeyError(...)`
        else:
            continue
        if name in BUILTIN_ERRORS:
            found.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return sorted(set(found), key=lambda hit: int(hit.split(":")[1].split()[0]))


def test_no_builtin_exception_is_raised_outside_the_errors_module():
    sources = [p for p in PACKAGE.rglob("*.py") if p.name != "errors.py"]
    found = sorted({hit for path in sources for hit in _builtin_exceptions_made(path)})
    assert not found, "raise a tracejit.errors class instead:\n" + "\n".join(found)


def test_the_check_finds_every_spelling(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f(x):\n"
        "    if x:\n"
        "        raise ValueError('v')\n"
        "    err = TypeError('t')\n"
        "    raise KeyError\n"
        "def g():\n"
        "    raise errors.ShapeError('fine')\n"
        "def abstract():\n"
        "    raise NotImplementedError\n"
        "def h():\n"
        "    raise NotImplementedError('not abstract')\n"
        "    assert False\n"
    )
    found = _builtin_exceptions_made(probe, tmp_path)
    assert found == [
        "probe.py:3 ValueError",
        "probe.py:4 TypeError",
        "probe.py:5 KeyError",
        "probe.py:11 NotImplementedError",
        "probe.py:12 assert",
    ]


# The builtin class a user catches for each error class (JAX's choices where it has one).
CAUGHT_AS = [
    (errors.TracejitTypeError, TypeError),
    (errors.TracejitValueError, ValueError),
    (errors.TracejitIndexError, IndexError),
    (errors.TracejitAttributeError, AttributeError),
    (errors.TracejitKeyError, KeyError),
    (errors.ShapeError, ValueError),
    (errors.ArgumentError, TypeError),
    (errors.IntegerOverflowError, OverflowError),
    (errors.ConcretizationError, TypeError),
    (errors.UnsupportedError, NotImplementedError),
    (errors.BatchingError, NotImplementedError),
    (errors.TracerLeakError, RuntimeError),
    (errors.CompileError, RuntimeError),
    (errors.DeviceError, RuntimeError),
    (errors.DonatedArgumentError, RuntimeError),
    (errors.DistributedError, RuntimeError),
    (errors.CacheError, OSError),
    (errors.InternalError, AssertionError),
]


@pytest.mark.parametrize("cls, builtin", CAUGHT_AS, ids=lambda c: c.__name__)
def test_each_error_class_is_the_builtin_class_users_catch(cls, builtin):
    assert issubclass(cls, errors.TracejitError) and issubclass(cls, builtin)
    with pytest.raises(builtin) as caught:
        raise cls("what went wrong")
    assert caught.value.args == ("what went wrong",) and caught.value.source is not None


def test_every_tracejit_error_class_has_a_builtin_base():
    # Exception itself does not count: every class a user meets is also a specific builtin one
    specific = tuple(getattr(builtins, n) for n in BUILTIN_ERRORS - {"Exception"})
    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, Exception)]
    classes += [c for c in _defined_exception_classes() if issubclass(c, errors.TracejitError)]
    assert errors.TracejitError in classes and len(classes) > 20
    bare = sorted(
        c.__qualname__ for c in set(classes) - {errors.TracejitError} if not issubclass(c, specific)
    )
    assert not bare, f"give these a builtin base class too: {bare}"
    assert {c for c, _ in CAUGHT_AS} <= set(classes)


def test_a_cache_error_is_an_os_error_with_no_errno():
    # OSError's two-argument form would read the message as an errno: each is built from one
    err = errors.CacheError("cannot build into the cache")
    assert err.errno is None and err.args == ("cannot build into the cache",)


def test_concretizing_a_tracer_is_a_type_error_at_the_users_line():
    def f(x):
        return x if x.sum() > 0 else -x  # concretize-line

    with pytest.raises(TypeError) as caught:
        tj.make_ir(f)(np.ones(3, np.float32))
    assert isinstance(caught.value, errors.ConcretizationError)
    _where(caught.value, "# concretize-line")


def _tracejit_modules():
    for info in pkgutil.walk_packages([str(PACKAGE)], "tracejit."):
        try:
            yield importlib.import_module(info.name)
        except ImportError:  # an optional dependency (mpi4py, cupy) is missing
            continue


# Exceptions that never leave tracejit: control flow caught where it is raised.
INTERNAL = {"Invalid"}  # ir/fusion_merge.py: a group that cannot fuse; caught by fusion


def _defined_exception_classes() -> set[type]:
    """Every exception class tracejit's modules define (warnings and internal ones aside)."""
    return {
        cls
        for module in _tracejit_modules()
        for cls in vars(module).values()
        if isinstance(cls, type)
        and issubclass(cls, BaseException)
        and not issubclass(cls, Warning)
        and cls.__module__.startswith("tracejit")
        and not cls.__name__.startswith("_")
        and cls.__name__ not in INTERNAL
    }


def test_every_exception_class_of_tracejit_is_a_tracejit_error():
    defined = _defined_exception_classes()
    assert len(defined) > 15
    escaping = sorted(c.__qualname__ for c in defined if not issubclass(c, errors.TracejitError))
    assert not escaping, escaping


def _line_of(marker: str) -> int:
    """The line of this file holding `marker` (a comment on the line that raises)."""
    lines = Path(__file__).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text and "_line_of" not in text)


def _where(err: errors.TracejitError, marker: str) -> None:
    """`err` names the marked line of this file once: as `source` and as its one note."""
    expected = f"{__file__}:{_line_of(marker)} "
    assert err.source.startswith(expected), err.source
    assert err.__notes__ == [f"at {err.source}"]


def test_a_shape_error_in_traced_code_notes_the_users_line():
    def f(x):
        return tnp.reshape(x, (4, 2))  # reshape-line

    with pytest.raises(ValueError) as caught:
        tj.make_ir(f)(np.ones(6, np.float32))
    assert isinstance(caught.value, errors.ShapeError)
    assert "(6,)" in str(caught.value) and __file__ not in str(caught.value)
    _where(caught.value, "# reshape-line")


def test_a_value_error_outside_tracing_notes_the_users_line():
    with pytest.raises(ValueError) as caught:
        tj.config.memory_budget = 2.0  # budget-line
    assert isinstance(caught.value, errors.TracejitValueError)
    _where(caught.value, "# budget-line")
    # an AttributeError subclass: hasattr and getattr defaults still work
    with pytest.raises(AttributeError) as caught:
        tj.config.no_such_setting = 1
    assert isinstance(caught.value, errors.TracejitError)


class _Marked(errors.ShapeError):
    """A ShapeError with an attribute of its own, as a rule might raise it."""


def _raising(*args, **kwargs):
    err = _Marked("operands do not fit")
    err.operands = ((2, 3), (4,))
    raise err


@pytest.mark.parametrize("where", ["traced", "eager"])
def test_a_reraised_error_is_the_same_object_with_its_attributes(monkeypatch, where):
    # bind adds the user's line to errors from shape rules and re-raises them: the same
    # exception object, so its class and attributes stay (it was once rebuilt from its text)
    from tracejit.tracer import core

    if where == "traced":
        monkeypatch.setattr(core.Trace, "record", _raising)
        call = tj.make_ir(lambda x: tnp.sin(x))
    else:
        monkeypatch.setattr(core, "apply_primitive", _raising)
        call = tnp.sin
    with pytest.raises(_Marked) as caught:
        call(np.ones(3))
    assert caught.value.operands == ((2, 3), (4,))
    assert str(caught.value) == "operands do not fit"
    assert len(caught.value.__notes__) == 1 and caught.value.source is not None


def test_the_first_users_line_wins():
    err = errors.TracejitTypeError("bad")  # first-line
    assert err.add_source("elsewhere.py:1 (g)") is err
    _where(err, "# first-line")
