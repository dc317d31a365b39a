"""MSCCL XML algorithms written by portsim: rings, all-pairs, trees (tests and examples).

Each function returns the XML text of a correct MSCCL algorithm on ``n``
ranks (2 to any number), which :func:`~portsim.planners.msccl.algorithm.read_msccl`
reads; the tests check their timings against closed forms.

Examples
--------
>>> from portsim.planners.msccl.algorithm import read_msccl
>>> read_msccl(ring_allgather_xml(4)).collective
'allgather'
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from portsim.planners.msccl.algorithm import (  # read_msccl: used by the examples
    RUNTIME_MAX_THREADBLOCKS_PER_CHANNEL,
    read_msccl,  # noqa: F401
)
from portsim.simulator.errors import ScheduleError

__all__ = ["allpairs_alltoall_xml", "ring_allgather_xml", "ring_allreduce_xml",
           "ring_reduce_scatter_xml", "tree_broadcast_xml", "tree_reduce_xml"]


# -- helpers ----------------------------------------------------------------------------


def _algo_element(name: str, coll: str, n: int, nchunks: int, *, inplace: bool = True,
                  nchannels: int = 1, root: int | None = None) -> ET.Element:
    attrs = {"name": name, "proto": "Simple", "nchannels": str(nchannels),
             "nchunksperloop": str(nchunks), "ngpus": str(n), "coll": coll,
             "inplace": "1" if inplace else "0"}
    if root is not None:
        attrs["root"] = str(root)
    return ET.Element("algo", attrs)


def _step(tb: ET.Element, kind: str, src: tuple[str, int], dst: tuple[str, int],
          cnt: int = 1, dep: tuple[int, int] | None = None) -> None:
    index = len(tb)
    depid, deps = dep if dep is not None else (-1, -1)
    ET.SubElement(tb, "step", s=str(index), type=kind, srcbuf=src[0], srcoff=str(src[1]),
                  dstbuf=dst[0], dstoff=str(dst[1]), cnt=str(cnt), depid=str(depid),
                  deps=str(deps), hasdep="0")


def _finish(root: ET.Element) -> str:
    """The XML text of ``root``, with ``hasdep="1"`` on each step another step depends on.

    The MSCCL runtime releases a step waiting on ``depid=b deps=s`` only when
    a step of threadblock ``b`` from ``s`` on with ``hasdep="1"`` ends (see
    :func:`~portsim.planners.msccl.algorithm.read_msccl`): the step named is
    marked, so it is the one that releases the wait.
    """
    for gpu in root:
        named = {(int(step.get("depid", "-1")), int(step.get("deps", "-1")))
                 for tb in gpu for step in tb}
        for tb in gpu:
            for step in tb:
                step.set("hasdep", "1" if (int(tb.get("id", "-1")), int(step.get("s", "-1")))
                         in named else "0")
    return ET.tostring(root, encoding="unicode")


def _need_ranks(n: int, least: int = 2) -> None:
    if n < least:
        raise ScheduleError(f"needs at least {least} ranks", value=n)


def ring_allgather_xml(n: int, *, chunks: int = 1, name: str = "ring_allgather") -> str:
    """An MSCCL ring allgather on ``n`` ranks, ``chunks`` chunks per rank, in place.

    Chunk index ``j`` runs its own ring on channel ``j`` (threadblock ``j`` of
    every rank): rank ``r`` sends chunk ``j`` of its block to ``r + 1``, then
    forwards (``rcs``) the chunk it received in the step before, ``n - 2``
    times, and ends with a plain receive.  With ``chunks = 1`` it is the
    program of msccl-tools' ``allgather_ring.py n 1 1``.

    Examples
    --------
    >>> algo = read_msccl(ring_allgather_xml(4, chunks=2))
    >>> algo.ngpus, algo.nchunksperloop, algo.chunks_per_rank
    (4, 8, 2)
    """
    _need_ranks(n)
    if chunks < 1:
        raise ScheduleError("chunks must be >= 1", value=chunks)
    root = _algo_element(name, "allgather", n, n * chunks, nchannels=chunks)
    for r in range(n):
        gpu = ET.SubElement(root, "gpu", id=str(r), i_chunks="0", o_chunks=str(n * chunks),
                            s_chunks="0")
        for j in range(chunks):
            tb = ET.SubElement(gpu, "tb", id=str(j), send=str((r + 1) % n),
                               recv=str((r - 1) % n), chan=str(j))
            for s in range(n):
                off = ((r - s) % n) * chunks + j
                kind = "s" if s == 0 else "r" if s == n - 1 else "rcs"
                _step(tb, kind, ("o", off), ("o", off))
    return _finish(root)


# -- more generators ----------------------------------------------------


def allpairs_alltoall_xml(n: int, *, chunks: int = 1, ordered: bool = False,
                          name: str = "allpairs_alltoall") -> str:
    """An MSCCL all-pairs all-to-all on ``n`` ranks, ``chunks`` chunks per pair, out of place.

    Rank ``r`` copies its own block (``cpy``) and has one threadblock per
    peer ``r + s`` (``s = 1..n-1``) that sends it its block and one per peer
    ``r - s`` that receives that peer's block: in step order, every rank
    sends to the ``s``-th next rank at step ``s``, a rotation (each step a
    permutation of the ranks), unlike msccl-tools' ``alltoall_allpairs.py``,
    which sends in rank order.  With ``ordered``, each send also depends on
    the previous one (``depid``/``deps``), so the rotation is kept however
    the ports let the sends start (threadblocks ready together are otherwise
    placed in rank order).

    The ``2n - 1`` threadblocks of a rank fill the channels 32 at a time, in
    threadblock order (16 sending and 16 receiving: the MSCCL runtime loads
    :data:`~portsim.planners.msccl.algorithm.RUNTIME_MAX_THREADBLOCKS_PER_CHANNEL`
    of each a channel); a send and its receive share the rotation step ``s``,
    hence the channel, as msccl-tools' all-to-all programs spread their
    connections over channels by peer; up to 16 ranks, all on channel 0.

    Examples
    --------
    >>> algo = read_msccl(allpairs_alltoall_xml(3))
    >>> algo.collective, algo.nchunksperloop, len(algo.gpus[0].threadblocks)
    ('alltoall', 3, 5)
    >>> algo = read_msccl(allpairs_alltoall_xml(64))
    >>> algo.nchannels, [tb.chan for tb in algo.gpus[0].threadblocks][30:34]
    (4, [0, 0, 1, 1])
    """
    _need_ranks(n)
    if chunks < 1:
        raise ScheduleError("chunks must be >= 1", value=chunks)
    c = chunks
    per_channel = RUNTIME_MAX_THREADBLOCKS_PER_CHANNEL  # even: a step's pair shares one
    root = _algo_element(name, "alltoall", n, n * c, inplace=False,
                         nchannels=-(-(2 * n - 1) // per_channel))
    for r in range(n):
        gpu = ET.SubElement(root, "gpu", id=str(r), i_chunks=str(n * c), o_chunks=str(n * c),
                            s_chunks="0")
        tb_id = 0
        for s in range(1, n):
            to, frm = (r + s) % n, (r - s) % n
            chan = str(tb_id // per_channel)
            send = ET.SubElement(gpu, "tb", id=str(tb_id), send=str(to), recv="-1", chan=chan)
            recv = ET.SubElement(gpu, "tb", id=str(tb_id + 1), send="-1", recv=str(frm),
                                 chan=chan)
            tb_id += 2
            dep = (tb_id - 4, 0) if ordered and s > 1 else None
            _step(send, "s", ("i", to * c), ("o", r * c), cnt=c, dep=dep)
            _step(recv, "r", ("i", r * c), ("o", frm * c), cnt=c)
        own = ET.SubElement(gpu, "tb", id=str(tb_id), send="-1", recv="-1",
                            chan=str(tb_id // per_channel))
        _step(own, "cpy", ("i", r * c), ("o", r * c), cnt=c)
    return _finish(root)


def ring_allreduce_xml(n: int, *, name: str = "ring_allreduce") -> str:
    """An MSCCL ring allreduce on ``n`` ranks, ``n`` chunks, in place.

    One threadblock per rank (send to ``r + 1``, receive from ``r - 1``):
    a reduce-scatter (``s`` of chunk ``r``, then ``n - 2`` receive-reduce-send
    steps ``rrs`` of chunk ``r - s``, and ``rrcs`` of chunk ``r + 1``, which
    rank ``r`` then holds fully reduced and sends on), then an allgather
    (``n - 2`` forwards ``rcs`` and a last receive ``r``).

    Examples
    --------
    >>> algo = read_msccl(ring_allreduce_xml(3))
    >>> [s.type for s in algo.gpus[0].threadblocks[0].steps]
    ['s', 'rrs', 'rrcs', 'rcs', 'r']
    """
    _need_ranks(n)
    root = _algo_element(name, "allreduce", n, n)
    for r in range(n):
        gpu = ET.SubElement(root, "gpu", id=str(r), i_chunks=str(n), o_chunks="0",
                            s_chunks="0")
        tb = ET.SubElement(gpu, "tb", id="0", send=str((r + 1) % n), recv=str((r - 1) % n),
                           chan="0")
        _step(tb, "s", ("i", r), ("i", r))
        for s in range(1, n - 1):
            k = (r - s) % n
            _step(tb, "rrs", ("i", k), ("i", k))
        k = (r + 1) % n
        _step(tb, "rrcs", ("i", k), ("i", k))
        for t in range(1, n):
            k = (r + 1 - t) % n
            _step(tb, "rcs" if t < n - 1 else "r", ("i", k), ("i", k))
    return _finish(root)


def ring_reduce_scatter_xml(n: int, *, name: str = "ring_reduce_scatter") -> str:
    """An MSCCL ring reduce-scatter on ``n`` ranks, one chunk per block, in place.

    One threadblock per rank (send to ``r + 1``, receive from ``r - 1``): at
    step ``s`` rank ``r`` works on block ``r - 1 - s``: it sends its own
    contribution (``s``), then ``n - 2`` times receives, reduces and sends
    on (``rrs``), and last receives its own block ``r``, reduces it and
    stores it in its output (``rrc``).

    Examples
    --------
    >>> [s.type for s in read_msccl(ring_reduce_scatter_xml(4)).gpus[0].threadblocks[0].steps]
    ['s', 'rrs', 'rrs', 'rrc']
    """
    _need_ranks(n)
    root = _algo_element(name, "reducescatter", n, n)  # the runtime's name
    for r in range(n):
        gpu = ET.SubElement(root, "gpu", id=str(r), i_chunks=str(n), o_chunks="1",
                            s_chunks="0")
        tb = ET.SubElement(gpu, "tb", id="0", send=str((r + 1) % n), recv=str((r - 1) % n),
                           chan="0")
        for s in range(n):
            k = (r - 1 - s) % n
            if s == n - 1:
                _step(tb, "rrc", ("i", k), ("o", 0))
            else:
                _step(tb, "s" if s == 0 else "rrs", ("i", k), ("i", k))
    return _finish(root)


def _children(v: int, n: int) -> list[int]:
    return [w for w in (2 * v + 1, 2 * v + 2) if w < n]


def tree_broadcast_xml(n: int, *, chunks: int = 1, name: str = "tree_broadcast") -> str:
    """An MSCCL broadcast from rank 0 down the binary tree of ``n`` ranks (heap order:
    the children of ``v`` are ``2v + 1`` and ``2v + 2``), ``chunks`` chunks.

    A rank receives each chunk into its output (threadblock 0, ``r``) and
    sends it to each child from a threadblock of its own, each step
    depending (``depid``/``deps``) on the receive of that chunk.

    Examples
    --------
    >>> algo = read_msccl(tree_broadcast_xml(5))
    >>> [(t.send, t.recv) for t in algo.gpus[1].threadblocks]
    [(-1, 0), (3, -1), (4, -1)]
    """
    _need_ranks(n)
    if chunks < 1:
        raise ScheduleError("chunks must be >= 1", value=chunks)
    root = _algo_element(name, "broadcast", n, chunks, inplace=False, root=0)
    for v in range(n):
        gpu = ET.SubElement(root, "gpu", id=str(v), i_chunks=str(chunks if v == 0 else 0),
                            o_chunks=str(0 if v == 0 else chunks), s_chunks="0")
        buf = "i" if v == 0 else "o"
        if v > 0:
            recv = ET.SubElement(gpu, "tb", id="0", send="-1", recv=str((v - 1) // 2),
                                 chan="0")
            for j in range(chunks):
                _step(recv, "r", (buf, j), (buf, j))
        for kid in _children(v, n):
            tb = ET.SubElement(gpu, "tb", id=str(len(gpu)), send=str(kid), recv="-1",
                               chan="0")
            for j in range(chunks):
                _step(tb, "s", (buf, j), (buf, j), dep=None if v == 0 else (0, j))
    return _finish(root)


def tree_reduce_xml(n: int, *, chunks: int = 1, name: str = "tree_reduce") -> str:
    """An MSCCL commutative reduce to rank 0 up the binary tree of ``n`` ranks (heap
    order), ``chunks`` chunks, out of place.

    A leaf sends its input; an inner rank receives its first child's partial
    and reduces it into its input (``rrc``), then receives the second
    child's, reduces and sends the result up (``rrs``, depending on the
    ``rrc`` of the same chunk; ``rrs`` straight away with one child).  Rank 0
    stores the result in its output.

    Examples
    --------
    >>> algo = read_msccl(tree_reduce_xml(4))
    >>> [[s.type for s in t.steps] for t in algo.gpus[1].threadblocks]
    [['rrs']]
    """
    _need_ranks(n)
    if chunks < 1:
        raise ScheduleError("chunks must be >= 1", value=chunks)
    root = _algo_element(name, "reduce", n, chunks, inplace=False, root=0)
    for v in range(n):
        kids = _children(v, n)
        up = -1 if v == 0 else (v - 1) // 2
        gpu = ET.SubElement(root, "gpu", id=str(v), i_chunks=str(chunks),
                            o_chunks=str(chunks if v == 0 else 0), s_chunks="0")
        last_dst = "o" if v == 0 else "i"
        if not kids:
            tb = ET.SubElement(gpu, "tb", id="0", send=str(up), recv="-1", chan="0")
            for j in range(chunks):
                _step(tb, "s", ("i", j), ("i", j))
            continue
        if len(kids) == 2:
            a = ET.SubElement(gpu, "tb", id="0", send="-1", recv=str(kids[0]), chan="0")
            for j in range(chunks):
                _step(a, "rrc", ("i", j), ("i", j))
        b_id = 1 if len(kids) == 2 else 0
        b = ET.SubElement(gpu, "tb", id=str(b_id), send=str(up), recv=str(kids[-1]), chan="0")
        for j in range(chunks):
            dep = (0, j) if len(kids) == 2 else None
            _step(b, "rrc" if v == 0 else "rrs", ("i", j), (last_dst, j), dep=dep)
    return _finish(root)
