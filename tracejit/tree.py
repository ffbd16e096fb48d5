"""`tracejit.tree`, as `jax.tree`: the pytree functions under their short names
(`tj.tree.map` is `tj.tree_util.tree_map`, `tj.tree.leaves` is `tj.tree_util.tree_leaves`).

>>> import tracejit as tj
>>> tj.tree.map(lambda x: x + 1, {"a": 1, "b": (2, None)})
{'a': 2, 'b': (3, None)}
>>> tj.tree.reduce(max, [3, (7, 5)]), tj.tree.all([1, (True, None)])
(7, True)
"""

from tracejit._tree_classes import static
from tracejit._tree_ops import tree_broadcast as broadcast
from tracejit._tree_ops import tree_reduce_associative as reduce_associative
from tracejit._tree_ops import tree_transpose as transpose

# (`all`, `map` and `reduce` shadow the builtins only inside this module, as in jax.tree)
from tracejit.pytree import tree_all as all
from tracejit.pytree import tree_flatten as flatten
from tracejit.pytree import tree_flatten_with_path as flatten_with_path
from tracejit.pytree import tree_leaves as leaves
from tracejit.pytree import tree_leaves_with_path as leaves_with_path
from tracejit.pytree import tree_map as map
from tracejit.pytree import tree_map_with_path as map_with_path
from tracejit.pytree import tree_reduce as reduce
from tracejit.pytree import tree_structure as structure
from tracejit.pytree import tree_unflatten as unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]
