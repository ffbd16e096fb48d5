"""Compiled first- and second-order VJPs of the structured primitives (linear algebra, FFT,
sorting) and the tnp functions built on them, on the test device, against the eager VJP and
central finite differences in float64 (`check_group` of test_device_grads.py: one jitted
program per group, the projection identity per case).

The primitive list is the registry's: every host primitive (fusion class HOST, the library
calls) has a case in `_primitive_cases` or a reason in `NOT_DIFFERENTIATED`, so a new one fails
`test_every_host_primitive_has_a_gradient_case` until it has one. `test_hypothesis_draws`
checks the same cases eagerly at shapes and seeds hypothesis draws.

Multi-result primitives are checked through gauge-invariant functions of their results
(u * u for singular vectors, whose signs are arbitrary), their inputs made well conditioned:
eigenvalues and singular values apart, matrices far from singular, sort keys distinct.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_autodiff import check_vjp
from test_device_grads import Case, check_group, second_order

import tracejit.numpy as tnp
from tracejit import lax
from tracejit.ir.primitives import HOST, PRIMITIVES

la, fft = tnp.linalg, tnp.fft

NOT_DIFFERENTIATED = {
    "argsort": "an integer permutation: no cotangent",
    "searchsorted": "integer positions: no cotangent",
    "debug_print": "returns nothing",
    "custom_vjp_call": "the user's own VJP (tests/backend/test_custom_vjp*.py)",
    **dict.fromkeys(
        ("psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "axis_index"),
        "a collective: its VJP runs across processes (tests/backend/test_distributed.py)",
    ),
}


def _flat(*arrays):
    return tnp.concatenate([tnp.ravel(a) for a in arrays])


def _parts(z):
    return _flat(tnp.real(z), tnp.imag(z))


def _sym(a):
    return (a + tnp.swapaxes(a, -1, -2)) / 2  # eigh and cholesky read one triangle


def _well_conditioned(rng, shape):
    """Entries in [-0.5, 0.5] plus 2 (of either sign) on the diagonal: far from singular."""
    signs = rng.choice([-1.0, 1.0], shape[-1])
    return rng.uniform(-0.5, 0.5, shape) + 2.0 * np.eye(shape[-2], shape[-1]) * signs


def _separated(rng, batch=(), n=3):
    """Symmetric, eigenvalues about 1, 2.5, 4 (far apart: eigenvectors well defined)."""
    q, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    d = np.linspace(1.0, 4.0, n) + rng.uniform(-0.2, 0.2, batch + (n,))
    return (q * d[..., None, :]) @ np.swapaxes(q, -1, -2)


def _general(rng, n=3):
    """Non-symmetric with real distinct eigenvalues 1, 2.5, 4 (a well-conditioned basis)."""
    p = np.eye(n) + 0.3 * rng.standard_normal((n, n))
    return p @ np.diag(np.linspace(1.0, 4.0, n)) @ np.linalg.inv(p)


def _distinct(rng, shape):
    """Values at least 0.05 apart (sorting is differentiable away from ties)."""
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.1 + rng.uniform(0, 0.05, size)).reshape(shape)


def _eigh(a):
    w, v = la.eigh(_sym(a))
    return _flat(w, v * v)  # each column's sign is arbitrary


def _svd(a):
    u, s, vh = la.svd(a, full_matrices=False)
    return _flat(u * u, s, vh * vh)


def _fft2(x):
    return _parts(fft.fft2(x + 1j * x[::-1], norm="ortho"))


def _real_ffts(x):
    return _flat(
        fft.irfft(fft.rfft(x) * np.arange(1.0, 5.0), n=6), _parts(fft.rfftn(x, norm="forward"))
    )


def _ifft_hfft(x):
    return _flat(_parts(fft.ifft(x + 0.5j * x**2, norm="forward")), fft.hfft(x, n=6))


def _norms(x, ords):
    return _flat(*(la.norm(x, o) for o in ords))


def _primitive_cases(r) -> dict:
    """One case per differentiable host primitive: name -> (function, inputs)."""
    return {
        "solve": (la.solve, [_well_conditioned(r, (2, 3, 3)), r.standard_normal((2, 3, 2))]),
        "inv": (la.inv, [_well_conditioned(r, (2, 3, 3))]),
        "cholesky": (lambda a: la.cholesky(_sym(a)), [_separated(r, (2,))]),
        "det": (la.det, [_well_conditioned(r, (3, 3))]),
        "slogdet": (lambda a: la.slogdet(a)[1], [_well_conditioned(r, (2, 3, 3))]),
        "eigh": (_eigh, [_separated(r, (2,))]),
        "eigvalsh": (lambda a: la.eigvalsh(_sym(a)), [_separated(r)]),
        "eig": (lambda a: _parts(la.eig(a, enable_eigvec_derivs=True)[1]), [_general(r)]),
        "eigvals": (lambda a: _parts(la.eigvals(a)), [_general(r)]),
        "qr": (lambda a: _flat(*la.qr(a)), [_well_conditioned(r, (4, 3))]),
        "svd": (_svd, [_well_conditioned(r, (3, 4))]),
        "svdvals": (lambda a: la.svd(a, compute_uv=False), [r.standard_normal((2, 4, 3))]),
        "fft": (_fft2, [r.standard_normal((4, 6))]),
        "sort": (
            lambda x: tnp.sort(x, axis=0) * np.arange(1.0, 4.0)[:, None],
            [_distinct(r, (3, 4))],
        ),
    }


def _function_cases(r) -> dict:
    """The tnp functions of issue 12 built on those primitives: name -> (function, inputs)."""
    matrix = _well_conditioned(r, (3, 3)) + _distinct(r, (3, 3)) * 0.01  # no ties in |a_ij|
    return {
        "rfft_irfft": (_real_ffts, [r.standard_normal((3, 6))]),
        "ifft_hfft": (_ifft_hfft, [r.standard_normal((2, 4))]),
        "median": (lambda x: tnp.median(x, axis=1), [_distinct(r, (3, 5))]),
        "quantile": (
            lambda x: tnp.quantile(x, np.array([0.1, 0.5, 0.8]), axis=0),
            [_distinct(r, (7, 2))],
        ),
        "percentile": (lambda x: tnp.percentile(x, 30.0, method="midpoint"), [_distinct(r, (6,))]),
        "top_k": (lambda x: lax.top_k(x, 2)[0], [_distinct(r, (3, 5))]),
        "pinv": (la.pinv, [_well_conditioned(r, (4, 3))]),
        "lstsq": (
            lambda a, b: la.lstsq(a, b)[0],
            [_well_conditioned(r, (4, 3)), r.standard_normal((4, 2))],
        ),
        "matrix_power": (lambda a: _flat(la.matrix_power(a, 3), la.matrix_power(a, -2)), [matrix]),
        "norm_vector": (lambda x: _norms(x, (1, 2, 3, -1.5, np.inf)), [_distinct(r, (5,)) + 0.3]),
        "norm_matrix": (
            lambda a: _norms(a, ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)),
            [matrix],
        ),
    }


PRIMITIVE_CASES = sorted(_primitive_cases(np.random.default_rng(0)))


def _cases(make: Callable, seed: int) -> list[Case]:
    table = make(np.random.default_rng(seed))
    return [
        Case(n, fn, [np.asarray(a, np.float64) for a in args])
        for n, (fn, args) in sorted(table.items())
    ]


GROUPS = {"primitives": (_primitive_cases, 1), "functions": (_function_cases, 2)}


def test_every_host_primitive_has_a_gradient_case():
    host = {n for n, p in PRIMITIVES.items() if p.fusion == HOST and not n.startswith("test_")}
    covered = set(PRIMITIVE_CASES) | set(NOT_DIFFERENTIATED)
    assert host == covered, f"no case: {sorted(host - covered)}; not host: {sorted(covered - host)}"


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_compiled_vjp_matches_eager_and_finite_differences(group, device):
    check_group(_cases(*GROUPS[group]), device)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_compiled_second_order_vjp(group, device):
    check_group(second_order(_cases(*GROUPS[group])), device)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), name=st.sampled_from(PRIMITIVE_CASES))
def test_hypothesis_draws(seed, name):
    """Eagerly, first and second order, at seeds hypothesis draws (the inputs' values)."""
    fn, args = _primitive_cases(np.random.default_rng(seed))[name]
    check_vjp(fn, [np.asarray(a, np.float64) for a in args], seed, order2=True)
