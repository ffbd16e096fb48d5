"""Structured control flow with the names and semantics of `jax.lax`.

`scan`, `fori_loop`, `while_loop`, `cond`, `switch`, `map` and `select_n` (and `top_k`,
`dynamic_slice`, `associative_scan`, `bitcast_convert_type`, the collectives). Each loop or
branch is one IR node whose bodies are regions (closed sub-graphs, `ir/regions.py`): traced
once, compiled as a loop (not unrolled), differentiable (`scan`, `fori_loop` with static
bounds, `cond`, `switch`; reverse mode of `while_loop` raises UnsupportedError).

>>> import numpy as np, tracejit as tj
>>> from tracejit import lax
>>> def cumprod(xs):
...     return lax.scan(lambda c, x: (c * x, c * x), np.float64(1.0), xs)[1]
>>> tj.jit(cumprod)(np.array([1.0, 2.0, 3.0]))
array([1., 2., 6.])
"""

from ._associative_scan import associative_scan
from ._bitcast import bitcast_convert_type
from ._cond import cond, select_n, switch
from ._scan import map, scan
from ._slicing import dynamic_slice, dynamic_update_slice, stop_gradient
from ._top_k import top_k
from ._while import fori_loop, while_loop
from .parallel import all_gather, axis_index, pmax, pmean, pmin, ppermute, psum, psum_scatter

__all__ = ["cond", "fori_loop", "map", "scan", "select_n", "switch", "while_loop"]
__all__ += ["associative_scan", "dynamic_slice", "dynamic_update_slice", "stop_gradient", "top_k"]
__all__ += ["all_gather", "axis_index", "pmax", "pmean", "pmin", "ppermute", "psum", "psum_scatter"]
__all__ += ["bitcast_convert_type"]
