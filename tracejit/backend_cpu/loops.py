"""Control flow in generated C++: `scan`, `while_loop` and `cond` run inside `tj_run`.

Each region (a loop body, a predicate, a branch) is fused, planned and generated as its own
`static int tj_regionN(in, out, consts, arena, ctx)` function in the same translation unit,
with the calling convention of `tj_run`; its constants are appended to the executable's
constant list (a region receives `consts` offset to its first one). The loop step calls it
once per iteration with pointers into the loop's operands:

* scan: `xs[t]` / `ys[t]` are pointers into the stacked buffers. The carry ping-pongs
  between two scratch slots; iteration 0 reads the initial carry where it lies and the last
  iteration writes the final carry straight into the step's output (no copies).
* while_loop: the predicate region writes one bool to scratch; the body ping-pongs as above,
  and the final carry is copied out once.
* cond: the index picks one branch function; only that branch runs.

Scratch (carry slots, then the region's own arena) lives past the end of the enclosing
function's planned arena: steps run one at a time, so every loop step of a function reuses
the same scratch, and the arena grows by the largest. A step of a region that needs NumPy (a
primitive not compiled natively, e.g. a debug print) calls back into Python like a top-level
fallback step, under its own callback id (`LoopPlan.callbacks`); the loop stays native.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracejit.backend_cpu import codegen
from tracejit.backend_cpu.collectives import is_collective
from tracejit.ir import fusion, memory
from tracejit.ir import kernel as K
from tracejit.ir.control import is_loop, regions_in_order
from tracejit.ir.gather_plan import is_native


def _round_up(n: int) -> int:
    return (max(n, 0) + memory.ALIGN - 1) // memory.ALIGN * memory.ALIGN


@dataclass
class Compiled:
    """One region compiled to a C++ function: its name, first constant, arena bytes."""

    fn: str
    const_base: int
    arena: int


@dataclass
class LoopPlan:
    """What codegen adds for the loop steps of one schedule (see `plan_loops`)."""

    calls: dict[int, list[str]]  # step index -> C++ lines replacing the callback
    functions: list[str] = field(default_factory=list)  # region functions, callees first
    uses: set[str] = field(default_factory=set)  # libm functions the regions call
    native_gather: bool = False
    # NumPy callbacks inside regions (a debug print...): callback id -> (step, its buffers);
    # ids start after the schedule's own step indices, which number its own callbacks.
    callbacks: dict[int, tuple] = field(default_factory=dict)


class _Context:
    def __init__(self, consts: list, first_callback: int):
        self.consts = consts  # the executable's constant list, extended with the regions'
        self.functions: list[str] = []
        self.uses: set[str] = set()
        self.native_gather = False
        self.count = 0
        self.callbacks: dict[int, tuple] = {}
        self.next_callback = first_callback


def plan_loops(schedule: K.Schedule) -> LoopPlan:
    """Compile the regions of `schedule`'s loop steps; grows `schedule.consts` and
    `schedule.arena_bytes` (in place) by what they need."""
    ctx = _Context(schedule.consts, len(schedule.steps))
    calls, scratch = _plan_steps(ctx, schedule, 0)
    if calls:
        schedule.arena_bytes = _round_up(schedule.arena_bytes) + scratch
    return LoopPlan(calls, ctx.functions, ctx.uses, ctx.native_gather, ctx.callbacks)


def _plan_steps(ctx: _Context, schedule: K.Schedule, const_base: int):
    """(step index -> loop code, scratch bytes) for the loop steps that compile natively."""
    buffers = {b.id: b for b in schedule.buffers}
    base = _round_up(schedule.arena_bytes)
    calls: dict[int, list[str]] = {}
    scratch = 0
    for i, step in enumerate(schedule.steps):
        if not is_loop(step):
            continue
        compiled = [_compile_region(ctx, r.graph) for r in regions_in_order(step.prim, step.attrs)]
        step.name = step.name.replace("_numpy_", "_")  # compiled, not a NumPy callback
        lines, need = WRITERS[step.prim](step, buffers, compiled, base, const_base)
        calls[i] = lines
        scratch = max(scratch, need)
    return calls, scratch


def _compile_region(ctx: _Context, graph) -> Compiled:
    schedule = memory.plan_memory(fusion.fuse(graph))
    buffers = {b.id: b for b in schedule.buffers}
    name = f"tj_region{ctx.count}"
    ctx.count += 1
    const_base = len(ctx.consts)
    ctx.consts.extend(schedule.consts)
    calls, scratch = _plan_steps(ctx, schedule, const_base)
    for i, step in enumerate(schedule.steps):
        callback = isinstance(step, K.Fallback) and not is_native(step, buffers)
        callback = callback and not is_collective(step, buffers)
        if callback and i not in calls:  # NumPy, called back under an executable-wide id
            calls[i] = [codegen.callback_statement(ctx.next_callback, step)]
            ctx.callbacks[ctx.next_callback] = (step, buffers)
            ctx.next_callback += 1
        if not isinstance(step, K.View):
            step.name = f"{name}_{step.name}"  # kernel functions share one unit
    functions, run = codegen.run_function(schedule, name, ctx.uses, calls, "static ")
    ctx.functions += functions + ["\n".join(run)]
    ctx.native_gather |= codegen.uses_native_gather(schedule)
    return Compiled(name, const_base, _round_up(schedule.arena_bytes) + scratch)


# ---------------------------------------------------------------- the loop code


def _call(c: Compiled, ins: str, outs: str, arena: str, const_base: int) -> str:
    return f"if (int rc = {c.fn}({ins}, {outs}, consts + {c.const_base - const_base}, {arena}, ctx)) return rc;"


def _slots(buffers, bufs: list[int]) -> tuple[list[int], list[int], int]:
    """Two scratch slots per carried buffer: (offsets, slot sizes, bytes used)."""
    offsets, sizes, off = [], [], 0
    for b in bufs:
        size = _round_up(buffers[b].nbytes)
        offsets.append(off)
        sizes.append(size)
        off += 2 * size
    return offsets, sizes, off


def _scan_code(step, buffers, compiled, base: int, const_base: int):
    (body,) = compiled
    a = step.attrs
    n_consts, n_carry, length = a["n_consts"], a["n_carry"], a["length"]
    consts = step.inputs[:n_consts]
    init = step.inputs[n_consts : n_consts + n_carry]
    xs = step.inputs[n_consts + n_carry :]
    final, ys = step.outputs[:n_carry], step.outputs[n_carry:]
    offsets, sizes, used = _slots(buffers, init)
    t = f"{length - 1}LL - it" if a["reverse"] else "it"
    lines = [
        f"{{  // {step.name}: scan, {length} iterations",
        f"  char* s = arena + {base};",
        f"  void* bin[{max(len(step.inputs), 1)}];",
        f"  void* bout[{max(len(step.outputs), 1)}];",
    ]
    lines += [f"  bin[{k}] = (void*)b{b};" for k, b in enumerate(consts)]
    lines += [f"  for (int64_t it = 0; it < {length}LL; ++it) {{", f"    const int64_t t = {t};"]
    for j, (b0, b1, off, size) in enumerate(zip(init, final, offsets, sizes)):
        lines.append(
            f"    bin[{n_consts + j}] = it == 0 ? (void*)b{b0} : (void*)(s + {off} + ((it - 1) & 1) * {size});"
        )
        lines.append(
            f"    bout[{j}] = it == {length - 1}LL ? (void*)b{b1} : (void*)(s + {off} + (it & 1) * {size});"
        )
    for k, b in enumerate(xs):
        step_bytes = buffers[b].nbytes // max(length, 1)
        lines.append(
            f"    bin[{n_consts + n_carry + k}] = (void*)((char*)b{b} + t * {step_bytes}LL);"
        )
    for k, b in enumerate(ys):
        step_bytes = buffers[b].nbytes // max(length, 1)
        lines.append(f"    bout[{n_carry + k}] = (void*)((char*)b{b} + t * {step_bytes}LL);")
    lines += ["    " + _call(body, "bin", "bout", f"s + {used}", const_base), "  }"]
    if length == 0:
        lines += [
            f"  __builtin_memcpy(b{b1}, b{b0}, {buffers[b0].nbytes});"
            for b0, b1 in zip(init, final)
        ]
    lines.append("}")
    return lines, used + body.arena


def _while_code(step, buffers, compiled, base: int, const_base: int):
    cond, body = compiled
    n_cc = step.attrs["n_cond_consts"]
    n_carry = len(step.outputs)
    n_bc = len(step.inputs) - n_cc - n_carry
    init = step.inputs[n_cc + n_bc :]
    offsets, sizes, used = _slots(buffers, init)
    pred = used
    arena = f"s + {used + memory.ALIGN}"
    lines = [
        f"{{  // {step.name}: while_loop",
        f"  char* s = arena + {base};",
        f"  void* cin[{max(n_cc + n_carry, 1)}];",
        f"  void* bin[{max(n_bc + n_carry, 1)}];",
        f"  void* bout[{max(n_carry, 1)}];",
        f"  void* cur[{max(n_carry, 1)}];",
        f"  void* cout[1] = {{(void*)(s + {pred})}};",
    ]
    lines += [f"  cin[{k}] = (void*)b{b};" for k, b in enumerate(step.inputs[:n_cc])]
    lines += [f"  bin[{k}] = (void*)b{b};" for k, b in enumerate(step.inputs[n_cc : n_cc + n_bc])]
    lines += [f"  cur[{j}] = (void*)b{b};" for j, b in enumerate(init)]
    lines.append("  for (int64_t it = 0;; ++it) {")
    lines += [f"    cin[{n_cc + j}] = cur[{j}];" for j in range(n_carry)]
    lines.append("    " + _call(cond, "cin", "cout", arena, const_base))
    lines.append("    if (!*(const bool*)cout[0]) break;")
    for j, (off, size) in enumerate(zip(offsets, sizes)):
        lines.append(f"    bin[{n_bc + j}] = cur[{j}];")
        lines.append(f"    bout[{j}] = (void*)(s + {off} + (it & 1) * {size});")
    lines.append("    " + _call(body, "bin", "bout", arena, const_base))
    lines += [f"    cur[{j}] = bout[{j}];" for j in range(n_carry)]
    lines.append("  }")
    for j, b in enumerate(step.outputs):
        lines.append(f"  __builtin_memcpy(b{b}, cur[{j}], {buffers[b].nbytes});")
    lines.append("}")
    return lines, used + memory.ALIGN + max(cond.arena, body.arena)


def _cond_code(step, buffers, compiled, base: int, const_base: int):
    n = len(compiled)
    index, operands = step.inputs[0], step.inputs[1:]
    ins = ", ".join(f"(void*)b{b}" for b in operands) or "nullptr"
    outs = ", ".join(f"(void*)b{b}" for b in step.outputs) or "nullptr"
    lines = [
        f"{{  // {step.name}: cond, {n} branches",
        f"  int64_t k = (int64_t)b{index}[0];",
        f"  k = k < 0 ? 0 : (k > {n - 1} ? {n - 1} : k);",
        f"  void* bin[] = {{{ins}}};",
        f"  void* bout[] = {{{outs}}};",
        "  switch (k) {",
    ]
    for k, c in enumerate(compiled):
        call = _call(c, "bin", "bout", f"arena + {base}", const_base)
        lines.append(f"    case {k}: {{ {call} break; }}")
    lines += ["  }", "}"]
    return lines, max(c.arena for c in compiled)


WRITERS = {"scan": _scan_code, "while_loop": _while_code, "cond": _cond_code}

__all__ = ["LoopPlan", "is_loop", "plan_loops"]
