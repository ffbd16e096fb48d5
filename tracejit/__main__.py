"""Command line: ``python -m tracejit cache info|clear``.

    $ python -m tracejit cache info
    dir      /home/me/.cache/tracejit
    entries  12
    size     1.4 MB (evicting past 2.1 GB)
    $ python -m tracejit cache info --json
    {"dir": "/home/me/.cache/tracejit", "entries": 12, "bytes": 1432118, ...}
    $ python -m tracejit cache clear
    removed 12 entries (1.4 MB) from /home/me/.cache/tracejit

`cache clear` is safe while other processes compile: what a build or a load is using at
that moment is kept (and reported), everything else the cache owns is removed.

The directory is ``TRACEJIT_CACHE_DIR`` when set, else the user cache directory.
"""

from __future__ import annotations

import argparse
import json
import sys

from tracejit.cache import cache_info, clear_cache
from tracejit.errors import InternalError


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise InternalError("unreachable")


def _cap(max_bytes: int) -> str:
    return f"evicting past {_size(max_bytes)}" if max_bytes else "no size cap"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tracejit", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cache = commands.add_parser("cache", help="inspect or empty the persistent compile cache")
    actions = cache.add_subparsers(dest="action", required=True)
    info = actions.add_parser("info", help="print the cache directory, entry count and size")
    info.add_argument("--json", action="store_true", help="print one JSON object")
    actions.add_parser("clear", help="remove every cached library")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    >>> main(["cache", "info", "--json"])  # doctest: +ELLIPSIS
    {"dir": "...", "entries": ..., "bytes": ..., "hits": ..., "misses": ..., "max_bytes": ...}
    0
    """
    args = _parser().parse_args(argv)
    if args.action == "info":
        info = cache_info()
        if args.json:
            print(json.dumps(info))
        else:
            print(
                f"dir      {info['dir']}\nentries  {info['entries']}\nsize     "
                f"{_size(info['bytes'])} ({_cap(info['max_bytes'])})"
            )
    else:
        removed = clear_cache()
        kept = f"; kept {removed['in_use']} in use by other processes" if removed["in_use"] else ""
        print(
            f"removed {removed['entries']} entries ({_size(removed['bytes'])}) from "
            f"{removed['dir']}{kept}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
