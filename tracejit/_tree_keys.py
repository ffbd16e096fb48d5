"""Key paths into pytrees, as `jax.tree_util`'s: one entry per step from the root to a leaf
(`SequenceKey` into a tuple or list, `DictKey` into a dict, `GetAttrKey` into a namedtuple,
`FlattenedIndexKey` into a registered class's children) and `keystr` to print them.

>>> keystr((DictKey("params"), SequenceKey(0), GetAttrKey("w")))
"['params'][0].w"
>>> keystr((DictKey("params"), SequenceKey(0)), simple=True, separator="/")
'params/0'
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass


@dataclass(frozen=True)
class SequenceKey:
    """The `idx`-th child of a tuple or list."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclass(frozen=True)
class DictKey:
    """The child under `key` of a dict, OrderedDict or defaultdict."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclass(frozen=True)
class GetAttrKey:
    """The field `name` of a namedtuple."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclass(frozen=True)
class FlattenedIndexKey:
    """The `key`-th child of a registered node type."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey
KeyPath = tuple  # of KeyEntry, root first

_SIMPLE = {SequenceKey: "idx", DictKey: "key", GetAttrKey: "name", FlattenedIndexKey: "key"}


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """The key path as text: `['a'][0].b` (each entry's `str`), or with `simple=True` the bare
    keys (`a`, `0`, `b`) joined by `separator`, as `jax.tree_util.keystr`."""
    if simple:
        return separator.join(str(getattr(k, _SIMPLE[type(k)])) for k in keys)
    return separator.join(str(k) for k in keys)
