"""tracejit.numpy: NumPy-named functions that trace under `jit` and run eagerly otherwise.

>>> import numpy as np, tracejit.numpy as tnp
>>> tnp.exp(np.zeros(2, np.float32))
array([1., 1.], dtype=float32)
"""

from tracejit.numpy._array_api_info import API_VERSION as __array_api_version__  # noqa: F401
from tracejit.numpy._array_api_info import __array_namespace_info__  # noqa: F401
from tracejit.numpy._bessel import *
from tracejit.numpy._complex import *
from tracejit.numpy._construct import *
from tracejit.numpy._core import broadcast_shapes, cast  # noqa: F401
from tracejit.numpy._creation import *
from tracejit.numpy._dtypes import *
from tracejit.numpy._einsum import *
from tracejit.numpy._elementwise import *
from tracejit.numpy._fft_module import *
from tracejit.numpy._float_bits import *
from tracejit.numpy._index_tricks import *
from tracejit.numpy._indexing import *
from tracejit.numpy._join import *
from tracejit.numpy._linalg import *
from tracejit.numpy._linalg_eig import roots  # noqa: F401  (eig, eigvals: tnp.linalg)
from tracejit.numpy._linalg_module import *
from tracejit.numpy._manip import *
from tracejit.numpy._math import *
from tracejit.numpy._misc import *
from tracejit.numpy._more import *
from tracejit.numpy._packbits import *
from tracejit.numpy._polyfit import *
from tracejit.numpy._reductions import *
from tracejit.numpy._select import *
from tracejit.numpy._shape import *
from tracejit.numpy._signal import *
from tracejit.numpy._sorting import *
from tracejit.numpy._stats import *
from tracejit.numpy._variance import *
from tracejit.numpy._vectorize import *

# isort: split
# last: installs Tracer's operators, methods and NumPy protocols, which call the above
from tracejit.numpy import _tracer_methods  # noqa: F401
