"""`grad(..., holomorphic=True)` as JAX's: complex inputs, a complex scalar output, the
gradient df/dz (no conjugation), eagerly and compiled; clear errors otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.errors import TracejitTypeError

Z = np.array([1 + 2j, -0.5 + 0.3j, 0.2 - 1.1j])


@pytest.mark.parametrize(
    "f, df",
    [
        (lambda z: (z**3).sum(), lambda z: 3 * z**2),
        (lambda z: tnp.sin(z).sum(), np.cos),
        (lambda z: (tnp.exp(z) / (2 + z)).sum(), lambda z: np.exp(z) * (1 + z) / (2 + z) ** 2),
    ],
)
def test_gradient_is_the_complex_derivative(device, f, df):
    np.testing.assert_allclose(tj.grad(f, holomorphic=True)(Z), df(Z), rtol=1e-12)
    compiled = tj.jit(tj.grad(f, holomorphic=True), device=device)
    np.testing.assert_allclose(tj.device_get(compiled(Z)), df(Z), rtol=1e-12)
    value, grad = tj.value_and_grad(f, holomorphic=True)(Z)
    np.testing.assert_allclose(value, complex(np.asarray(f(Z))), rtol=1e-12)
    np.testing.assert_allclose(grad, df(Z), rtol=1e-12)


def test_errors_say_what_holomorphic_needs():
    with pytest.raises(TracejitTypeError, match="pass holomorphic=True"):
        tj.grad(lambda z: (z * z).sum())(Z)
    with pytest.raises(TracejitTypeError, match="scalar complex output"):
        tj.grad(lambda z: tnp.abs(z).sum(), holomorphic=True)(Z)
    with pytest.raises(TracejitTypeError, match="inputs are complex"):
        tj.grad(lambda x, z: (x * z).sum(), argnums=0, holomorphic=True)(np.ones(3), Z)
