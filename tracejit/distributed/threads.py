"""Which thread may run collectives over several processes: one, the first that does.

MPI matches collectives by their order on each process, so every process must issue them in
the same order; two threads of one process issuing them would interleave differently on each
process (wrong sums, or a hang), and MPI forbids concurrent collectives on one communicator.
NCCL's communicators have the same rule. So the first thread that runs a collective over
several processes owns them (until it ends): a compiled function (CPU executable, NCCL step)
or an eager collective (MpiComm) called from another thread raises DistributedError at once,
before anything reaches MPI. Over one process collectives are copies: any thread may run them.

>>> import threading
>>> owner = Owner()
>>> owner.check("psum", size=2)  # this thread now owns the collectives
>>> errors = []
>>> def other():
...     try:
...         owner.check("psum", size=2)
...     except DistributedError as e:
...         errors.append(str(e).split(":")[0])
>>> t = threading.Thread(target=other); t.start(); t.join()
>>> errors
['psum']
"""

from __future__ import annotations

import threading

from tracejit.errors import DistributedError


class Owner:
    """The thread that runs this process's collectives (the first to run one, while alive)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def check(self, what: str, size: int) -> None:
        """Raise DistributedError unless the calling thread may run collective `what` over
        `size` processes."""
        if size == 1:
            return
        me = threading.current_thread()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = me
            owner = self._thread
        if owner is not me:
            raise DistributedError(
                f"{what}: called from thread {me.name!r}, but thread {owner.name!r} runs this "
                "process's collectives over several processes; MPI (and NCCL) match "
                "collectives by their order on each process, which concurrent threads cannot "
                "keep the same on every process: run every function with collectives from "
                "one thread"
            )


OWNER = Owner()

__all__ = ["OWNER", "Owner"]
