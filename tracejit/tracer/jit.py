"""`tj.jit` and `tj.make_ir`: trace a function once per abstract signature and run it compiled.

The signature of a call is (argument tree structure, shape/dtype/weak of each leaf, static
argument values, device). Python scalars are traced as weak 0-d values, so `f(x, 0.1)` and
`f(x, 0.2)` share one trace.
"""

from __future__ import annotations

import functools
import logging
import types
from typing import Any

import numpy as np

from tracejit import debug, gc_pause, progress, timing
from tracejit.backends import check_device, compile_graph, graph_parts, load_cached
from tracejit.cache import deferred
from tracejit.config import config
from tracejit.const_array import ConstArray
from tracejit.debug_print import PrintingExecutable, hoist_prints
from tracejit.errors import (
    DeviceError,
    IntegerOverflowError,
    TracejitTypeError,
    TracejitValueError,
    UnsupportedError,
)
from tracejit.ir import dtypes
from tracejit.ir.custom_call import expand_custom_calls
from tracejit.ir.graph import Graph
from tracejit.ir.passes import optimize, unused_inputs
from tracejit.pytree import flatten_spec, tree_flatten, tree_unflatten
from tracejit.tracer import checks
from tracejit.tracer.arguments import ArgSpec, SplitCall, abstractify, as_tuple
from tracejit.tracer.core import Tracer
from tracejit.tracer.fast_keys import (
    HOST,
    OutOfRange,
    StaticSplit,
    converting,
    leaf_key,
    store_plan,
)
from tracejit.tracer.jit_options import (
    ShapeDtypeStruct,
    check_donate,
    check_not_donated,
    disable_jit,
    donated_leaves,
    jit_disabled,
    mark_donated,
    run_donating,
)
from tracejit.tracer.lowered import CallSignature, Compiled, Lowered
from tracejit.tracer.tracing import TraceCache, Traced, inline, trace_flat

log = logging.getLogger("tracejit")


class Jitted:
    """A function compiled per abstract signature. See `jit`."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), device=None, donate_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.device = check_device(device) if device is not None else None
        self.spec = ArgSpec(fun, static_argnums, static_argnames, self._label())
        self.static_argnums = self.spec.static_argnums
        self.donate_argnums = check_donate(as_tuple(donate_argnums), self.static_argnums)
        self.traces = TraceCache(fun, self.spec, self._label())
        self._executables: dict[Any, Any] = {}
        self._graphs: dict[Any, Graph] = {}  # the optimized graph per key, for debug_nans
        # (leaf, dtype): a Python int argument the graph converts to a narrower integer dtype
        self._int_args: dict[Any, list] = {}
        # hot paths: a call whose leaves are host arrays and scalars is keyed by the device,
        # the static values, the arguments' structure (none for positional plain arrays) and
        # each leaf's (shape, dtype) or scalar type, and runs without abstractifying (_call,
        # fast_keys.py): key -> (executable, converting scalars if any; output structure or
        # None for a single output)
        self._fast: dict[Any, tuple] = {}
        statics = self.static_argnums or self.spec.static_argnames
        self._split = (
            StaticSplit(self.static_argnums, self.spec.static_argnames) if statics else None
        )

    def trace(self, args: tuple, kwargs: dict) -> tuple[Traced, list]:
        """The traced graph for this call's signature (traced once per signature), and the
        call's traced leaves."""
        return self.traces.get(args, kwargs)

    def _label(self) -> str:
        return f"jit({getattr(self.fun, '__name__', 'function')})"

    def __get__(self, obj, objtype=None):
        """A jitted function in a class body binds like a method (self is argument 0)."""
        if obj is None:
            return self
        return types.MethodType(self, obj)

    # -- calls
    def __call__(self, *args, **kwargs):
        if jit_disabled():
            return self.fun(*args, **kwargs)
        if timing.events is not None:  # tj.profile() is recording
            with timing.span("call", self._label(), signature=_signature(args)):
                return self._call(args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        if self.donate_argnums:
            return self._call_donating(args, kwargs)
        if self._split is not None or config.debug_nans:
            return self._call_static(args, kwargs)
        sig = [self.device or config.default_device]
        # plain arrays, positional (leaf_key's loop, inlined); a keyword argument, a dict,
        # or a scalar ends the loop
        for x in (kwargs,) if kwargs else args:
            if type(x) is not np.ndarray and type(x) is not ConstArray:
                break
            sig.append((x.shape, x.dtype))
        else:
            fast = self._fast.get(tuple(sig))
            if fast is None:
                return self._dispatch(args, kwargs, fast_key=tuple(sig))
            outs = _results(fast[0](list(args)))
            return outs[0] if fast[1] is None else fast[1].unflatten(outs)
        return self._call_keyed([sig[0]], args, kwargs or None, args, kwargs)

    def _call_static(self, args, kwargs):
        """_call of a function with static arguments (keyed by their values too), or with
        debug_nans on (the general path, checking the outputs)."""
        if config.debug_nans:
            return self._dispatch(args, kwargs)
        static, pos, kw = self._split(args, kwargs)
        return self._call_keyed(
            [self.device or config.default_device, static], pos, kw, args, kwargs
        )

    def _call_keyed(self, head: list, pos: tuple, kw: dict | None, args, kwargs):
        """Look up and run a call of traced arguments `pos`, `kw` keyed by `head` (device,
        static values), their structure, whether keywords were passed (f((x, y), {"k": z})
        is not f(x, y, k=z)) and their leaves; a miss goes to the general path."""
        if kw:
            leaves, spec = flatten_spec((pos, kw))
            head += (_KEYWORDS, spec)
        else:
            leaves, spec = flatten_spec(pos)
            head.append(spec)
        key = leaf_key(head, leaves)
        try:
            fast = self._fast.get(key)
        except TypeError:  # an unhashable static value: the general path names it
            return self._dispatch(args, kwargs)
        if fast is None:
            return self._dispatch(args, kwargs, fast_key=key)
        try:
            outs = _results(fast[0](leaves))
        except OutOfRange:  # a Python int: the general path raises the error
            return self._dispatch(args, kwargs)
        return outs[0] if fast[1] is None else fast[1].unflatten(outs)

    def _dispatch(self, args, kwargs, donated: tuple[int, ...] = (), fast_key=None):
        """The general call: inline into an enclosing trace, or look up / compile and run.
        `donated`: leaves whose buffers the outputs may reuse (donate_argnums); `fast_key`:
        the call's key for _call's fast paths (stored where its leaves say the signature)."""
        call = self.spec.split(args, kwargs)
        leaves, treedef = tree_flatten(call.dynamic)
        if any(isinstance(x, Tracer) for x in leaves):
            return self._inline(call)
        try:
            avals = tuple(_fast_aval(x) for x in leaves)
        except (TypeError, IntegerOverflowError):  # name the offending argument (slow path)
            for x, name in zip(leaves, self.spec.leaf_names(call)):
                abstractify(x, name)
            raise
        device = self.device or config.default_device
        key = (treedef, avals, call.static, device)
        entry = self._executables.get(key)
        if entry is None:
            entry = self._compile(key, args, kwargs)
        for i, dtype in self._int_args.get(key, ()):
            if not checks.int_fits(leaves[i], dtype):
                name = self.spec.leaf_names(call)[i]
                checks.check_int_fits(leaves[i], dtype, f"argument {name}")
        executable, out_tree = entry
        arrays = [
            np.asarray(x, dtype=a[1]) if type(x) in HOST else _leaf_array(x, a[1], device)
            for x, a in zip(leaves, avals)
        ]
        if donated and not config.debug_nans:
            outs = _results(run_donating(executable, arrays, leaves, donated))
        else:
            outs = _results(executable(arrays))
        if fast_key is not None:
            plan = store_plan(leaves, avals, self._int_args.get(key, ()))
            if plan is not None:
                out = None if out_tree.spec.is_leaf() else out_tree.spec
                self._fast[fast_key] = (converting(executable, plan) if plan else executable, out)
        if config.debug_nans:
            host = _host_copies if device == "cuda" else lambda xs: xs
            debug.check_outputs(self._graphs[key], host(arrays), host(outs), self._label())
        return tree_unflatten(out_tree, outs)

    def _call_donating(self, args, kwargs):
        """A call with donated arguments: refuse consumed ones, run with the outputs that
        fit written into the donated buffers (ir/donation.py), then mark these consumed."""
        for i in self.donate_argnums:
            if i >= len(args):
                raise TracejitValueError(
                    f"{self._label()}: donate_argnums={sorted(self.donate_argnums)} names "
                    f"argument {i}, but the call passed {len(args)} positional argument(s)"
                )
        call = self.spec.split(args, kwargs)
        leaves = tree_flatten(call.dynamic)[0]
        check_not_donated(leaves, self.spec.leaf_names(call))
        out = self._dispatch(
            args, kwargs, donated_leaves(args, self.static_argnums, self.donate_argnums)
        )
        if not any(isinstance(x, Tracer) for x in leaves):
            for i in self.donate_argnums:
                for leaf in tree_flatten(args[i])[0]:
                    mark_donated(leaf)
        return out

    def _inline(self, call: SplitCall):
        """Called inside another trace: record our graph into it (grad(jit(f)) etc.)."""
        traced, leaves = self.traces.trace_call(call)
        outs = inline(traced.graph, list(leaves) + traced.captured)
        return tree_unflatten(traced.out_tree, outs)

    def _compile(self, key, args, kwargs):
        if config.explain_cache_misses:
            self._explain_miss(key, args, kwargs)
        with (
            gc_pause.paused(),
            progress.track(self._label()),
            debug.start_dump(self._label()) as dump,
            timing.collect() as times,
        ):
            traced, parts, executable = self._trace_and_look_up(key, args, kwargs)
            dump.write("traced", traced.graph)
            graph, prints = traced.graph, []  # graphs that print have no early key
            if executable is None:
                with timing.phase("passes"):
                    graph, prints = hoist_prints(expand_custom_calls(traced.graph))
                    graph = optimize(graph, config.verify_graphs, dump=dump)
            if config.log_compiles or dump.enabled:
                self._report_unused_inputs(graph, args, kwargs, dump)
            if config.log_compiles:
                skipped = (
                    "" if executable is None else "; skipped passes, fusion, codegen, C++ compile"
                )
                log.warning("%s: %s%s", self._label(), timing.format_times(times), skipped)
            if executable is None:
                executable = compile_graph(graph, key[3], self._label(), parts)
            if prints:
                executable = PrintingExecutable(executable, prints, len(traced.graph.outputs))
        self._graphs[key] = graph
        self._int_args[key] = checks.weak_int_targets(traced.graph, key[1])
        entry = (executable, traced.out_tree)
        self._executables[key] = entry
        return entry

    def _trace_and_look_up(self, key, args, kwargs):
        """The traced graph, its persistent key parts and the stored executable (None on a
        miss; warm: the passes, fusion, codegen and C++ compile are skipped). `grad` in the
        trace may record its joint graph as one node (tracejit.cache.deferred), expanded
        here on a miss: a warm process then neither loads nor re-records it."""
        device = key[3]
        weak_int = any(w and np.dtype(d).kind == "i" for _, d, w in key[1])
        token = deferred.DEFER.set(device != "numpy" and not config.debug_nans and not weak_int)
        try:
            with timing.phase("trace"):  # includes autodiff, which is also timed on its own
                traced, _ = self.trace(args, kwargs)
                if deferred.DEFER.get() and not traced.deferring:  # lower() traced it
                    self.traces.forget(traced)  # the key is always the deferring trace's
                    traced, _ = self.trace(args, kwargs)
        finally:
            deferred.DEFER.reset(token)
        parts = graph_parts(traced.graph, device, self._label())
        executable = load_cached(parts, device, self._label())
        if not deferred.has_deferred(traced.graph):
            return traced, parts, executable
        expanded = None
        if executable is None:
            with timing.phase("trace"):
                expanded = deferred.expand(traced.graph)
        if expanded is not None:
            traced.graph = expanded  # what the trace would have recorded
            traced.deferring = False  # not the graph a key is taken from any more
            return traced, parts, None
        self.traces.forget(traced)  # a graph with a deferred node is never reused
        if executable is not None:
            return traced, parts, executable
        with timing.phase("trace"):  # a joint graph's types were not the derived ones
            traced, _ = self.trace(args, kwargs)
        parts = graph_parts(traced.graph, device, self._label())
        return traced, parts, load_cached(parts, device, self._label())

    def _report_unused_inputs(self, graph, args, kwargs, dump):
        """Name the arguments no output depends on (DCE keeps them: they are the signature)."""
        unused = unused_inputs(graph)
        if not unused:
            return
        names = self.traces.leaf_names(args, kwargs)
        listed = ", ".join(repr(names[i]) if i < len(names) else f"input {i}" for i in unused)
        text = f"{self._label()}: no output depends on argument(s) {listed}"
        dump.write("unused_inputs", text)
        if config.log_compiles:
            log.warning(text)

    def _explain_miss(self, key, args, kwargs):
        names = self.traces.leaf_names(args, kwargs)
        if not self._executables:
            log.info("%s: tracing for the first time", self._label())
            return
        diffs = [_signature_diffs(old, key, names) for old in self._executables]
        # the closest earlier signature: fewest differences, the latest one on a tie
        closest = min(reversed(diffs), key=len)
        more = f" (closest of {len(diffs)} earlier signatures)" if len(diffs) > 1 else ""
        log.warning("%s: cache miss, retracing%s: %s", self._label(), more, "; ".join(closest))

    def lower(self, *args, **kwargs) -> Lowered:
        traced, _ = self.trace(args, kwargs)
        device = self.device or config.default_device
        graph, prints = hoist_prints(expand_custom_calls(traced.graph))  # printed: outputs
        graph = optimize(graph, config.verify_graphs)
        call = self.spec.split(args, kwargs)
        signature = CallSignature(
            self.spec, tree_flatten(call.dynamic)[1], call.static, traced.out_tree,
            prints, len(traced.graph.outputs),
        )  # fmt: skip
        return Lowered(graph, device, self._label(), signature)


def _signature(args) -> str:
    return ", ".join(
        f"{x.dtype}{list(x.shape)}" if hasattr(x, "shape") else type(x).__name__ for x in args
    )


def _signature_diffs(old, key, names: list[str]) -> list[str]:
    """How signature `key` differs from the earlier signature `old`, one reason per item."""
    if old[0] != key[0]:
        return [f"argument structure changed: {old[0]} -> {key[0]}"]
    reasons = [f"static arguments changed: {old[2]} -> {key[2]}"] if old[2] != key[2] else []
    if old[3] != key[3]:
        reasons.append(f"device changed: {old[3]} -> {key[3]}")
    for name, a, b in zip(names, old[1], key[1]):
        if a != b:
            reasons.append(f"argument {name!r} changed: {_fmt(a)} -> {_fmt(b)}")
    return reasons


def _fmt(aval) -> str:
    shape, dtype, weak = aval
    return f"{dtypes.short_name(dtype)}[{','.join(map(str, shape))}]{' (weak)' if weak else ''}"


_KEYWORDS = "keywords"  # in a _fast key: the call passed keyword arguments


def _results(outs: list) -> list:
    """Host outputs as ConstArray views: plain NumPy arrays that also have JAX's
    `.block_until_ready()` and `.at[...]` (device arrays are returned as they are)."""
    return [ConstArray.of(o) for o in outs]


def _fast_aval(x):
    if type(x) in HOST:
        return x.shape, dtypes.canonical(x.dtype), False
    return abstractify(x, "argument")


def _leaf_array(x, dtype, device: str):
    """A leaf that is not an ndarray as the executable takes it.

    A CuPy (any `__cuda_array_interface__`) array stays on the GPU for device="cuda" (no
    copy); a NumPy array or scalar for device="cuda" is passed as NumPy and copied to the
    device by the executable. Mixing is explicit, never silent: a GPU array given to a
    host device raises DeviceError instead of being copied back.
    """
    if hasattr(x, "__cuda_array_interface__"):
        if device != "cuda":
            raise DeviceError(
                f"a GPU array ({type(x).__module__}.{type(x).__name__} of shape "
                f"{tuple(x.shape)}) was passed to a function jitted for device={device!r}; "
                "copy it explicitly with tj.device_get(x), or jit with device='cuda'"
            )
        return x
    return np.asarray(x, dtype=dtype)


def _host_copies(xs):
    from tracejit.devices import device_get

    return [device_get(x) for x in xs]


def jit(fun=None, *, static_argnums=(), static_argnames=(), device=None, donate_argnums=()):
    """Compile `fun` per argument signature; use as `@jit` or `@jit(static_argnums=1)`.

    On a method, `@partial(jit, static_argnums=0)` makes `self` static (hashed by identity
    unless its class defines `__hash__`). `donate_argnums`: positional arguments whose
    arrays the caller gives up: an output of a donated array's shape and dtype is written
    into its memory when nothing reads it afterwards (cpu and cuda; ir/donation.py), and a
    donated array passed to a jitted function again raises `DonatedArgumentError`; a donated
    ConstArray (what jit returns) then raises it on every use, and a donated plain NumPy
    array is made read-only (donated_array.py).

    >>> import numpy as np, tracejit as tj
    >>> f = tj.jit(lambda x: np.tanh(x) * 2.0)
    >>> f(np.zeros(3, np.float32))
    array([0., 0., 0.], dtype=float32)
    """
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            device=device,
            donate_argnums=donate_argnums,
        )
    if not callable(fun):
        raise TracejitTypeError(f"jit expects a function, got {type(fun).__name__}")
    return Jitted(fun, static_argnums, static_argnames, device, donate_argnums)


def make_ir(fun, static_argnums=(), static_argnames=()):
    """A function returning the traced `Graph` of `fun` for the given arguments.

    >>> import numpy as np, tracejit as tj
    >>> print(tj.make_ir(lambda x: x * 2.0)(np.ones(3, np.float32)))
    { lambda a:f32[3] . let
        b:f32[] = const[value=2.0]
        c:f32[3] = broadcast_in_dim[dims=(), shape=(3,)] b
        d:f32[3] = mul a c
      in (d,) }
    """
    jitted = Jitted(fun, static_argnums, static_argnames)

    def make(*args, **kwargs) -> Graph:
        traced, _ = jitted.trace(args, kwargs)
        return traced.graph

    return make


__all__ = [
    "Compiled",
    "Jitted",
    "Lowered",
    "ShapeDtypeStruct",
    "Traced",
    "UnsupportedError",
    "abstractify",
    "disable_jit",
    "jit",
    "make_ir",
    "trace_flat",
]
