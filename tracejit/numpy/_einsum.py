"""`einsum` over the one `matmul` primitive: operands are contracted left to right.

Subscripts may use `...` (broadcast leading axes, as in NumPy) and may be given in NumPy's
operand-list form `einsum(a, [0, 1], b, [1, 2], [0, 2])`.
"""

from __future__ import annotations

import math
import string

import numpy as np

from tracejit.errors import ShapeError, TracejitValueError
from tracejit.numpy._core import broadcast_to, cast, promote, shape_of
from tracejit.numpy._linalg import _mask_diagonal, _mm, _reshape, _sum, _transpose
from tracejit.tracer.core import bind

# ---------------------------------------------------------------- einsum


def einsum(subscripts, *operands, optimize=None, dtype=None):
    """`np.einsum` with explicit (`'ij,jk->ik'`) or implicit (`'ij,jk'`) output, any number of
    operands (contracted left to right), repeated indices (`'ii->i'`), `...` for broadcast
    leading axes, size-1 broadcasting, and the operand-list form. `optimize` is ignored.

    >>> import numpy as np, tracejit.numpy as tnp
    >>> tnp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((3, 4))).shape
    (2, 4)
    >>> tnp.einsum("...ij,...j->...i", np.ones((5, 2, 3)), np.ones(3)).shape
    (5, 2)
    >>> tnp.einsum(np.ones((2, 3)), [0, 1], np.ones(3), [1]).shape
    (2,)
    """
    if not isinstance(subscripts, str):
        subscripts, operands = _from_operand_list(subscripts, operands)
    xs = list(promote(*operands))
    if dtype is not None:
        xs = [cast(x, dtype) for x in xs]
    subscripts = _expand_ellipsis(subscripts, [len(shape_of(x)) for x in xs])
    ins, out = _parse_einsum(subscripts, len(xs))
    sizes = _label_sizes(subscripts, ins, xs)
    xs = [broadcast_to(x, [sizes[c] for c in lab]) for x, lab in zip(xs, ins)]
    ops = [_diagonals(x, list(lab), subscripts) for x, lab in zip(xs, ins)]
    for i, (x, lab) in enumerate(ops):  # sum out labels no other operand or the output needs
        needed = set(out).union(*(set(lb) for _, lb in ops[:i] + ops[i + 1 :]))
        ops[i] = _sum_labels(x, lab, needed)
    x, lab = ops[0]
    for j, (y, lab_y) in enumerate(ops[1:], start=1):
        keep = set(out).union(*(set(lb) for _, lb in ops[j + 1 :]))
        x, lab = _contract_pair(x, lab, y, lab_y, keep)
    x, lab = _sum_labels(x, lab, set(out))
    return _transpose(x, [lab.index(c) for c in out])


_LETTERS = string.ascii_letters


def _sublist(labels) -> str:
    out = []
    for s in labels:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, (int, np.integer)) and 0 <= s < len(_LETTERS):
            out.append(_LETTERS[int(s)])
        else:
            raise TracejitValueError(f"einsum: subscripts in the operand-list form must be ints in "
                             f"[0, {len(_LETTERS)}) or Ellipsis, got {s!r}")  # fmt: skip
    return "".join(out)


def _from_operand_list(first, rest) -> tuple[str, list]:
    """`(a, [0, 1], b, [1, 2], [0, 2])` -> ("ab,bc->ac", [a, b])."""
    args = [first, *rest]
    out = None
    if len(args) % 2:
        out = args.pop()
    operands, subs = args[0::2], args[1::2]
    spec = ",".join(_sublist(s) for s in subs)
    if out is not None:
        spec += "->" + _sublist(out)
    return spec, operands


def _expand_ellipsis(subscripts: str, ndims: list[int]) -> str:
    """Replace each `...` by letters for the broadcast axes it stands for (right-aligned)."""
    spec = subscripts.replace(" ", "")
    if "." not in spec:
        return spec
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise TracejitValueError(f"einsum: {subscripts!r} names {len(ins)} operands but "
                         f"{len(ndims)} were given")  # fmt: skip
    free = [c for c in _LETTERS if c not in spec]
    widths = []
    for lab, nd in zip(ins, ndims):
        if "." in lab and (lab.count("...") != 1 or lab.count(".") != 3):
            raise TracejitValueError(f"einsum: invalid ellipsis in {subscripts!r}")
        widths.append(nd - len(lab.replace("...", "")) if "..." in lab else 0)
    if min(widths) < 0:
        raise ShapeError(f"einsum: an operand of {subscripts!r} has fewer axes than labels")
    width = max(widths)
    ell = "".join(free[:width])
    ins = [lab.replace("...", ell[width - w :]) for lab, w in zip(ins, widths)]
    if arrow:
        out = out.replace("...", ell)
    else:
        letters = "".join(lab.replace("...", "") for lab in lhs.split(","))
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return ",".join(ins) + "->" + out


def _parse_einsum(subscripts: str, n_operands: int) -> tuple[list[str], str]:
    spec = subscripts.replace(" ", "")
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    if len(ins) != n_operands:
        raise TracejitValueError(
            f"einsum: {subscripts!r} names {len(ins)} operands but {n_operands} were given"
        )
    letters = "".join(ins)
    if not all(c.isalpha() for c in letters + out) or "->" in out:
        raise TracejitValueError(f"einsum: {subscripts!r} is not a valid subscript string")
    if not arrow:
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(set(out)) != len(out) or any(c not in letters for c in out):
        raise TracejitValueError(
            f"einsum: the output {out!r} of {subscripts!r} repeats a label or names one no "
            "operand has"
        )
    return ins, out


def _label_sizes(subscripts, ins, xs) -> dict[str, int]:
    """The size of each label; size-1 axes broadcast against the others, as in NumPy."""
    seen: dict[str, set[int]] = {}
    for lab, x in zip(ins, xs):
        shape = tuple(shape_of(x))
        if len(lab) != len(shape):
            raise ShapeError(
                f"einsum: operand {lab!r} of {subscripts!r} has {len(lab)} labels but shape {shape}"
            )
        for c, d in zip(lab, shape):
            seen.setdefault(c, set()).add(d)
    sizes = {}
    for c, dims in seen.items():
        other = dims - {1}
        if len(other) > 1:
            shapes = ", ".join(str(tuple(shape_of(y))) for y in xs)
            raise ShapeError(
                f"einsum: label {c!r} of {subscripts!r} has sizes {sorted(other)} "
                f"(operand shapes {shapes})"
            )
        sizes[c] = other.pop() if other else 1
    return sizes


def _diagonals(x, lab: list[str], subscripts: str):
    """Take the diagonal for each label repeated within one operand (`'ii->i'`)."""
    while len(set(lab)) != len(lab):
        c = next(c for c in lab if lab.count(c) > 1)
        p = lab.index(c)
        q = lab.index(c, p + 1)
        rest = [i for i in range(len(lab)) if i not in (p, q)]
        x = _mask_diagonal(_transpose(x, rest + [p, q]), 0)
        x = _sum(x, (len(lab) - 1,))
        lab = [lab[i] for i in rest] + [c]
    return x, lab


def _sum_labels(x, lab: list[str], needed: set[str]):
    axes = [i for i, c in enumerate(lab) if c not in needed]
    return _sum(x, axes), [c for c in lab if c in needed]


def _contract_pair(a, la: list[str], b, lb: list[str], keep: set[str]):
    """Multiply two operands and sum the labels they share that are not in `keep`."""
    size = dict(zip(la, shape_of(a))) | dict(zip(lb, shape_of(b)))
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    fa = [c for c in la if c not in lb]
    fb = [c for c in lb if c not in la]
    out_lab = batch + fa + fb
    out_shape = [size[c] for c in out_lab]
    if not summed:  # an outer or elementwise product: broadcast and multiply
        a2 = _reshape(
            _transpose(a, [la.index(c) for c in batch + fa]),
            out_shape[: -len(fb) or None] + [1] * len(fb),
        )
        b2 = _transpose(b, [lb.index(c) for c in batch + fb])
        b2 = _reshape(b2, [size[c] for c in batch] + [1] * len(fa) + [size[c] for c in fb])
        prim = "and" if a.dtype == np.bool_ else "mul"
        return bind(prim, broadcast_to(a2, out_shape), broadcast_to(b2, out_shape)), out_lab
    nb, m, n, k = (math.prod(size[c] for c in g) for g in (batch, fa, fb, summed))
    lead = (nb,) if batch else ()
    a2 = _reshape(_transpose(a, [la.index(c) for c in batch + fa + summed]), (*lead, m, k))
    b2 = _reshape(_transpose(b, [lb.index(c) for c in batch + summed + fb]), (*lead, k, n))
    return _reshape(_mm(a2, b2), out_shape), out_lab


__all__ = ["einsum"]
