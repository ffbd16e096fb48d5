"""`tracejit.tree_util`, as `jax.tree_util`: the pytree functions under the module name JAX
users reach for (the same functions are also top-level: `tj.tree_map` is
`tj.tree_util.tree_map`).

>>> import tracejit as tj
>>> tj.tree_util.tree_map(lambda x: 2 * x, {"b": (2, None), "w": 1})
{'b': (4, None), 'w': 2}
"""

from tracejit._tree_classes import (
    Partial,
    register_dataclass,
    register_pytree_node_class,
    register_pytree_with_keys_class,
    register_static,
)
from tracejit._tree_def import PyTreeDef
from tracejit._tree_keys import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    SequenceKey,
    keystr,
)
from tracejit._tree_ops import (
    all_leaves,
    flatten_one_level,
    flatten_one_level_with_keys,
    is_tree_node,
    tree_broadcast,
    tree_reduce_associative,
    tree_transpose,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)
from tracejit.pytree import (
    register_pytree_node,
    register_pytree_with_keys,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_unflatten,
)

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]
