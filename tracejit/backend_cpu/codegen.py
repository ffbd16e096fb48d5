"""C++ code generation: one translation unit per `Schedule`.

The unit exports `tj_run(inputs, outputs, consts, arena, ctx)`, which runs every step in
order. Each kernel is a function over a range of outer units (rows, or elements of a 1-D
loop); `tj_parallel` runs it on OpenMP threads when the loop nest is big enough, a decision
made in C++ at run time (`omp parallel if(...)` costs ~0.3 us even when false). Innermost
loops carry `omp simd`, and libm functions are declared `omp declare simd`, so GCC calls
glibc's libmvec vector variants without -ffast-math (NaN/Inf semantics stay intact).

>>> import numpy as np, tracejit as tj
>>> from tracejit.ir.fusion import fuse
>>> from tracejit.ir.memory import plan_memory
>>> s = plan_memory(fuse(tj.make_ir(lambda x: x + 1.0)(np.ones(3, np.float32))))
>>> "tj_run" in generate(s)
True
"""

from __future__ import annotations

import numpy as np

from tracejit.backend_cpu.simplify import simplify
from tracejit.ir import kernel as K
from tracejit.ir.c_render import PRELUDE, c_type, literal, render

# Below this many element-iterations a kernel runs on the calling thread: an OpenMP fork/join
# costs a few microseconds, about what 32K simple element operations take on one core.
PARALLEL_MIN_WORK = 1 << 15
# Work blocks per parallel loop, handed out dynamically (a few per thread balances load).
PARALLEL_BLOCKS = 32

HEADER = r"""
#include <cstdint>
#define TJ_FN static inline
extern "C" {
int omp_get_num_threads(void);
int omp_get_thread_num(void);
}
"""

RUNTIME = r"""
struct TjContext {
  void* sgemm;
  void* dgemm;
  int (*fallback)(void* self, int64_t step, void* const* ptrs);
  void* self;
};
typedef void (*tj_sgemm_t)(int, int, int, int, int, int, float, const float*, int, const float*,
                           int, float, float*, int);
typedef void (*tj_dgemm_t)(int, int, int, int, int, int, double, const double*, int,
                           const double*, int, double, double*, int);

// Dynamic blocks rather than one static slice per thread: on a shared machine one busy core
// would otherwise hold every other thread at the join.
template <class F> static void tj_parallel(int64_t units, int64_t work, const F& fn) {
  if (units > 1 && work >= TJ_PARALLEL_MIN_WORK) {
    const int64_t nblocks = units < TJ_PARALLEL_BLOCKS ? units : TJ_PARALLEL_BLOCKS;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < nblocks; ++b) {
      int64_t lo = units * b / nblocks, hi = units * (b + 1) / nblocks;
      if (lo < hi) fn(lo, hi);
    }
  } else if (units > 0) {
    fn(0, units);
  }
}

template <class T>
static void tj_gemm_loops(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a,
                          const T* b, T* c) {
  tj_parallel(m, m * n * k, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      T* row = c + i * n;
      for (int64_t j = 0; j < n; ++j) row[j] = 0;
      for (int64_t p = 0; p < k; ++p) {
        T av = ta ? a[p * m + i] : a[i * k + p];
        if (tb) {
          for (int64_t j = 0; j < n; ++j) row[j] += av * b[j * k + p];
        } else {
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) row[j] += av * b[p * n + j];
        }
      }
    }
  });
}

static bool tj_blas_ok(int64_t m, int64_t n, int64_t k) {
  const int64_t lim = 0x7fffffff;
  return m > 0 && n > 0 && k > 0 && m < lim && n < lim && k < lim;
}

template <class T>
static void tj_matmul(const TjContext* ctx, int blas, bool ta, bool tb, int64_t batch, int64_t m,
                      int64_t n, int64_t k, const T* a, const T* b, T* c) {
  for (int64_t i = 0; i < batch; ++i) {
    const T* ai = a + i * m * k;
    const T* bi = b + i * k * n;
    T* ci = c + i * m * n;
    int lda = (int)(ta ? m : k), ldb = (int)(tb ? k : n);
    int oa = ta ? 112 : 111, ob = tb ? 112 : 111;  // CblasTrans : CblasNoTrans
    if (blas == 1 && ctx->sgemm && tj_blas_ok(m, n, k)) {
      ((tj_sgemm_t)ctx->sgemm)(101, oa, ob, (int)m, (int)n, (int)k, 1.0f, (const float*)ai, lda,
                               (const float*)bi, ldb, 0.0f, (float*)ci, (int)n);
    } else if (blas == 2 && ctx->dgemm && tj_blas_ok(m, n, k)) {
      ((tj_dgemm_t)ctx->dgemm)(101, oa, ob, (int)m, (int)n, (int)k, 1.0, (const double*)ai, lda,
                               (const double*)bi, ldb, 0.0, (double*)ci, (int)n);
    } else {
      tj_gemm_loops<T>(ta, tb, m, n, k, ai, bi, ci);
    }
  }
}
"""

IDENTITY = {"sum": 0, "prod": 1}
OMP_REDUCTION = {"sum": "+", "prod": "*", "max": "max", "min": "min"}


def _declarations(uses: set[str]) -> str:
    lines = ['extern "C" {']
    for fn in sorted(uses):
        t = "float" if fn.endswith("f") and fn not in ("erf",) else "double"
        nargs = 2 if fn.rstrip("f") in ("pow", "atan2") else 1
        params = ", ".join([t] * nargs)
        lines.append("#pragma omp declare simd notinbranch")
        lines.append(f"{t} {fn}({params});")
    lines.append("}")
    return "\n".join(lines)


class _Emitter:
    """Emits the statements of one loop body: every sub-expression once, as a local."""

    def __init__(self, uses: set[str], prefix: str = "t", var: str = "i"):
        self.uses = uses
        self.prefix = prefix
        self.var = var
        self.names: dict = {}
        self.lines: list[str] = []
        self.counter = 0

    def affine(self, offset: int, coefs) -> str:
        terms = [str(offset)] if offset else []
        for d, c in enumerate(coefs):
            if c == 1:
                terms.append(f"{self.var}{d}")
            elif c:
                terms.append(f"{c}LL * {self.var}{d}")
        return " + ".join(terms) or "0"

    def value(self, e: K.Expr) -> str:
        for node in K.walk(e):
            if node in self.names:
                continue
            if isinstance(node, K.Literal):
                self.names[node] = literal(node.value, node.dtype)
                continue
            if isinstance(node, K.Acc):
                self.names[node] = f"r{node.rid}"
                continue
            if isinstance(node, K.Load):
                text = f"b{node.buf}[{self.affine(node.offset, node.strides)}]"
            elif isinstance(node, K.Index):
                text = f"({c_type(node.dtype)})({self.affine(node.offset, node.coefs)})"
            else:
                args = [self.names[a] for a in node.args]
                text = render(
                    node.prim, args, node.dtype, node.out_dtype, dict(node.attrs), self.uses
                )
            name = f"{self.prefix}{self.counter}"
            self.counter += 1
            self.lines.append(f"const {c_type(K.expr_dtype(node))} {name} = {text};")
            self.names[node] = name
        return self.names[e]


def _indent(lines: list[str], n: int) -> list[str]:
    return [" " * n + line if line else line for line in lines]


def _decompose(extents: tuple[int, ...], unit: str, first_var: int) -> list[str]:
    """Statements that split flat index `unit` into loop variables over `extents`."""
    lines = []
    rest = unit
    for d in reversed(range(len(extents))):
        var = f"i{first_var + d}"
        if d == 0:
            lines.append(f"const int64_t {var} = {rest};")
        else:
            lines.append(f"const int64_t {var} = {rest} % {extents[d]}LL;")
            lines.append(f"const int64_t q{first_var + d} = {rest} / {extents[d]}LL;")
            rest = f"q{first_var + d}"
    return lines


class KernelWriter:
    def __init__(self, kernel: K.Kernel, buffers: dict[int, K.Buffer], uses: set[str]):
        self.k = simplify(kernel)
        self.buffers = buffers
        self.uses = uses

    def params(self) -> list[int]:
        bufs = {ld.buf for ld in self.k.loads()} | {s.buf for s in self.k.stores}
        return sorted(bufs)

    def signature(self) -> str:
        ps = ", ".join(f"{c_type(self.buffers[b].dtype)}* b{b}" for b in self.params())
        return f"static void {self.k.name}(int64_t lo, int64_t hi{', ' if ps else ''}{ps})"

    def units_and_work(self) -> tuple[int, int]:
        k = self.k
        inner = int(np.prod(k.inner, dtype=np.int64)) * max(k.nphases, 1)
        if not k.reductions and len(k.outer) >= 1:
            units = int(np.prod(k.outer[:-1], dtype=np.int64)) if len(k.outer) > 1 else k.outer[0]
            return units, int(np.prod(k.outer, dtype=np.int64))
        units = int(np.prod(k.outer, dtype=np.int64))
        return units, units * max(inner, 1)

    def body(self) -> list[str]:
        if self.k.reductions:
            return self._reduction_body()
        return self._loop_body()

    def _stores(self, em: _Emitter, phase: int) -> list[str]:
        out = []
        for s in self.k.stores:
            if s.phase == phase:
                val = em.value(s.expr)
                out.append(f"b{s.buf}[{em.affine(s.offset, s.strides)}] = {val};")
        return out

    def _loop_body(self) -> list[str]:
        k = self.k
        em = _Emitter(self.uses)
        stores = self._stores(em, 0)
        body = em.lines + stores
        n = len(k.outer)
        if n == 0:
            return ["(void)lo; (void)hi;", "{", *_indent(body, 2), "}"]
        if n == 1:
            loop = ["#pragma omp simd", "for (int64_t i0 = lo; i0 < hi; ++i0) {"]
            return [*loop, *_indent(body, 2), "}"]
        last = n - 1
        lines = ["for (int64_t u = lo; u < hi; ++u) {"]
        lines += _indent(_decompose(k.outer[:-1], "u", 0), 2)
        lines += _indent(
            [
                "#pragma omp simd",
                (f"for (int64_t i{last} = 0; i{last} < {k.outer[-1]}LL; ++i{last}) {{"),
            ],
            2,
        )
        lines += _indent(body, 4) + ["  }", "}"]
        return lines

    def _reduction_body(self) -> list[str]:
        k = self.k
        lines = ["for (int64_t u = lo; u < hi; ++u) {"]
        body = _decompose(k.outer, "u", 0) if k.outer else []
        for phase in range(k.nphases):
            body += self._phase(phase)
        em = _Emitter(self.uses, "e")
        stores = self._stores(em, -1)
        body += em.lines + stores
        return lines + _indent(body, 2) + ["}"]

    def _phase(self, phase: int) -> list[str]:
        k = self.k
        reds = [r for r in k.reductions if r.phase == phase]
        em = _Emitter(self.uses, f"p{phase}_")
        pre, update, post, clauses = [], [], [], []
        sequential = False
        for r in reds:
            p, u, q, c, seq = self._reduction(r, em)
            pre += p
            update += u
            post += q
            clauses += c
            sequential |= seq
        stores = self._stores(em, phase)
        body = em.lines + update + stores
        nouter = len(k.outer)
        loops = []
        for d, ext in enumerate(k.inner):
            var = f"i{nouter + d}"
            if d == len(k.inner) - 1 and not sequential:
                red = " ".join(f"reduction({op}:{name})" for op, name in clauses)
                loops.append(f"#pragma omp simd {red}".rstrip())
            loops.append(f"for (int64_t {var} = 0; {var} < {ext}LL; ++{var}) {{")
        lines = []
        depth = 0
        for line in loops:
            lines.append(" " * depth + line)
            if line.startswith("for"):
                depth += 2
        lines += _indent(body, depth)
        for d in range(len(k.inner)):
            lines.append(" " * (depth - 2 * (d + 1)) + "}")
        return [*pre, *lines, *post]

    def _reduction(self, r: K.Reduction, em: _Emitter):
        """(before loop, in loop, after loop, simd reduction clauses, must be sequential)."""
        v = em.value(r.expr)
        in_dt = K.expr_dtype(r.expr)
        ct, name = c_type(r.dtype), f"a{r.rid}"
        if r.op in ("argmax", "argmin"):
            cmp = ">" if r.op == "argmax" else "<"
            start = self._extreme(in_dt, low=r.op == "argmax")
            cond = f"{v} {cmp} {name}v"
            if in_dt.kind == "f":
                cond = f"({cond}) || ({v} != {v} && {name}v == {name}v)"
            pre = [f"{c_type(in_dt)} {name}v = {start};", f"int64_t {name} = 0;"]
            upd = [f"if ({cond}) {{ {name}v = {v}; {name} = i{r.arg_dim}; }}"]
            return pre, upd, [f"const int64_t r{r.rid} = {name};"], [], True
        if in_dt == np.bool_:
            op = "|" if r.op in ("sum", "max") else "&"
            init = "0" if op == "|" else "1"
            pre = [f"int32_t {name} = {init};"]
            upd = [f"{name} = {name} {op} (int32_t){v};"]
            return pre, upd, [f"const bool r{r.rid} = {name} != 0;"], [(op, name)], False
        if r.op in ("sum", "prod"):
            pre = [f"{ct} {name} = {IDENTITY[r.op]};"]
            sym = "+" if r.op == "sum" else "*"
            upd = [f"{name} = {name} {sym} {v};"]
            return pre, upd, [f"const {ct} r{r.rid} = {name};"], [(sym, name)], False
        cmp = ">" if r.op == "max" else "<"
        pre = [f"{ct} {name} = {self._extreme(in_dt, low=r.op == 'max')};"]
        upd = [f"{name} = {v} {cmp} {name} ? {v} : {name};"]
        clauses = [(r.op, name)]
        post = [f"const {ct} r{r.rid} = {name};"]
        if in_dt.kind == "f":
            pre.append(f"int32_t {name}n = 0;")
            upd.append(f"{name}n = {name}n | ({v} != {v});")
            clauses.append(("|", f"{name}n"))
            post = [f"const {ct} r{r.rid} = {name}n ? {literal(float('nan'), in_dt)} : {name};"]
        return pre, upd, post, clauses, False

    @staticmethod
    def _extreme(dt: np.dtype, low: bool) -> str:
        if dt.kind == "f":
            return literal(float("-inf") if low else float("inf"), dt)
        if dt == np.bool_:
            return "false" if low else "true"
        info = np.iinfo(dt)
        return literal(info.min if low else info.max, dt)

    def function(self) -> str:
        return "\n".join([self.signature() + " {", *_indent(self.body(), 2), "}"])

    def call(self) -> str:
        units, work = self.units_and_work()
        args = "".join(f", b{b}" for b in self.params())
        return (
            f"tj_parallel({units}LL, {work}LL, [&](int64_t lo, int64_t hi) "
            f"{{ {self.k.name}(lo, hi{args}); }});"
        )


def _pointer(buf: K.Buffer) -> str:
    ct = c_type(buf.dtype)
    source = {
        "input": f"in[{buf.index}]",
        "output": f"out[{buf.index}]",
        "const": f"consts[{buf.index}]",
        "temp": f"arena + {buf.offset}",
        "view": f"b{buf.base}",
    }[buf.kind]
    return f"{ct}* b{buf.id} = ({ct}*)({source});"


def _pointer_lines(buffers: dict[int, K.Buffer]) -> list[str]:
    done: set[int] = set()
    lines = []
    for b in sorted(buffers):
        chain = []
        while b not in done:
            chain.append(b)
            if buffers[b].kind != "view":
                break
            b = buffers[b].base
        for c in reversed(chain):
            lines.append(_pointer(buffers[c]))
            done.add(c)
    return lines


def _step_call(i: int, step: K.Step, buffers, writers: dict) -> list[str]:
    if isinstance(step, K.Kernel):
        return [writers[i].call()]
    if isinstance(step, K.Matmul):
        dt = buffers[step.out].dtype
        blas = {np.dtype(np.float32): 1, np.dtype(np.float64): 2}.get(dt, 0)
        flags = f"{blas}, {str(step.trans_a).lower()}, {str(step.trans_b).lower()}"
        sizes = f"{step.batch}LL, {step.m}LL, {step.n}LL, {step.k}LL"
        return [
            f"tj_matmul<{c_type(dt)}>(ctx, {flags}, {sizes}, b{step.a}, b{step.b}, b{step.out});"
        ]
    if isinstance(step, K.Fallback):
        ptrs = ", ".join(f"(void*)b{b}" for b in step.inputs + step.outputs)
        return [
            "{",
            f"  void* ptrs[] = {{{ptrs}}};",
            f"  if (int rc = ctx->fallback(ctx->self, {i}, ptrs)) return rc;",
            "}",
        ]
    return []  # views are pointer aliases


def generate(schedule: K.Schedule, name: str = "function") -> str:
    """The C++ translation unit for `schedule` (after `plan_memory`)."""
    buffers = {b.id: b for b in schedule.buffers}
    uses: set[str] = set()
    writers = {
        i: KernelWriter(s, buffers, uses)
        for i, s in enumerate(schedule.steps)
        if isinstance(s, K.Kernel)
    }
    functions = [w.function() for w in writers.values()]
    body = _pointer_lines(buffers) + ["(void)in; (void)out; (void)consts; (void)arena; (void)ctx;"]
    for i, step in enumerate(schedule.steps):
        body += _step_call(i, step, buffers, writers)
    body.append("return 0;")
    parts = [
        f"// tracejit: generated from {name}",
        HEADER,
        f"#define TJ_PARALLEL_MIN_WORK {PARALLEL_MIN_WORK}LL",
        f"#define TJ_PARALLEL_BLOCKS {PARALLEL_BLOCKS}LL",
        _declarations(uses),
        PRELUDE,
        RUNTIME,
        *functions,
        (
            'extern "C" int tj_run(void* const* in, void* const* out, void* const* consts, '
            "char* arena, const TjContext* ctx) {"
        ),
        *_indent(body, 2),
        "}",
        "",
    ]
    return "\n".join(parts)
