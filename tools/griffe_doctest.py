"""A Griffe extension for the docs site: docstring examples (`>>>` blocks) become code blocks.

The package's docstrings hold doctest examples without a Markdown fence (they run as tests
with `pytest --doctest-modules`); Markdown would read `>>>` as nested quotes. mkdocs.yml loads
this file through mkdocstrings' `extensions` option.
"""

from __future__ import annotations

import griffe


def fence_doctests(text: str) -> str:
    """Wrap each run of `>>>` lines (with their output, up to a blank line) in a pycon fence.

    >>> print(fence_doctests("Add.\\n\\n>>> 1 + 1\\n2\\n\\nMore."))
    Add.
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    <BLANKLINE>
    More.
    """
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if not inside and line.lstrip().startswith(">>>"):
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
