"""Graph passes: each is `Graph -> Graph`, run in one listed order by the pass manager.

Entry points
------------
`optimize(graph, verify_each=False, stage="post_grad", dump=None) -> Graph`
    Run the pipeline `PASSES` for one stage and return the optimized graph (the input graph
    itself when nothing changed; the input is never mutated). Stages:

    - `"pre_grad"`  a traced graph that may still be differentiated (all passes keep
      gradients: e.g. `stop_gradient` stays);
    - `"joint"`     the forward+backward graph autodiff builds, before partitioning;
    - `"post_grad"` a graph no longer differentiated: each partitioned forward/backward
      graph, and what `jit` compiles (the default). Here `stop_gradient` is dropped.

    `verify_each=True` runs the IR verifier after every pass that changed the graph (jit
    passes `tj.config.verify_graphs`). `dump` is a `tracejit.debug.DumpHandle`: it receives
    the graph after each pass that changed it, as `after_<pass>`, and a table of what each
    pass did (node counts, rules fired) as `<stage>_passes`.

`run_passes(graph, stage, verify_each, dump)` -> (graph, [PassRecord])
    The same, also returning what each pass did (changed?, node counts, rules fired).

`unused_inputs(graph) -> list[int]`
    Positions of inputs no output depends on (DCE never removes inputs: the calling
    convention depends on them).

The passes, in pipeline order: `rewrite`, one sweep of the rewrite engine (`rewrite.py`: tables
of pattern -> replacement rules, reaching the fixed point in one topological sweep) over the
rule tables in priority order: `fold` (constant folding, results of at most `fold.FOLD_LIMIT`
elements), `simplify` (canonicalization and no-op removal, exact in floating point),
`numerics` (stable log-softmax / logsumexp, log1p, expm1); then `dce`, then `regions`. The
sweep builds through the interning graph builder (ir/builder.py), so it is also the CSE; the
tracer and autodiff build the same way, so traced graphs hold no repeated computation. Adding
a rule is one table entry. `cse`, `fold`, `simplify` and `numerics` run one sweep alone.

>>> import numpy as np, tracejit as tj
>>> print(optimize(tj.make_ir(lambda x: np.exp(x) - 1.0)(np.ones(2)), stage="pre_grad"))
{ lambda a:f64[2] . let
    b:f64[2] = expm1 a
  in (b,) }
"""

from __future__ import annotations

from tracejit.ir.passes.dce import remove_dead_nodes, unused_inputs
from tracejit.ir.passes.fold import fold
from tracejit.ir.passes.manager import (
    PASSES,
    STAGES,
    Pass,
    PassEntry,
    PassRecord,
    optimize,
    run_passes,
)
from tracejit.ir.passes.numerics import numerics
from tracejit.ir.passes.rewrite import P, Rule, cse, rewrite
from tracejit.ir.passes.simplify import simplify

__all__ = [
    "PASSES",
    "STAGES",
    "P",
    "Pass",
    "PassEntry",
    "PassRecord",
    "Rule",
    "cse",
    "fold",
    "numerics",
    "optimize",
    "remove_dead_nodes",
    "rewrite",
    "run_passes",
    "simplify",
    "unused_inputs",
]
