"""NumPy's thirteen quantile methods (Hyndman and Fan's nine and four of its own), as NumPy
computes them, at trace time: q is concrete, so the positions and weights are constants.

`positions(method, n, q)` gives, for sorted rows of length n, either the one position to read
(the discrete methods) or the two positions and the weight of NumPy's `_lerp` between them.
Each follows numpy/lib/_function_base_impl.py exactly (its `_QuantileMethods` table,
`_get_indexes`, `_get_gamma`), so the values are NumPy's bit for bit, including its quirks:
"linear" at an integer position still reads the next value with weight 0, so the median of
[1, 2, inf] is NaN (0 * inf), as `np.quantile` gives.

>>> positions("hazen", 4, np.array([0.5]))
(array([1]), array([2]), array([0.5]))
>>> positions("inverted_cdf", 4, np.array([0.5, 0.6]))
(array([1, 2]), None, None)
"""

from __future__ import annotations

import numpy as np


def _virtual(n, q, alpha: float, beta: float):
    return n * q + (alpha + q * (1 - alpha - beta)) - 1


def _to_boundaries(index, take_previous):
    """NumPy's discrete rule: the previous or the next order statistic, never below 0."""
    previous = np.floor(index)
    gamma = index - previous
    chosen = np.where(take_previous(gamma, index), previous, previous + 1).astype(np.int64)
    return np.maximum(chosen, 0)


DISCRETE = {
    "lower": lambda n, q: np.floor((n - 1) * q),
    "higher": lambda n, q: np.ceil((n - 1) * q),
    "nearest": lambda n, q: np.around((n - 1) * q),  # half to even
    "inverted_cdf": lambda n, q: _to_boundaries(n * q - 1, lambda g, _: g == 0),
    "closest_observation": lambda n, q: _to_boundaries(
        n * q - 1 - 0.5, lambda g, i: (g == 0) & (np.floor(i) % 2 == 1)
    ),
}
CONTINUOUS = {
    "linear": lambda n, q: (n - 1) * q,
    "averaged_inverted_cdf": lambda n, q: n * q - 1,
    "interpolated_inverted_cdf": lambda n, q: _virtual(n, q, 0, 1),
    "hazen": lambda n, q: _virtual(n, q, 0.5, 0.5),
    "weibull": lambda n, q: _virtual(n, q, 0, 0),
    "median_unbiased": lambda n, q: _virtual(n, q, 1 / 3.0, 1 / 3.0),
    "normal_unbiased": lambda n, q: _virtual(n, q, 3 / 8.0, 3 / 8.0),
    "midpoint": lambda n, q: 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q)),
}
_FIX_GAMMA = {
    "averaged_inverted_cdf": lambda gamma, _: np.where(gamma == 0, 0.5, 1.0),
    "midpoint": lambda gamma, index: np.where(index % 1 == 0, 0.0, 0.5),
}
METHODS = tuple(DISCRETE) + tuple(CONTINUOUS)


def integer_positions(method: str, n: int, q) -> bool:
    """Whether NumPy's positions for an integer-array `q` stay integers (its result then
    keeps integer data's dtype; a Python int q is weak and gives float positions)."""
    if type(q) is int or np.asarray(q).dtype.kind not in "iu" or method not in CONTINUOUS:
        return False
    return np.asarray(CONTINUOUS[method](n, np.asarray(q))).dtype.kind in "iu"


def positions(method: str, n: int, q: np.ndarray):
    """(previous, next, weight) arrays of q's shape for sorted rows of length `n` (n >= 1),
    computed in q's dtype (a float32 q: float32 positions, as NumPy's); next and weight None
    for a discrete method, and for "linear" at integer q (NumPy reads those directly)."""
    if method in DISCRETE or (method == "linear" and q.dtype.kind in "iu"):
        if method == "linear":
            return np.array((n - 1) * q, np.int64), None, None
        return np.array(DISCRETE[method](n, q), np.int64), None, None
    index = np.asarray(CONTINUOUS[method](n, q))
    if index.dtype.kind != "f":
        index = index.astype(np.float64)
    previous = np.floor(index)
    gamma = index - previous  # before the clipping below, which makes both ends one value
    previous = np.array(previous, np.int64)  # (an array even for a 0-d q)
    following = np.array(previous + 1)
    above, below = index >= n - 1, index < 0
    previous[above], following[above] = n - 1, n - 1
    previous[below], following[below] = 0, 0
    fix = _FIX_GAMMA.get(method)
    weight = gamma if fix is None else fix(gamma, index).astype(index.dtype)
    return previous, following, weight


__all__ = ["CONTINUOUS", "DISCRETE", "METHODS", "integer_positions", "positions"]
