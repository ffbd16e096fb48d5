"""Batching rules of the control-flow primitives (`ir/control.py`): scan, while_loop, cond.

Loop-carried values are always batched (an unbatched initial value is broadcast), which
keeps each body's batch layout fixed from one iteration to the next. A `while_loop` whose
predicate differs per example runs until every example is done, and an example that is
done keeps its carry (JAX's rule). A `cond` on a per-example index runs every branch and
selects per example; on a shared index it stays one `cond` of batched branches.
"""

from __future__ import annotations

import numpy as np

from tracejit.batching.emit import move_axis, to_front
from tracejit.batching.interpreter import batch_graph
from tracejit.batching.rules import defbatch
from tracejit.ir.builder import Emitter
from tracejit.ir.custom_call import inline_graph
from tracejit.ir.graph import Graph, fresh
from tracejit.ir.regions import Region

_I32 = np.dtype(np.int32)


def _front_or_none(b, xs, bdims):
    """Batched operands moved to axis 0; unbatched ones left as they are."""
    return [x if d is None else to_front(b, x, d, 0) for x, d in zip(xs, bdims)], [
        None if d is None else 0 for d in bdims
    ]


@defbatch("scan")
def _scan(b, size, xs, bdims, *, body, length, reverse, n_consts, n_carry):
    n_fixed = n_consts + n_carry
    consts, cdims = _front_or_none(b, xs[:n_consts], bdims[:n_consts])
    carry = [to_front(b, x, d, size) for x, d in zip(xs[n_consts:n_fixed], bdims[n_consts:n_fixed])]
    seqs, sdims = [], []
    for x, d in zip(xs[n_fixed:], bdims[n_fixed:]):
        # the batch axis goes right after the scanned axis, so each slice is batched first
        seqs.append(x if d is None else move_axis(b, x, d, 1))
        sdims.append(None if d is None else 0)
    g = body.graph
    in_dims = cdims + [0] * n_carry + sdims
    new_body = batch_graph(g, in_dims, size, [0] * len(g.outputs))
    outs = b.bind_all(
        "scan",
        *consts,
        *carry,
        *seqs,
        body=Region(new_body),
        length=length,
        reverse=reverse,
        n_consts=n_consts,
        n_carry=n_carry,
    )
    return outs, [0] * n_carry + [1] * (len(outs) - n_carry)


@defbatch("while_loop")
def _while_loop(b, size, xs, bdims, *, cond, body, n_cond_consts):
    n_carry = len(body.graph.outputs)
    n_body_consts = len(body.graph.inputs) - n_carry
    split = n_cond_consts + n_body_consts
    cond_consts, cdims = _front_or_none(b, xs[:n_cond_consts], bdims[:n_cond_consts])
    body_consts, bdims_ = _front_or_none(b, xs[n_cond_consts:split], bdims[n_cond_consts:split])
    carry = [to_front(b, x, d, size) for x, d in zip(xs[split:], bdims[split:])]
    pred = batch_graph(cond.graph, cdims + [0] * n_carry, size, [0])
    step = batch_graph(body.graph, bdims_ + [0] * n_carry, size, [0] * n_carry)
    new_cond = _any_graph(pred, n_cond_consts)
    new_body = _masked_body(pred, step, n_cond_consts, n_body_consts, n_carry)
    outs = b.bind_all(
        "while_loop",
        *cond_consts,
        *cond_consts,
        *body_consts,
        *carry,
        cond=Region(new_cond),
        body=Region(new_body),
        n_cond_consts=n_cond_consts,
    )
    return outs, [0] * n_carry


def _any_graph(pred: Graph, n_cond_consts: int) -> Graph:
    """(cond consts, carry) -> bool[]: whether any example's predicate holds."""
    graph = Graph(fresh(pred.inputs), [], [])
    b = Emitter(graph)
    (p,) = inline_graph(graph.nodes, pred, graph.inputs)
    count = b.reduce_sum(b.convert(p, dtype=_I32), axes=(0,))
    graph.outputs = [b.gt(count, b.const(0, _I32))]
    return graph


def _masked_body(pred: Graph, step: Graph, n_cond: int, n_body: int, n_carry: int) -> Graph:
    """(cond consts, body consts, carry) -> carry: one step where the predicate holds."""
    cond_consts, body_consts = fresh(pred.inputs[:n_cond]), fresh(step.inputs[:n_body])
    carry = fresh(step.inputs[n_body:])
    graph = Graph(cond_consts + body_consts + carry, [], [])
    b = Emitter(graph)
    (p,) = inline_graph(graph.nodes, pred, cond_consts + carry)
    new = inline_graph(graph.nodes, step, body_consts + carry)
    for old, nxt in zip(carry, new):
        mask = b.broadcast_in_dim(p, shape=old.shape, dims=(0,)) if old.ndim > 1 else p
        graph.outputs.append(b.select(mask, nxt, old))
    return graph


@defbatch("cond")
def _cond(b, size, xs, bdims, *, branches):
    (index, *operands), (di, *odims) = xs, bdims
    operands, odims = _front_or_none(b, operands, odims)
    n_out = len(branches[0].graph.outputs)
    batched = [batch_graph(r.graph, odims, size, [0] * n_out) for r in branches]
    if di is None:
        outs = b.bind_all("cond", index, *operands, branches=tuple(Region(g) for g in batched))
        return outs, [0] * n_out
    # a per-example branch: run every branch, then pick per example (index clamped as cond)
    index = to_front(b, index, di, size)
    top = len(branches) - 1
    clamped = b.min(b.max(index, b.full(0, index)), b.full(top, index))
    results = [inline_graph(b.graph.nodes, g, operands) for g in batched]
    outs = list(results[0])
    for k in range(1, len(results)):
        hit = b.eq(clamped, b.full(k, clamped))
        for j, (cur, new) in enumerate(zip(outs, results[k])):
            mask = b.broadcast_in_dim(hit, shape=cur.shape, dims=(0,)) if cur.ndim > 1 else hit
            outs[j] = b.select(mask, new, cur)
    return outs, [0] * n_out


__all__: list[str] = []
