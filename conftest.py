"""Settings for every test run from the repository root: tests/ and the package's doctests."""

import os
import tempfile

import tracejit as tj

# Compile into a cache of this test session, never the user's: a stale entry cannot hide a bug,
# and examples that clear or invalidate the cache touch only this one.
if "TRACEJIT_CACHE_DIR" not in os.environ:
    tj.config.cache_dir = tempfile.mkdtemp(prefix="tracejit-test-cache-")
tj.config.verify_graphs = True
