"""Control flow on CUDA: each region compiled as its own CUDA function, the loop a loop of
launches driven from the host over device-resident buffers.

* scan: per iteration, the body's kernels run on `xs[t]` (device views, no copies) and the
  carry; `ys[t]` is written on the device. Nothing is read back.
* while_loop: the predicate region runs on the device and its one bool is read back (the
  only synchronization: the host must know whether to launch the body), not per iteration:
  guarded steps are queued in batches between readbacks (while_batched.py) when the body
  runs on the GPU alone; a body with a host step reads back per iteration.
* cond: the index is read back, and only the chosen branch is launched.

A scan whose body the GPU can run alone (kernels only) is replayed as one CUDA graph of the
whole loop (loop_graphs.py, under `tj.config.cuda_graphs`), so no Python runs per iteration;
otherwise it runs as above.
"""

from __future__ import annotations

from tracejit.backend_cuda.loop_graphs import scan_runner
from tracejit.backend_cuda.while_batched import guarded_step, run_batched
from tracejit.config import config
from tracejit.ir import kernel as K
from tracejit.ir.control import is_loop, regions_in_order


class LoopStep:
    """A scan / while_loop / cond step of a CUDA executable (see the module docstring)."""

    def __init__(self, step: K.Fallback, name: str):
        from tracejit.backend_cuda import compile_cuda

        self.s = step
        self.regions = [
            compile_cuda(r.graph, f"{name}_{step.name}_region{k}")
            for k, r in enumerate(regions_in_order(step.prim, step.attrs))
        ]
        self.graph = None  # a GraphRunner replaying a whole scan (loop_graphs.py)
        self.guarded = None  # a while loop's guarded step (while_batched.py)
        if step.prim == "scan":
            self.graph = scan_runner(self.regions[0], step.attrs, f"{name}_{step.name}")
        if step.prim == "while_loop":
            self.guarded = _guarded(step, self.regions, f"{name}_{step.name}_guarded")

    def __call__(self, call) -> None:
        ins = [call.array(b) for b in self.s.inputs]
        outs = [call.array(b) for b in self.s.outputs]
        _RUNNERS[self.s.prim](self, ins, outs)

    def _scan(self, ins: list, outs: list) -> None:
        if self.graph is not None and config.cuda_graphs != "never":
            for dst, r in zip(outs, self.graph(ins)):
                dst[...] = r
            return
        a = self.s.attrs
        n_consts, n_carry, length = a["n_consts"], a["n_carry"], a["length"]
        consts, carry = ins[:n_consts], ins[n_consts : n_consts + n_carry]
        xs, ys = ins[n_consts + n_carry :], outs[n_carry:]
        (body,) = self.regions
        for it in range(length):
            t = length - 1 - it if a["reverse"] else it
            res = body.run_plain([*consts, *carry, *(x[t] for x in xs)])
            carry = res[:n_carry]
            for y, r in zip(ys, res[n_carry:]):
                y[t] = r
        for dst, c in zip(outs[:n_carry], carry):
            dst[...] = c

    def _while(self, ins: list, outs: list) -> None:
        n_cc = self.s.attrs["n_cond_consts"]
        n_carry = len(outs)
        n_bc = len(ins) - n_cc - n_carry
        cond_consts, body_consts = ins[:n_cc], ins[n_cc : n_cc + n_bc]
        carry = ins[n_cc + n_bc :]
        cond, body = self.regions
        if self.guarded is not None:  # few readbacks (while_batched.py)
            carry = run_batched(cond, self.guarded, cond_consts, body_consts, carry, _scalar)
        else:  # a body with host steps: one readback per iteration
            while _scalar(cond.run_plain([*cond_consts, *carry])[0]):
                carry = body.run_plain([*body_consts, *carry])
        for dst, c in zip(outs, carry):
            dst[...] = c

    def _cond(self, ins: list, outs: list) -> None:
        k = int(_scalar(ins[0]))
        branch = self.regions[min(max(k, 0), len(self.regions) - 1)]
        for dst, r in zip(outs, branch.run_plain(ins[1:])):
            dst[...] = r


def _guarded(step: K.Fallback, regions: list, name: str):
    """The compiled guarded step of a while loop whose regions run on the GPU alone, or None."""
    from tracejit.backend_cuda import compile_cuda
    from tracejit.backend_cuda.launcher import step_kinds

    if any("host" in step_kinds(r) for r in regions):
        return None
    cond, body = regions_in_order(step.prim, step.attrs)
    guarded = compile_cuda(guarded_step(cond.graph, body.graph, step.attrs["n_cond_consts"]), name)
    return guarded if "host" not in step_kinds(guarded) else None


def _scalar(x):
    """The one element of a device array, on the host (a synchronization)."""
    return x.get().reshape(-1)[0]


_RUNNERS = {"scan": LoopStep._scan, "while_loop": LoopStep._while, "cond": LoopStep._cond}

__all__ = ["LoopStep", "is_loop"]
