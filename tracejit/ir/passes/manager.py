"""The pass manager: one named, ordered list of passes, run at each of three stages.

Stages (the seeds' names, as in torch.compile):

- "pre_grad": a traced graph that may still be differentiated. Every pass keeps gradients.
- "joint": the forward+backward graph autodiff builds, before partitioning.
- "post_grad": a graph that will not be differentiated again: each partitioned graph, and
  what `jit` compiles. Only here is `stop_gradient` dropped (it is an identity for values).

Each pass is `Graph -> Graph` and returns its input unchanged (the same object) when it has
nothing to do, so the manager knows which passes changed the graph. The input graph is never
mutated: jit caches traced graphs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tracejit.errors import TracejitValueError
from tracejit.ir.graph import Graph, verify
from tracejit.ir.passes.dce import remove_dead_nodes
from tracejit.ir.passes.fold import RULES as FOLD_RULES
from tracejit.ir.passes.numerics import RULES as NUMERICS_RULES
from tracejit.ir.passes.regions import region_pass
from tracejit.ir.passes.rewrite import Rule, rewrite
from tracejit.ir.passes.simplify import RULES as SIMPLIFY_RULES
from tracejit.ir.passes.simplify import STOP_GRADIENT_RULES
from tracejit.ir.passes.split_complex import split_complex
from tracejit.ir.passes.widen import widen_low_precision

Pass = Callable[[Graph], Graph]
STAGES = ("pre_grad", "joint", "post_grad")
ALL_STAGES = frozenset(STAGES)


@dataclass(frozen=True)
class PassEntry:
    """One step of the pipeline: a name (for dumps), the pass, and the stages it runs in.

    `run(graph, stats)` returns the new graph; `stats` collects rule firing counts.
    """

    name: str
    run: Callable[[Graph, dict], Graph]
    stages: frozenset[str] = ALL_STAGES


@dataclass
class PassRecord:
    """What one pass did: whether it changed the graph, and the node counts around it."""

    name: str
    changed: bool
    nodes_before: int
    nodes_after: int
    rules: dict[str, int] = field(default_factory=dict)


def _no_stats(fn: Pass):
    """Adapt a pass without rule statistics to the `(graph, stats)` calling convention."""

    def run(graph: Graph, stats: dict | None = None) -> Graph:
        return fn(graph)

    run.__name__ = fn.__name__
    return run


def lower_dtypes(graph: Graph, stats: dict | None = None) -> Graph:
    """Steps the backends compute in other dtypes: ir/passes/widen.py, split_complex.py."""
    return split_complex(widen_low_precision(graph, stats), stats)


def rewrite_pass(*tables: list[Rule]):
    """The pass applying the rule `tables`, in order of priority, in one sweep (ir/passes/
    rewrite.py); the sweep also merges equal nodes (CSE)."""
    rules = [rule for table in tables for rule in table]

    def run(graph: Graph, stats: dict | None = None) -> Graph:
        return rewrite(graph, rules, stats)

    return run


# The rule tables of the one rewrite sweep, in priority order. Folding first, so that
# `x * (2 - 1)` becomes `x * 1` and then `x`; simplification next; numerics on the
# canonical graph. A node's inputs are final when it is matched, and replacements are offered
# to every table, so one sweep reaches the fixed point.
GRAD_SAFE_RULES = (FOLD_RULES, SIMPLIFY_RULES)
POST_GRAD_RULES = (FOLD_RULES, SIMPLIFY_RULES, STOP_GRADIENT_RULES)

PASSES: list[PassEntry] = [
    PassEntry(
        "rewrite", rewrite_pass(*GRAD_SAFE_RULES, NUMERICS_RULES), frozenset({"pre_grad", "joint"})
    ),
    PassEntry("rewrite", rewrite_pass(*POST_GRAD_RULES, NUMERICS_RULES), frozenset({"post_grad"})),
    # reductions and matmuls over float16/bfloat16 in float32, over complex on real parts
    # (after the rewrites: they match the graph as traced)
    PassEntry("dtypes", lower_dtypes, frozenset({"post_grad"})),
    PassEntry("dce", _no_stats(remove_dead_nodes)),  # a graph traced with dead nodes
    # Last: bodies of loops and branches, with the enclosing graph's unused outputs pruned.
    *(PassEntry("regions", region_pass(s), frozenset({s})) for s in STAGES),
]


def run_passes(
    graph: Graph,
    stage: str = "post_grad",
    verify_each: bool = False,
    dump=None,
    passes: list[PassEntry] | None = None,
) -> tuple[Graph, list[PassRecord]]:
    """Run the pipeline for `stage`; the result and a record per pass that ran.

    `dump` (a `tracejit.debug` dump handle, or None) receives the graph after each pass that
    changed it, as `after_<pass>`, then a summary of the passes as `<stage>_passes`.

    >>> import numpy as np, tracejit as tj
    >>> g, log = run_passes(tj.make_ir(lambda x: np.sin(x) * 1.0)(np.ones(2)))
    >>> [(r.name, r.rules) for r in log if r.changed]
    [('rewrite', {'mul-one': 1})]
    """
    if stage not in STAGES:
        raise TracejitValueError(f"unknown pass stage {stage!r}; use one of {STAGES}")
    records = []
    for entry in PASSES if passes is None else passes:
        if stage not in entry.stages:
            continue
        before = graph
        stats: dict[str, int] = {}
        graph = entry.run(graph, stats)
        changed = graph is not before
        records.append(PassRecord(entry.name, changed, len(before.nodes), len(graph.nodes), stats))
        if changed:
            if verify_each:
                verify(graph)
            if dump is not None:
                dump.write(f"after_{entry.name}", graph)
    if dump is not None and getattr(dump, "enabled", True):
        dump.write(f"{stage}_passes", format_records(records))
    return graph, records


def format_records(records: list[PassRecord]) -> str:
    """One line per pass: changed or not, node counts, the rules that fired."""
    lines = []
    for r in records:
        rules = ", ".join(f"{k} x{v}" for k, v in sorted(r.rules.items()))
        mark = "changed" if r.changed else "-"
        line = f"{r.name:<10} {mark:<8} {r.nodes_before:>6} -> {r.nodes_after:<6} {rules}"
        lines.append(line.rstrip())
    return "\n".join(lines)


def optimize(
    graph: Graph,
    verify_each: bool = False,
    stage: str = "post_grad",
    dump=None,
) -> Graph:
    """Run the pass pipeline of `stage` on `graph`; returns a new graph (or `graph` itself
    when no pass changed anything). `verify_each` runs the IR verifier after each pass.

    >>> import numpy as np, tracejit as tj
    >>> print(optimize(tj.make_ir(lambda x: np.log(1.0 + x * 1.0))(np.ones(2))))
    { lambda a:f64[2] . let
        b:f64[2] = log1p a
      in (b,) }
    """
    return run_passes(graph, stage, verify_each, dump)[0]
