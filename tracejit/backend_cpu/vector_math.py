"""libm functions in generated C++: one implementation for every element, in a vector lane or not.

GCC vectorizes a loop that calls an `omp declare simd` function by calling its vector variants
(glibc's libmvec), but a loop's epilogue runs narrower variants and its last elements the
scalar function, and libmvec's vector `cos` and libm's scalar `cos` differ in the last bit for
most inputs. So a value depended on its element's position, and a fused kernel that computed
`cos(x)` in two loops (a max, then the `cos(x) == max` one-hot of its gradient) got two
different answers for one element (issue 13).

Each function `fn` the kernels call is therefore `tj_<fn>`, declared `omp declare simd`, and
every variant GCC may call is defined here over one implementation: libmvec's widest variant
for the target (`_ZGVeN16v_cosf` on AVX-512). Narrower variants and the scalar function pad
their operands into that width, call it and take their lanes back (libmvec works per lane:
the other lanes do not change a lane's result). The scalar `tj_<fn>` is an alias of the
padded call, so GCC sees no body to clone. Without libmvec (`TJ_MVEC` undefined, set by the
compiler driver when -lmvec links) or off x86-64, `tj_<fn>` is libm's scalar function and
its loops stay scalar: one implementation again.

>>> "_ZGVeN16v_cosf" in declarations({"cosf"})
True
"""

from __future__ import annotations

from tracejit.errors import TracejitValueError
from tracejit.ir.c_render import LIBM_BINARY, LIBM_UNARY

# x86-64 vector ABI: (ISA letter, vector bits, the macro GCC defines when it may use it),
# narrowest first. libmvec has every function of c_render's tables in all four.
ISAS = (("b", 128, None), ("c", 256, "__AVX__"), ("d", 256, "__AVX2__"), ("e", 512, "__AVX512F__"))
_NAMES = set(LIBM_UNARY.values()) | set(LIBM_BINARY.values())

PREAMBLE = r"""
#define TJ_HIDDEN __attribute__((visibility("hidden")))
typedef float tj_f32x4 __attribute__((vector_size(16)));
typedef float tj_f32x8 __attribute__((vector_size(32)));
typedef float tj_f32x16 __attribute__((vector_size(64)));
typedef double tj_f64x2 __attribute__((vector_size(16)));
typedef double tj_f64x4 __attribute__((vector_size(32)));
typedef double tj_f64x8 __attribute__((vector_size(64)));
"""


def signature(fn: str) -> tuple[str, int]:
    """(C type, number of arguments) of libm function `fn` ("cosf" -> ("float", 1))."""
    is_f32 = fn.endswith("f") and fn[:-1] in _NAMES
    base = fn[:-1] if is_f32 else fn
    if base not in _NAMES:
        raise TracejitValueError(f"{fn!r} is not a libm function of the op table")
    return ("float" if is_f32 else "double"), (2 if base in LIBM_BINARY.values() else 1)


def _vec(ct: str, lanes: int) -> str:
    return f"tj_{'f32' if ct == 'float' else 'f64'}x{lanes}"


def _widen(x: str, ct: str, lanes: int, width: int) -> str:
    """`x` (`lanes` lanes) as a vector of `width` lanes, the others zero."""
    if lanes == width:
        return x
    zero = f"({_vec(ct, lanes)}){{}}"
    idx = [str(i) for i in range(lanes)] + [str(lanes)] * (width - lanes)
    return f"__builtin_shufflevector({x}, {zero}, {', '.join(idx)})"


def _narrow(r: str, lanes: int, width: int) -> str:
    """The first `lanes` lanes of `r` (`width` lanes)."""
    if lanes == width:
        return r
    return f"__builtin_shufflevector({r}, {r}, {', '.join(str(i) for i in range(lanes))})"


def _for_isa(fn: str, isa: int) -> list[str]:
    """The definitions of tj_<fn> and its variants when ISAS[isa] is the widest available."""
    ct, nargs = signature(fn)
    elem = 32 if ct == "float" else 64
    letter, bits, _ = ISAS[isa]
    width = bits // elem
    v = "v" * nargs
    base = f"_ZGV{letter}N{width}{v}_{fn}"
    wide = _vec(ct, width)
    lines = [f'extern "C" {wide} {base}({", ".join([wide] * nargs)});']
    for letter_i, bits_i, _ in ISAS[: isa + 1]:
        lanes = bits_i // elem
        vt = _vec(ct, lanes)
        params = ", ".join(f"{vt} x{j}" for j in range(nargs))
        name = f"_ZGV{letter_i}N{lanes}{v}_tj_{fn}"
        call = f"{base}({', '.join(_widen(f'x{j}', ct, lanes, width) for j in range(nargs))})"
        body = f"const {wide} r = {call}; return {_narrow('r', lanes, width)};"
        lines.append(f'extern "C" TJ_HIDDEN {vt} {name}({params}) {{ {body} }}')
    params = ", ".join(f"{ct} x{j}" for j in range(nargs))
    call = f"{base}({', '.join(f'({wide}){{x{j}}}' for j in range(nargs))})"
    lines.append(f'extern "C" TJ_HIDDEN {ct} tj_{fn}_1({params}) {{ return {call}[0]; }}')
    return lines


def _declaration(fn: str) -> list[str]:
    ct, nargs = signature(fn)
    types = ", ".join([ct] * nargs)
    return [
        "#pragma omp declare simd notinbranch",
        f'extern "C" {ct} tj_{fn}({types});',
        f'extern "C" {ct} tj_{fn}({types}) __attribute__((alias("tj_{fn}_1"), visibility("hidden")));',
    ]


def _scalar_only(fn: str) -> list[str]:
    ct, nargs = signature(fn)
    params = ", ".join(f"{ct} x{j}" for j in range(nargs))
    args = ", ".join(f"x{j}" for j in range(nargs))
    return [
        f'extern "C" {ct} {fn}({", ".join([ct] * nargs)});',
        f"static inline {ct} tj_{fn}({params}) {{ return {fn}({args}); }}",
    ]


def declarations(uses: set[str]) -> str:
    """C++ defining `tj_<fn>` for every libm function name in `uses` (others are ignored)."""
    fns = sorted(fn for fn in uses if fn[:-1] in _NAMES or fn in _NAMES)
    if not fns:
        return ""
    out = [PREAMBLE, "#if defined(TJ_MVEC) && defined(__x86_64__)"]
    for isa in reversed(range(len(ISAS))):
        macro = ISAS[isa][2]
        head = "#else" if macro is None else f"#{'if' if isa == 3 else 'elif'} defined({macro})"
        out.append(head)
        out += [line for fn in fns for line in _for_isa(fn, isa)]
    out.append("#endif")
    out += [line for fn in fns for line in _declaration(fn)]
    out.append("#else")
    out += [line for fn in fns for line in _scalar_only(fn)]
    out.append("#endif")
    return "\n".join(out)


__all__ = ["declarations", "signature"]
