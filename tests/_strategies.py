"""Hypothesis strategies shared by the backend tests."""

import numpy as np
from hypothesis import strategies as st


def arrays_of(elements, dtype, shape):
    """Arrays of `dtype` and `shape` whose entries are drawn from the strategy `elements`."""
    size = int(np.prod(shape))
    return st.lists(elements, min_size=size, max_size=size).map(
        lambda xs: np.array(xs, dtype=dtype).reshape(shape)
    )
