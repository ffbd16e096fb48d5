"""Moved to tracejit.ir.kernel_simplify (backend-neutral): a re-export until nothing uses it."""

from tracejit.ir.kernel_simplify import *  # moved
