"""Linear algebra steps in float32/float64/complex64/complex128: a drawer and its bounds.

Each step takes a new square input A (n <= 5, maybe a batch of 2; ordinary values, no
specials) and computes solve, inv, det, slogdet, cholesky of A A^H + n I, |Q| and |R| of
qr, eigh's eigenvalues and |eigenvectors| of A + A^H, or svd's singular values. The
decompositions are unique only up to signs, or unit-modulus phases when complex (|.| removes
them) and, for eigenvectors, only where eigenvalues are apart. Complex arithmetic rounds a
product within sqrt(2) u more than real arithmetic: the complex bounds take twice the
backward error, and slogdet's sign (a phase) moves by at most the determinant's relative
error.

Bounds, per matrix, from backward stability (Higham, "Accuracy and Stability of Numerical
Algorithms", 2nd ed.): LU with partial pivoting, Householder QR, Cholesky and the symmetric
eigen/SVD solvers have backward error ||dA|| <= c n u ||A|| (c = BACKWARD_C covers LU's
growth factor, at most 2^(n-1) = 16 here, and the constants of 3n); the forward error is
then at most kappa(A) times that for solve/inv/qr/cholesky (relative to the solution's
norm), sqrt(n) kappa for det (relative) and slogdet (absolute), ||dA|| for eigenvalues and
singular values (Weyl), and ||dA|| / gap for an eigenvector (Davis-Kahan). A matrix whose
bound reaches ILL (kappa too large for the dtype) is undecided. Two conforming
implementations differ by at most twice the bound, which is what _fuzz_check allows.
"""

from __future__ import annotations

import numpy as np
from _fuzz_bounds import TINY, Shadow, finish, unit_roundoff
from _fuzz_ops import Pool, Step
from hypothesis import strategies as st

BACKWARD_C = 50
ILL = 0.1
KINDS = ("solve", "inv", "det", "slogdet0", "slogdet1", "cholesky", "qr_q", "qr_r")
KINDS += ("eigvalsh", "eigvech", "svdvals", "eigh_res", "svd_res", "qr_res")
# the decompositions' own residuals: ||M V - V diag(w)|| + ||V^H V - I|| (eigh),
# ||A - U S Vh|| + ||U^H U - I|| (svd), ||A - Q R|| + ||Q^H Q - I|| (qr), per matrix: every
# sign and phase of the vectors counts, which |.| above does not see
_GRAM = "np.linalg.norm(H(q) @ q - np.eye(q.shape[-1]), axis=(-2, -1))"
_FRO = "np.linalg.norm({}, axis=(-2, -1))"
TEXTS = {
    "solve": "np.linalg.solve({0}, {1})",
    "inv": "np.linalg.inv({0})",
    "det": "np.linalg.det({0})",
    "slogdet0": "np.linalg.slogdet({0})[0]",
    "slogdet1": "np.linalg.slogdet({0})[1]",
    "cholesky": "np.linalg.cholesky({0} @ H({0}) + N * np.eye(N, dtype=D))",
    "qr_q": "np.abs(np.linalg.qr({0})[0])",
    "qr_r": "np.abs(np.linalg.qr({0})[1])",
    "eigvalsh": "np.linalg.eigh({0} + H({0}))[0]",
    "eigvech": "np.abs(np.linalg.eigh({0} + H({0}))[1])",
    "svdvals": "np.linalg.svd({0}, compute_uv=False)",
    "eigh_res": "(lambda m, w, q: "
    + _FRO.format("m @ q - q * w[..., np.newaxis, :]")
    + " + "
    + _GRAM
    + ")({0} + H({0}), *np.linalg.eigh({0} + H({0})))",
    "svd_res": "(lambda a, q, s, vh: "
    + _FRO.format("a - (q * s[..., np.newaxis, :]) @ vh")
    + " + "
    + _GRAM
    + ")({0}, *np.linalg.svd({0}, full_matrices=False))",
    "qr_res": "(lambda a, q, r: "
    + _FRO.format("a - q @ r")
    + " + "
    + _GRAM
    + ")({0}, *np.linalg.qr({0}))",
}


def _guarded(fn):
    """NumPy's `fn`, with NaNs for each matrix of the stack where it raises for a singular
    one (compiled code cannot raise: such a matrix is undecided, its kappa is infinite; the
    others keep their values, as tracejit's do)."""

    def call(a, *rest):
        try:
            return fn(a, *rest)
        except np.linalg.LinAlgError:
            if a.ndim == 2:
                return np.full_like(fn(np.eye(a.shape[-1], dtype=a.dtype), *rest), np.nan)
        outs = [call(a[i], *(r[i] if r.ndim == a.ndim else r for r in rest))
                for i in np.ndindex(a.shape[:-2])]  # fmt: skip
        return np.stack(outs).reshape(a.shape[:-2] + outs[0].shape)

    return staticmethod(call)


class NumpyLinalg:
    """The oracles of solve and inv (F.linalg on the NumPy side)."""

    solve = _guarded(np.linalg.solve)
    inv = _guarded(np.linalg.inv)


def linalg(draw, pool: Pool) -> Step | None:
    n = draw(st.integers(1, 5))
    batch = draw(st.sampled_from([(), (), (2,)]))
    dtype = draw(st.sampled_from(["float32", "float64", "complex64", "complex128"]))
    a = pool.add_input((*batch, n, n), dtype, special=False)
    dtype = str(pool.dtype(a))  # a gradient program's pool makes every input float64
    kind = draw(st.sampled_from(KINDS))
    # H(x): the conjugate transpose of the last two axes (the transpose of a real matrix)
    h = "np.conj(np.swapaxes({}, -1, -2))" if dtype.startswith("c") else "np.swapaxes({}, -1, -2)"
    text = TEXTS[kind].replace("H({0})", h.format("{0}")).replace("H(q)", h.format("q"))
    text = text.replace("N", str(n)).replace("D", f"np.{dtype}")
    oracle = text.replace("np.linalg.", "F.linalg.") if kind in ("solve", "inv") else None
    if kind != "solve":
        return Step(text, (a,), "linalg", (kind,), oracle)
    b_shape = draw(st.sampled_from([(n,), (n, draw(st.integers(1, 3))), (*batch, n, 2)]))
    b = pool.add_input(b_shape, dtype, special=False)
    return Step(text, (a, b), "linalg", (kind,), oracle)


def _norm2(m):
    return np.linalg.norm(m, 2, axis=(-2, -1)) if m.size else np.zeros(m.shape[:-2])


def _per_matrix(err, out, kind):
    """A per-matrix bound (batch shape) broadcast over the matrix's output elements."""
    trailing = {"det": 0, "slogdet0": 0, "slogdet1": 0, "eigvalsh": 1, "svdvals": 1}
    trailing.update(eigh_res=0, svd_res=0, qr_res=0)
    k = trailing.get(kind, 2)
    if kind == "solve":
        k = out.ndim - err.ndim
    return np.broadcast_to(err.reshape(err.shape + (1,) * k), out.shape)


def _matrix(kind, a64):
    h = np.conj(np.swapaxes(a64, -1, -2))
    if kind == "cholesky":
        return a64 @ h + a64.shape[-1] * np.eye(a64.shape[-1])
    if kind.startswith("eig"):
        return a64 + h
    return a64


def _cond(m):
    """kappa_2 of each matrix: inf where it cannot be computed (an entry of A A^H that
    overflowed: that matrix is undecided)."""
    if not m.size:
        return np.ones(m.shape[:-2])
    finite = np.isfinite(m).all(axis=(-2, -1))
    safe = np.where(finite[..., None, None], m, np.eye(m.shape[-1]))
    return np.where(finite, np.linalg.cond(safe), np.inf)


def linalg_rule(out, args: list[Shadow], kind: str) -> Shadow:
    a = args[0]
    n = a.value.shape[-1]
    cplx = a.value.dtype.kind == "c"
    u = unit_roundoff(a.value.real.dtype)
    m = _matrix(kind, a.value.astype(np.complex128 if cplx else np.float64))
    with np.errstate(all="ignore"):
        kappa = _cond(m)
        back = BACKWARD_C * n * u * (2 if cplx else 1)  # relative backward error
        if kind == "cholesky":  # both sides round A A^T + n I: n u relative more
            back = back + n * u
        err, ill = _bound(kind, out, m, back, kappa, args)
    if kind not in ("eigvalsh", "svdvals"):  # Weyl's bound needs no condition number
        ill = ill | ~np.isfinite(kappa)
    unk = _per_matrix(ill, out, kind)
    err = np.maximum(_per_matrix(err, out, kind), TINY)
    return finish(out, np.where(unk, 0.0, err), unk)


def _bound(kind, out, m, back, kappa, args):
    """(per-matrix elementwise bound, per-matrix undecided)."""
    n = m.shape[-1]
    norm = _norm2(m)
    out64 = out.astype(np.complex128 if out.dtype.kind == "c" else np.float64)
    out64 = np.where(np.isfinite(out64), out64, 0.0)  # NaN of a singular matrix: undecided
    if kind in ("eigvalsh", "svdvals"):
        return back * norm, np.zeros(norm.shape, bool)
    if kind.endswith("_res"):  # both residuals are within c n u (||M|| + 1) of 0
        return back * (norm + 1), np.zeros(norm.shape, bool)
    if kind == "det":
        rel = np.sqrt(n) * kappa * back
        return rel * np.abs(out64), rel >= ILL
    if kind.startswith("slogdet"):
        rel = np.sqrt(n) * kappa * back
        if kind == "slogdet0":  # a real sign is exact; a complex one (a phase) moves by rel
            return (rel if out.dtype.kind == "c" else np.zeros_like(rel)), rel >= ILL
        return rel, rel >= ILL
    if kind == "eigvech":
        w = np.linalg.eigvalsh(m)
        gaps = np.abs(w[..., :, None] - w[..., np.newaxis, :]) + np.where(np.eye(n), np.inf, 0)
        gap = np.min(gaps, axis=(-2, -1)) if n > 1 else np.full(m.shape[:-2], np.inf)
        bound = 2 * back * norm / gap  # a unit vector moves by <= sqrt(2) sin(theta)
        return bound, bound >= ILL
    rel = kappa * back
    if kind == "solve":  # ||x - x'|| <= rel ||x||: the norm of all solutions bounds each
        return rel * np.sqrt(np.sum(np.abs(out64) ** 2)), rel >= ILL
    # QR's perturbation (Sun): ||dQ||_F, ||dR|| / ||A|| within sqrt(2) kappa ||dA|| / ||A||
    scale = {"inv": _norm2(out64), "qr_q": 2 * np.ones_like(norm), "qr_r": 2 * norm}
    scale = scale.get(kind, norm)
    if kind == "cholesky":
        scale = np.sqrt(norm)
    return rel * scale, rel >= ILL
