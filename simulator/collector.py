"""Pausing Python's cyclic garbage collector while a large result is built.

A replay or a periodic schedule allocates one to three objects per event
(records, items, ``Fraction`` times) that all survive until the call
returns.  CPython's collector counts allocations, not garbage: every 700 of
them it walks the young objects, and once enough of them have survived it
walks the whole heap, which here is mostly the half-built result itself.
Measured on this repository's benchmarks (``benchmarks/periodic.py``,
``benchmarks/engine.py``), those walks were a quarter to a third of a
20,000-event periodic schedule's build and up to a sixth of a
100,000-event replay, and found nothing to free: these calls make almost
no reference cycles (the few they make, such as a SimPy environment and
its callbacks, are freed by the first collection after the call).

:func:`paused_collection` turns the collector off for the duration of one
such call and restores its previous state (an already disabled collector
stays disabled), whatever the call raises.  The objects that survive the
call are then walked once, by the first young collection after it, instead
of several times during it.  The collector is global to the process: a
thread running meanwhile is not collected either, for that short time.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_collection"]


@contextmanager
def paused_collection() -> Iterator[None]:
    """Disable the cyclic garbage collector inside the ``with`` block (or decorated call).

    The previous state is restored on exit, also on an exception: a
    collector disabled before stays disabled.  Reference counting frees
    memory as usual meanwhile; only cycles wait for the next collection.

    Examples
    --------
    >>> import gc
    >>> with paused_collection():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    >>> @paused_collection()
    ... def build():
    ...     return gc.isenabled()
    >>> build(), gc.isenabled()
    (False, True)
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
