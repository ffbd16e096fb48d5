"""`tj_run` as data: one small function per distinct step, and tables saying which to call
with which buffers.

A straight-line `tj_run` with one statement per step made the C++ compiler's time grow with
the schedule (~1.5 ms of -O3 per step: an unrolled 200-step RNN spent 2 s compiling `tj_run`
alone, 8 s when the kernels' parallel wrappers were inlined into it). Now each step is a call
through a table: `tj_run_fns[s](bp, tj_run_args + tj_run_at[s], consts, arena, ctx)`, where
`bp` holds every buffer's address (filled from `tj_run_buffers` at the start of the call) and
`tj_run_args` lists each step's buffer slots (the tables are named after the function they
belong to: a loop region has its own). A step function reads its buffers from `bp` and runs
the step's statement. Steps whose
function text is the same up to buffer numbering share one function (`KernelDedupe`), so the
source grows by a few table entries per repeated step, not by code.

>>> p = StepTable({0: _buf(0, "input", 0), 1: _buf(1, "temp", 64)}, "tj_run")
>>> p.add("tj_copy(b0, b1);", "k0")
>>> p.add("tj_copy(b1, b0);", "k1")  # the same statement up to buffer numbering
>>> len(p.functions), p.fns
(1, ['tj_step_k0', 'tj_step_k0'])
"""

from __future__ import annotations

import numpy as np

from tracejit.ir import kernel as K
from tracejit.ir.c_render import c_type
from tracejit.ir.cwriter.dedupe import BUFFER, KernelDedupe
from tracejit.ir.cwriter.emit import indent

STEP_SIGNATURE = (
    "(void* const* bp, const int64_t* a, void* const* consts, char* arena, const TjContext* ctx)"
)
UNUSED = "(void)bp; (void)a; (void)consts; (void)arena; (void)ctx;"
_KIND = {"input": 0, "output": 1, "const": 2, "temp": 3, "view": 4, "shifted": 5}


def _buf(i: int, kind: str, where: int) -> K.Buffer:
    """A buffer for the doctest."""
    b = K.Buffer(i, (1,), np.dtype(np.float32), kind)
    b.index, b.offset = where, where
    return b


class StepTable:
    """The step functions and the tables of one `tj_run`."""

    def __init__(self, buffers: dict[int, K.Buffer], fn: str):
        self.buffers = buffers
        self.fn = fn
        self.order = K.base_first(buffers)  # the table order
        self.slot = {b: i for i, b in enumerate(self.order)}
        self.dedupe = KernelDedupe()
        self.functions: list[str] = []
        self.fns: list[str] = []  # per step: its function
        self.names: list[str] = []  # per step: its name (shown by tj.profile)
        self.at: list[int] = []  # per step: where its buffer slots start in `args`
        self.args: list[int] = []
        self.shifted: dict[tuple[int, int], int] = {}  # (buffer, element offset) -> its id
        self.next_id = max(buffers, default=-1) + 1

    def hoist(self, kernel: K.Kernel) -> K.Kernel:
        """`kernel` reading and writing through shifted buffer addresses instead of constant
        offsets (`K.hoist_offsets`), so the kernels of an unrolled loop share their code."""
        return K.hoist_offsets(kernel, self._shifted)

    def _shifted(self, buf: int, offset: int) -> int:
        key = (buf, offset)
        if key not in self.shifted:
            new = self.next_id
            self.next_id += 1
            self.shifted[key] = new
            base = self.buffers[buf]
            self.buffers[new] = K.Buffer(new, (), base.dtype, "shifted", base=buf)
            self.buffers[new].offset = offset * base.dtype.itemsize
            self.slot[new] = len(self.order)
            self.order.append(new)
        return self.shifted[key]

    def add(self, statement: str, name: str, helper: str = "", label: str = "") -> None:
        """A step running `statement` (C++ over buffers `b<id>`, `consts`, `arena` and `ctx`)
        after `helper` (the kernel function it calls, if any); `name` is unique in the unit,
        `label` (default: `name`) is what tj.profile calls the step."""
        params = list(dict.fromkeys(int(m) for m in BUFFER.findall(statement)))
        types = [c_type(self.buffers[b].dtype) for b in params]
        loads = [f"{t}* b{b} = ({t}*)bp[a[{j}]];" for j, (b, t) in enumerate(zip(params, types))]
        fn = f"tj_step_{name}"
        head = f"static int {fn}{STEP_SIGNATURE} {{"
        body = [*loads, UNUSED, *statement.split("\n"), "return 0;"]
        text = "\n".join([*([helper] if helper else []), head, *indent(body), "}"])
        first = self.dedupe.first(text, name, params)
        if first is None:
            self.functions.append(text)
        self.fns.append(f"tj_step_{first or name}")
        self.names.append(label or name)
        self.at.append(len(self.args))
        self.args += [self.slot[b] for b in params]

    def run_function(self, head: str) -> list[str]:
        """The tables and the function itself (`head`: its declaration, the `tj_run`
        signature), which fills `bp` and runs every step."""
        table = [f"{{{_KIND[self.buffers[b].kind]}, {self._where(b)}}}" for b in self.order]
        # a shifted buffer: {5, its base's slot, the byte offset}
        nb, ns, t = len(table), len(self.fns), self.fn
        names = [self.names_table()] if t == "tj_run" else []
        return [
            *names,
            f"static const int64_t {t}_buffers[][3] = {{{', '.join(table) or '{0, 0, 0}'}}};",
            f"static const int64_t {t}_args[] = {{{_join(self.args)}}};",
            f"static const int64_t {t}_at[] = {{{_join(self.at)}}};",
            f"static int (*const {t}_fns[]){STEP_SIGNATURE} = {{{', '.join(self.fns) or '0'}}};",
            head + " {",
            f"  void* bp[{max(nb, 1)}];",
            f"  for (int64_t i = 0; i < {nb}; ++i) {{",
            f"    const int64_t v = {t}_buffers[i][1];",
            f"    switch ({t}_buffers[i][0]) {{",
            "      case 0: bp[i] = in[v]; break;",
            "      case 1: bp[i] = out[v]; break;",
            "      case 2: bp[i] = consts[v]; break;",
            "      case 3: bp[i] = arena + v; break;",
            "      case 4: bp[i] = bp[v]; break;",
            f"      default: bp[i] = (char*)bp[v] + {t}_buffers[i][2]; break;",
            "    }",
            "  }",
            f"  for (int64_t s = 0; s < {ns}; ++s) {{",
            *self._timed(f"{t}_fns[s](bp, {t}_args + {t}_at[s], consts, arena, ctx)"),
            "  }",
            "  (void)in; (void)out;",
            "  return 0;",
            "}",
        ]

    def _timed(self, call: str) -> list[str]:
        """The loop body running one step; the top-level `tj_run` also times it when
        `ctx->step_ns` is set (tj.profile), a loop region's own table never does."""
        run = f"    if (int rc = {call}) return rc;"
        if self.fn != "tj_run":
            return [run]
        return [
            "    if (ctx->step_ns) {",
            "      const int64_t t0 = tj_now_ns();",
            f"  {run}",
            "      ctx->step_ns[2 * s] = t0;",
            "      ctx->step_ns[2 * s + 1] = tj_now_ns() - t0;",
            "      continue;",
            "    }",
            run,
        ]

    def names_table(self) -> str:
        """The step names (`tj_run_step_names`, `tj_run_nsteps` of them), read by tj.profile."""
        quoted = ", ".join(f'"{n}"' for n in self.names) or '""'
        return (
            f'extern "C" const int64_t tj_run_nsteps = {len(self.names)};\n'
            f'extern "C" const char* const tj_run_step_names[] = {{{quoted}}};'
        )

    def _where(self, b: int) -> str:
        buf = self.buffers[b]
        if buf.kind == "shifted":
            return f"{self.slot[buf.base]}, {buf.offset}"
        if buf.kind == "view":
            return f"{self.slot[buf.base]}, 0"
        return f"{buf.offset if buf.kind == 'temp' else buf.index}, 0"


def _join(values: list[int]) -> str:
    return ", ".join(map(str, values)) or "0"


__all__ = ["StepTable"]
