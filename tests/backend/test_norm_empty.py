"""Matrix norms of empty matrices as NumPy: 2, 1 and inf are 0 (a max with initial 0),
'fro' and 'nuc' sums are 0, and -2, -1, -inf raise where NumPy's min has nothing to reduce."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp

SHAPES = [(0, 3), (3, 0), (0, 0), (2, 0, 3), (2, 3, 0)]
ORDS = [2, -2, "nuc", "fro", 1, -1, np.inf, -np.inf]


def _numpy(x, ord):
    try:
        return np.linalg.norm(x, ord, axis=(-2, -1))
    except ValueError:
        return None


@pytest.mark.parametrize("ord", ORDS, ids=str)
def test_matrix_norms_of_empty_matrices_match_numpy(ord, device):
    for shape in SHAPES:
        x = np.zeros(shape)
        want = _numpy(x, ord)
        if want is None:
            with pytest.raises(ValueError):
                tnp.linalg.norm(x, ord, axis=(-2, -1))
            continue
        got = tnp.linalg.norm(x, ord, axis=(-2, -1))
        np.testing.assert_array_equal(got, want, err_msg=f"{ord} {shape}")
        compiled = tj.jit(lambda x: tnp.linalg.norm(x, ord, axis=(-2, -1)), device=device)(x)
        np.testing.assert_array_equal(tj.device_get(compiled), want, err_msg=f"{ord} {shape}")
