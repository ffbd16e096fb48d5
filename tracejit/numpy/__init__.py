"""tracejit.numpy: NumPy-named functions that trace under `jit` and run eagerly otherwise.

>>> import numpy as np, tracejit.numpy as tnp
>>> tnp.exp(np.zeros(2, np.float32))
array([1., 1.], dtype=float32)
"""

from tracejit.numpy._core import asarray, broadcast_shapes, cast  # noqa: F401
from tracejit.numpy._creation import *
from tracejit.numpy._elementwise import *
from tracejit.numpy._indexing import *
from tracejit.numpy._join import *
from tracejit.numpy._linalg import *
from tracejit.numpy._reductions import *
from tracejit.numpy._shape import *
from tracejit.tracer import methods as _methods  # noqa: F401  (Tracer operators)

bool_ = bool
float32, float64, int32, int64 = "float32", "float64", "int32", "int64"
