"""Kernels equal up to their name and buffer numbering, emitted once (both backends).

An unrolled loop produces the same kernel many times over different buffers; a backend
emits its text once and calls it with each step's buffers.
"""

from __future__ import annotations

import re

BUFFER = re.compile(r"\bb(\d+)\b")


class KernelDedupe:
    """Finds kernels whose text is the same up to their name and buffer numbering.

    A kernel's text names its buffer parameters `b<id>` (ids listed in `params`, in parameter
    order) and itself by `name` (also as a prefix of helper names). `first(text, name,
    params)` is the name of an earlier kernel with the same text after renaming those, or None
    when this one is new (then it is remembered). Equal text is equal code, so calling the
    earlier kernel with this one's buffers computes the same thing.

    >>> d = KernelDedupe()
    >>> d.first("void k0(float* b3) { b3[0] = 1; }", "k0", [3]) is None
    True
    >>> d.first("void k7(float* b9) { b9[0] = 1; }", "k7", [9])
    'k0'
    >>> d.first("void k8(float* b9) { b9[0] = 2; }", "k8", [9]) is None
    True
    """

    def __init__(self):
        self.names: dict[str, str] = {}

    def first(self, text: str, name: str, params: list[int]) -> str | None:
        index = {b: i for i, b in enumerate(params)}
        unknown = False

        def rename(m: re.Match) -> str:
            nonlocal unknown
            i = index.get(int(m.group(1)))
            unknown |= i is None
            return f"p{i}"

        key = BUFFER.sub(rename, text.replace(name, "\0"))
        if unknown:  # a buffer outside the parameters: never shared
            return None
        found = self.names.get(key)
        if found is None:
            self.names[key] = name
        return found


__all__ = ["BUFFER", "KernelDedupe"]
