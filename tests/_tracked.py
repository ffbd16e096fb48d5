"""`tracked`: a jitted function that counts its traces and its calls of the general dispatch,
for the tests of jit's fast paths (a call the fast path serves adds to neither)."""

from __future__ import annotations

import functools

import tracejit as tj


def tracked(fun, device: str = "numpy", **options):
    """`tj.jit(fun, device=device, **options)` with `.traces_` (one entry per trace) and
    `.general` (one per general-path call)."""
    traces, general = [], []

    @functools.wraps(fun)  # (the signature names the arguments in errors)
    def body(*args, **kwargs):
        traces.append(1)
        return fun(*args, **kwargs)

    f = tj.jit(body, device=device, **options)
    dispatch = f._dispatch

    def counted(*args, **kwargs):
        general.append(1)
        return dispatch(*args, **kwargs)

    f._dispatch = counted  # (white box: the instance attribute shadows the method)
    f.traces_, f.general = traces, general
    return f
