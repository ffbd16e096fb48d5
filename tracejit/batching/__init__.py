"""Batching: `vmap`, its graph interpreter and its rule table (one rule per primitive)."""

from tracejit.batching import control as _control  # noqa: F401  (registers rules)
from tracejit.batching import custom as _custom  # noqa: F401  (registers its rule)
from tracejit.batching import linalg as _linalg  # noqa: F401  (linalg and argsort rules)
from tracejit.batching.api import vmap
from tracejit.batching.interpreter import batch_graph
from tracejit.batching.rules import BATCH_RULES, defbatch, rule_for

__all__ = ["BATCH_RULES", "batch_graph", "defbatch", "rule_for", "vmap"]
