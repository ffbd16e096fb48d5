"""`scaled_dot_general`: a dot_general whose operands are block-quantized first (mxfp8 or
nvfp4, `_nn_block_quant.py`) and multiplied by `scaled_matmul`, as `jax.nn`'s, with JAX's
custom VJP: each gradient is itself a quantized product of the output cotangent and the
other operand (quantized along the operand's free axes), or for nvfp4 an exact product
masked where the operand was clipped (a straight-through estimator). The VJP is traced only
when a gradient is asked, so the cotangent's config (`configs[2]`) is read only then, as in
JAX.
"""

from __future__ import annotations

import math
import operator
import string
import warnings

import ml_dtypes
import numpy as np

from tracejit import numpy as tnp
from tracejit._nn_block_quant import BlockScaleConfig, quantize
from tracejit._nn_scaled import scaled_matmul
from tracejit.custom import custom_vjp
from tracejit.errors import ArgumentError, ShapeError, TracejitTypeError
from tracejit.ir import dtypes
from tracejit.lax import stop_gradient
from tracejit.numpy._core import shape_of

_PREFERRED = (np.dtype(np.float32), np.dtype(np.float16), dtypes.canonical(ml_dtypes.bfloat16))
_FORM = "((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))"


def _axes(dims, ndim: int, what: str) -> tuple[int, ...]:
    out = tuple(operator.index(d) for d in dims)
    if len(set(out)) != len(out) or any(not 0 <= d < ndim for d in out):
        raise ShapeError(f"scaled_dot_general: {what} axes {out} for an array of rank {ndim}")
    return out


def _dimensions(dimension_numbers, lshape, rshape):
    """(lc, rc, lb, rb), checked: paired axes of equal sizes, no axis used twice."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        lc, lb = _axes(lc, len(lshape), "lhs contracting"), _axes(lb, len(lshape), "lhs batch")
        rc, rb = _axes(rc, len(rshape), "rhs contracting"), _axes(rb, len(rshape), "rhs batch")
    except (TypeError, ValueError) as e:
        if isinstance(e, ShapeError):
            raise
        raise ArgumentError(
            f"scaled_dot_general: dimension_numbers must be {_FORM}, tuples of ints; got "
            f"{dimension_numbers!r}"
        ) from None
    for left, right, what in ((lc, rc, "contracting"), (lb, rb, "batch")):
        sizes = [lshape[d] for d in left], [rshape[d] for d in right]
        if sizes[0] != sizes[1]:
            raise ShapeError(
                f"scaled_dot_general: {what} axes {left} of lhs {tuple(lshape)} and {right} "
                f"of rhs {tuple(rshape)} differ in size"
            )
    if set(lc) & set(lb) or set(rc) & set(rb):
        raise ShapeError("scaled_dot_general: an axis is both contracting and batch")
    return lc, rc, lb, rb


def _free(ndim: int, *used) -> list[int]:
    return [d for d in range(ndim) if not any(d in u for u in used)]


def _to_3d(x, contract, batch):
    """x as (batch, free, contracting), each group flattened (contracting in the order the
    dimension numbers pair them, free axes in axis order)."""
    shape = shape_of(x)
    free = _free(len(shape), contract, batch)
    sizes = [math.prod(shape[d] for d in group) for group in (batch, free, contract)]
    return tnp.reshape(tnp.transpose(x, list(batch) + free + list(contract)), tuple(sizes))


def _dot_general(lhs, rhs, dims, preferred_element_type):
    """lax.dot_general as an einsum: batch axes, then lhs's free axes, then rhs's."""
    lc, rc, lb, rb = dims
    names = iter(string.ascii_letters)
    lsub = [next(names) for _ in shape_of(lhs)]
    pair = dict(zip(rc, lc)) | dict(zip(rb, lb))
    rsub = [lsub[pair[d]] if d in pair else next(names) for d in range(len(shape_of(rhs)))]
    out = [lsub[d] for d in lb + tuple(_free(len(lsub), lc, lb))]
    out += [rsub[d] for d in _free(len(rsub), rc, rb)]
    result = tnp.einsum(f"{''.join(lsub)},{''.join(rsub)}->{''.join(out)}", lhs, rhs)
    if preferred_element_type is None:
        return result
    return tnp.astype(result, dtypes.canonical(preferred_element_type))


def _quantized_matmul(a, b, ca: BlockScaleConfig, cb: BlockScaleConfig, out_type):
    """(B, M, K) x (B, N, K) -> (B, M, N): both quantized along K, then `scaled_matmul`;
    nvfp4 operands' global scales multiplied back in float32."""
    aq, a_scales = quantize(a, ca)
    bq, b_scales = quantize(b, cb)
    global_scales = [c.global_scale for c in (ca, cb) if c.mode == "nvfp4"]
    if not global_scales:
        return scaled_matmul(aq, bq, a_scales, b_scales, out_type)
    out = scaled_matmul(aq, bq, a_scales, b_scales, np.float32)
    return tnp.astype(tnp.multiply(out, math.prod(global_scales)), out_type)


def _clip_mask(grad, x, config: BlockScaleConfig):
    """grad where |x| is within what nvfp4 represents (global scale * data max * scale
    max), 0 where quantization clipped it."""
    limit = tnp.multiply(
        tnp.multiply(config.global_scale, float(ml_dtypes.finfo(config.data_type).max)),
        float(ml_dtypes.finfo(config.scale_type).max),
    )
    return tnp.where(tnp.less_equal(tnp.absolute(x), limit), grad, 0.0)


def _pad_last(x, multiple: int):
    """x with zeros appended along its last axis up to a multiple of `multiple` (at least
    one): zeros change neither a block's scale nor the product."""
    n = shape_of(x)[-1]
    extra = max(multiple, -(-n // multiple) * multiple) - n
    return tnp.pad(x, [(0, 0), (0, 0), (0, extra)]) if extra else x


def _contract_free(x, y, cx: BlockScaleConfig, cy: BlockScaleConfig, out_type):
    """(B, M, N) x (B, K, N) -> (B, M, K) quantized along N, the operands' free axes, which
    are padded to whole blocks (JAX asserts they are whole blocks; zeros change no block's
    scale and no sum)."""
    block = math.lcm(cx.block_size, cy.block_size)
    return _quantized_matmul(_pad_last(x, block), _pad_last(y, block), cx, cy, out_type)


def _gradients(a, b, g, configs, out_type):
    """JAX's scaled_dot_bwd in (B, M, K), (B, N, K), (B, M, N) form."""
    ca, cb, cg = configs[0], configs[1], _cotangent_config(configs)
    at, bt, gt = (tnp.transpose(v, (0, 2, 1)) for v in (a, b, g))
    if cg.mode != "nvfp4":
        ga = _contract_free(g, bt, cg, cb, out_type)
        gb = _contract_free(gt, at, cg, ca, out_type)
    else:  # exact products, zeroed where the forward pass clipped the operand
        ga = tnp.astype(tnp.matmul(g, b), out_type)
        gb = tnp.astype(tnp.matmul(gt, a), out_type)
        ga = _clip_mask(ga, a, ca) if ca.mode == "nvfp4" else ga
        gb = _clip_mask(gb, b, cb) if cb.mode == "nvfp4" else gb
    return tnp.astype(ga, a.dtype), tnp.astype(gb, b.dtype)


def _scaled_dot_3d(a, b, configs, out_type):
    @custom_vjp
    def product(a, b):
        return _quantized_matmul(a, b, configs[0], configs[1], out_type)

    product.defvjp(
        lambda a, b: (product(a, b), (a, b)),
        lambda res, g: _gradients(*res, g, configs, out_type),
    )
    return product(a, b)


def _config(c, i: int) -> BlockScaleConfig:
    if not isinstance(c, BlockScaleConfig):
        raise TracejitTypeError(
            f"scaled_dot_general: configs[{i}] is a {type(c).__name__}; use "
            "tracejit.nn.get_scaled_dot_general_config"
        )
    return c


def _cotangent_config(configs) -> BlockScaleConfig:
    """configs[2], the output cotangent's, which only the gradient reads (as in JAX)."""
    if len(configs) < 3:
        raise ArgumentError(
            "scaled_dot_general: the gradient quantizes the output's cotangent with "
            f"configs[2], and configs holds {len(configs)} (lhs's and rhs's); pass "
            "[config] * 3 to differentiate (JAX fails with an IndexError)"
        )
    return _config(configs[2], 2)


def _checked_configs(configs) -> list:
    """lhs's and rhs's configs checked (nvfp4 global scales as constants of the product),
    then the cotangent's as given (checked by the gradient); later entries are ignored, as
    JAX ignores them."""
    if not isinstance(configs, (list, tuple)) or len(configs) < 2:
        raise ArgumentError(
            "scaled_dot_general: configs must be a list of BlockScaleConfig: lhs's, rhs's "
            "and the cotangent's (read only when a gradient is taken, so two are enough "
            f"without one, as in JAX; [config] * 3 for one mode); got {configs!r}"
        )
    out = []
    for i, c in enumerate(configs[:2]):
        c = _config(c, i)
        if c.mode == "nvfp4" and c.global_scale is not None:  # a constant of the product
            c = BlockScaleConfig(**{**vars(c), "global_scale": stop_gradient(c.global_scale)})
        out.append(c)
    return out + list(configs[2:3])


def scaled_dot_general(
    lhs, rhs, dimension_numbers, preferred_element_type=np.float32, configs=None,
    implementation=None,
):  # fmt: skip
    """`lax.dot_general` of block-quantized operands, as `jax.nn.scaled_dot_general`:
    with `configs` (from `get_scaled_dot_general_config`, for lhs, rhs and the output's
    cotangent, which only a gradient reads: two suffice without one, as in JAX) each
    operand is flattened to (batch, free, contracting), quantized in blocks along its
    contracting axes and multiplied by `scaled_matmul`; without, a plain dot_general.
    `preferred_element_type` (float32, float16 or bfloat16 with configs) is the result's
    dtype. The result holds the batch axes, then lhs's free axes, then rhs's.
    `implementation` is ignored (deprecated in JAX, which warns the same way).

    >>> import numpy as np, tracejit as tj
    >>> x = np.full((2, 32), 1.5, np.float32)
    >>> cfg = tj.nn.get_scaled_dot_general_config("mxfp8")
    >>> tj.nn.scaled_dot_general(x, x, (((1,), (1,)), ((), ())), configs=[cfg] * 3)
    array([[72., 72.],
           [72., 72.]], dtype=float32)
    """
    if implementation is not None:
        warnings.warn(
            "scaled_dot_general: `implementation` is ignored (as in JAX, where it is deprecated)",
            DeprecationWarning,
            stacklevel=2,
        )
    lhs, rhs = tnp.asarray(lhs), tnp.asarray(rhs)
    dims = _dimensions(dimension_numbers, shape_of(lhs), shape_of(rhs))
    if configs is None:
        return _dot_general(lhs, rhs, dims, preferred_element_type)
    pet = preferred_element_type
    out_type = None if pet is None else dtypes.canonical(pet)
    if out_type not in _PREFERRED:
        raise TracejitTypeError(
            "scaled_dot_general: preferred_element_type must be float32, float16 or "
            f"bfloat16 with configs (as in JAX), got {preferred_element_type!r}"
        )
    for name, x in (("lhs", lhs), ("rhs", rhs)):
        if dtypes.is_complex(x.dtype):  # quantizing would drop the imaginary part
            raise TracejitTypeError(
                f"scaled_dot_general: {name} is {x.dtype}; block quantization takes real "
                "operands (JAX raises too)"
            )
    lc, rc, lb, rb = dims
    a, b = _to_3d(lhs, lc, lb), _to_3d(rhs, rc, rb)
    out = _scaled_dot_3d(a, b, _checked_configs(configs), out_type)
    lshape, rshape = shape_of(lhs), shape_of(rhs)
    out_shape = [lshape[d] for d in lb + tuple(_free(len(lshape), lc, lb))]
    return tnp.reshape(out, tuple(out_shape + [rshape[d] for d in _free(len(rshape), rc, rb)]))


__all__ = ["scaled_dot_general"]
