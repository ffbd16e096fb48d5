"""The cyclic collector paused during compiles (tracejit/gc_pause.py)."""

from __future__ import annotations

import gc

from tracejit.gc_pause import paused


def _in_oldest_generation(obj) -> bool:
    return any(o is obj for o in gc.get_objects(generation=2))


def test_what_survives_a_compile_goes_to_the_oldest_generation_unscanned():
    # The case with nothing frozen by anyone else. Something in this process (a pytest plugin
    # on the GPU machine) may have called gc.freeze(): unfreezing only moves those objects to
    # the oldest generation, where they would be anyway.
    gc.unfreeze()
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(5000)]
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert _in_oldest_generation(kept) and _in_oldest_generation(kept[-1])


def test_a_users_frozen_objects_stay_frozen_and_survivors_stay_young():
    # No automatic collection between the pause's end and the check (the collector stays
    # enabled, so `paused` takes its usual path): a young collection that happened to also
    # collect the middle generation would move `kept` to the oldest one by itself.
    thresholds = gc.get_threshold()
    gc.set_threshold(1 << 30)
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with paused():
            kept = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
        assert not _in_oldest_generation(kept)
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_nested_pauses_resume_only_at_the_outermost():
    with paused():
        with paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
