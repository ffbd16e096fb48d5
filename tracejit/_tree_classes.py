"""Pytree node types defined by classes, as in `jax.tree_util`: `register_pytree_node_class`
(the class's own `tree_flatten`/`tree_unflatten`), `register_dataclass` (fields as children or
static metadata) and `Partial` (a `functools.partial` whose bound arguments are leaves)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

from tracejit._tree_keys import GetAttrKey
from tracejit.errors import TracejitTypeError, TracejitValueError
from tracejit.pytree import register_pytree_node, register_pytree_with_keys


def register_pytree_node_class(cls: type) -> type:
    """Register `cls` by its own methods, `obj.tree_flatten() -> (children, aux)` and the
    classmethod `cls.tree_unflatten(aux, children)`; returns `cls` (a class decorator).

    >>> import tracejit as tj
    >>> @register_pytree_node_class
    ... class Scaled:
    ...     def __init__(self, x, k): self.x, self.k = x, k
    ...     def tree_flatten(self): return (self.x,), self.k
    ...     @classmethod
    ...     def tree_unflatten(cls, k, children): return cls(children[0], k)
    >>> tj.tree_util.tree_map(lambda v: v + 1, Scaled(1, "static")).x
    2
    """
    _need_methods("register_pytree_node_class", cls, "tree_flatten")
    register_pytree_node(cls, lambda obj: obj.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type) -> type:
    """Register `cls` by its own methods, with keys: `obj.tree_flatten_with_keys() ->
    (((key, child), ...), aux)` and the classmethod `cls.tree_unflatten(aux, children)`
    (`obj.tree_flatten()`, JAX's faster flatten, is not used); returns `cls` (a decorator).

    >>> from tracejit.tree_util import keystr, tree_flatten_with_path
    >>> @register_pytree_with_keys_class
    ... class Pair:
    ...     def __init__(self, x, y): self.x, self.y = x, y
    ...     def tree_flatten_with_keys(self):
    ...         return ((GetAttrKey("x"), self.x), (GetAttrKey("y"), self.y)), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children): return cls(*children)
    >>> [keystr(p) for p, _ in tree_flatten_with_path(Pair(1, 2))[0]]
    ['.x', '.y']
    """
    _need_methods("register_pytree_with_keys_class", cls, "tree_flatten_with_keys")
    register_pytree_with_keys(cls, lambda obj: obj.tree_flatten_with_keys(), cls.tree_unflatten)
    return cls


def register_static(cls: type) -> type:
    """Register `cls` as a pytree node without children: its instances are static (part
    of the structure, so of a jitted function's cache key, as `static_argnums` would make
    them); they must be hashable. Returns `cls` (a class decorator).

    >>> from tracejit.tree_util import tree_leaves, tree_structure
    >>> @register_static
    ... class Mode(str):
    ...     pass
    >>> tree_leaves([1, Mode("add")]), tree_structure(Mode("add")).node_data()
    ([1], (<class 'tracejit._tree_classes.Mode'>, 'add'))
    """
    if getattr(cls, "__hash__", None) is None:
        raise TracejitTypeError(
            f"register_static: {getattr(cls, '__name__', cls)!r} is not hashable (it defines "
            "__eq__ without __hash__), so its instances cannot be static"
        )
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


def static(**kwargs) -> dataclasses.Field:
    """`dataclasses.field(**kwargs)` marked `static=True` in its metadata, as
    `jax.tree.static`: a static field of a `register_dataclass` class."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


def _need_methods(what: str, cls: type, flatten_name: str) -> None:
    missing = [m for m in (flatten_name, "tree_unflatten") if not hasattr(cls, m)]
    if missing:
        raise TracejitTypeError(f"{what}: {cls.__name__} has no {' or '.join(missing)} method")


def register_dataclass(
    nodetype: type,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> type:
    """Register `nodetype` by its fields, as `jax.tree_util.register_dataclass`: the
    `data_fields` are its children (key paths `.name`), the `meta_fields` its static part;
    for a dataclass both default to its `init` fields, those whose `field(metadata=...)` has
    `static=True` static; returns `nodetype` (a class decorator).

    >>> import tracejit as tj
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: float
    ...     name: str = dataclasses.field(default="dense", metadata={"static": True})
    >>> tj.tree_util.tree_map(lambda v: 2 * v, Layer(1.5))
    Layer(w=3.0, name='dense')
    """
    data, meta = _fields(nodetype, data_fields, meta_fields, drop_fields)

    def flatten_with_keys(obj):
        pairs = [(GetAttrKey(name), getattr(obj, name)) for name in data]
        return pairs, tuple(getattr(obj, name) for name in meta)

    def unflatten(aux, children):
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten)
    return nodetype


def _fields(nodetype, data_fields, meta_fields, drop_fields) -> tuple[tuple, tuple]:
    name = getattr(nodetype, "__name__", repr(nodetype))
    if (data_fields is None) != (meta_fields is None):
        raise TracejitTypeError(
            "register_dataclass: give both data_fields and meta_fields, or neither "
            f"(got data_fields={data_fields!r}, meta_fields={meta_fields!r})"
        )
    if not dataclasses.is_dataclass(nodetype):
        if data_fields is None:
            raise TracejitTypeError(
                f"register_dataclass: {name} is not a dataclass, so data_fields and "
                "meta_fields are needed"
            )
        return tuple(data_fields), tuple(meta_fields)
    init = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
    if data_fields is None:
        data_fields = [f.name for f in init if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in init if f.metadata.get("static", False)]
    missing = {f.name for f in init} ^ set(data_fields) ^ set(meta_fields)
    if missing or len({*data_fields, *meta_fields}) != len(data_fields) + len(meta_fields):
        raise TracejitValueError(
            f"register_dataclass: data_fields and meta_fields of {name} must hold each of its "
            f"init fields once (drop_fields leaves some out); these are wrong: {sorted(missing)}"
        )
    return tuple(data_fields), tuple(meta_fields)


class _Opaque:
    """A callable standing for a `functools.partial`, so that `Partial(partial(f, a), b)`
    keeps `a` in its static function (functools.partial would merge it into the leaves)."""

    def __init__(self, fn: functools.partial):
        self.fn = fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Opaque) and self.fn == other.fn

    def __hash__(self) -> int:
        return hash(self.fn)

    def __repr__(self) -> str:
        return repr(self.fn)


class Partial(functools.partial):
    """`functools.partial` as a pytree, as `jax.tree_util.Partial`: the bound positional and
    keyword arguments are its children (leaves: arrays traced when it is an argument of a
    jitted or differentiated function), the function its static part.

    >>> add_one = Partial(lambda a, b: a + b, 1)
    >>> from tracejit.pytree import tree_leaves, tree_map
    >>> tree_leaves(add_one), tree_map(lambda v: 10 * v, add_one)(2)
    ([1], 12)
    """

    def __new__(cls, func, *args, **keywords):
        if isinstance(func, functools.partial):
            func = _Opaque(func)
        return super().__new__(cls, func, *args, **keywords)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)
