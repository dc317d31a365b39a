"""An MSCCL XML algorithm: read it, give it a meaning, list-schedule it on a platform.

The MSCCL runtime of NCCL/RCCL executes collectives written as XML (the
format msccl-tools, TACCL, TE-CCL and ForestColl emit).  This module turns
such a file into a timed one-shot portsim :class:`~portsim.simulator.schedule.Schedule`;
the ``msccl`` planner (:mod:`portsim.planners.msccl.planner`) offers it to
scenarios, and :func:`portsim.scenarios.msccl.validate_msccl` has the engine
judge it like any planner's schedule.

- **Reader** (:func:`read_msccl`): ``<algo>``, ``<gpu>``, ``<tb>``,
  ``<step>`` into frozen records; every malformed file raises one
  :class:`~portsim.simulator.errors.ScheduleError` naming the file, the GPU,
  the threadblock, the step and the value.
- **Meaning**: rank ``r`` is the ``r``-th participant (the platform's
  processors in order, or an explicit ``ranks`` list).  Chunk index ``j``
  of a rank's block is portsim instance ``#j``: an allgather of
  ``nchunksperloop = n * c`` chunks is ``c`` instances of portsim's
  allgather (``m[P_r]#j``); an all-to-all likewise (``m[P_r,P_k]#j``); an
  allreduce, a reduce or a broadcast of ``C`` chunks is ``C`` instances
  (``v{...}#j``, ``b#j``).  MSCCL reductions are commutative.
- **Timing**: a chunk is ``size / nchunksperloop``; a send of one chunk
  goes along a cheapest path of the platform hop by hop (store and forward,
  every hop but the last a ``transit`` send: a GPU or switch on the path
  keeps no copy) and lasts each link's
  :meth:`~portsim.simulator.platform.Link.duration` for the chunk; a step
  of ``cnt`` chunks sends them one after the other;
  a reduction costs the node's compute time per chunk; copies and ``nop``
  are free.  Steps are list-scheduled with
  :class:`~portsim.planners.timing.PortClock` semantics under the
  platform's port model: a step starts when its predecessor in the
  threadblock, its dependency, its peer step and its data are ready, and
  every port and link it needs is free.  A dependency ``depid=b deps=s``
  is ready, as in the MSCCL runtime, when threadblock ``b`` ends its first
  step from ``s`` on with ``hasdep="1"`` (only those steps publish a flag);
  a file where no such step exists is refused (the runtime would hang).

Step semantics (``cnt`` chunks from ``srcbuf[srcoff]`` / to ``dstbuf[dstoff]``):
``s`` sends the source; ``r`` receives into the destination; ``rcs``
receives into the destination and forwards what it received; ``rrs``
receives, reduces with the source and sends the result; ``rrc`` receives,
reduces with the source and stores into the destination; ``rrcs`` does both;
``re`` reduces the source into the destination; ``cpy`` copies the source
to the destination; ``nop`` only orders.  Sends and receives pair up in
order on each (channel, sender, receiver).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import networkx as nx

from portsim.planners.timing import PortClock, cheapest_path, cheapest_paths_from
from portsim.simulator.collector import paused_collection
from portsim.simulator.errors import PortsimError, ScheduleError
from portsim.simulator.items import Item, combine
from portsim.simulator.numbers import parse_rational, with_article
from portsim.simulator.operations import Operation, OperationKind
from portsim.simulator.platform import NodeId, Platform
from portsim.simulator.schedule import Schedule

__all__ = ["MAX_MSCCL_CHUNKS", "MSCCL_COLLECTIVES", "RUNTIME_MAX_STEPS",
           "RUNTIME_MAX_THREADBLOCKS_PER_CHANNEL", "STEP_TYPES", "MscclAlgorithm",
           "MscclGpu", "MscclStep", "MscclThreadblock", "MscclTiming", "read_msccl", "time_msccl"]

STEP_TYPES: frozenset[str] = frozenset({"s", "r", "rcs", "rrs", "rrc", "rrcs", "re", "cpy",
                                        "nop"})
"""The step types of the MSCCL XML format."""

MSCCL_COLLECTIVES: frozenset[str] = frozenset({"allgather", "allreduce", "alltoall",
                                               "broadcast", "reduce", "reduce_scatter"})
"""The ``coll`` values portsim gives a meaning to."""

MAX_MSCCL_CHUNKS = 1_000_000
"""Cap on the chunks an algorithm names.

``2 * ngpus * nchunksperloop`` (the buffer slots given a meaning) plus every
step's ``cnt``.  Each is an item or an event of the list schedule, so a file
past it (``cnt="1000000000"``) is refused as bad input, saying so, instead of running for hours."""

_INTEGER_RE = re.compile(r"[+-]?[0-9]{1,18}")
"""An integer attribute: ASCII digits, at most 18 (numbers stay below 10^18)."""

_COLL_ALIASES = {"reducescatter": "reduce_scatter"}
"""``coll`` spellings read as another: the runtime's name of the reduce-scatter."""

RUNTIME_MAX_STEPS = 256
"""Steps of one threadblock the MSCCL runtime loads (``MSCCL_MAX_NUM_STEPS``)."""

RUNTIME_MAX_THREADBLOCKS_PER_CHANNEL = 32
"""Threadblocks of one channel with a send peer the MSCCL runtime loads, and as
many with a receive peer (``MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL``: its
parser counts the send peers and the receive peers of a channel apart)."""

RUNTIME_MAX_COUNT = 72
"""The MSCCL runtime takes a step's ``cnt`` below this (``MSCCL_MAX_COUNT``)."""

RUNTIME_MAX_THREADBLOCKS = 216
"""Threadblocks of one rank the MSCCL runtime loads (``MSCCL_MAX_NUM_THREAD_BLOCKS``,
``108*2`` in microsoft/msccl's ``msccl.h``: its parser refuses a threadblock id of
216 or more; msccl-executor-nccl sets 32 a channel on each of its 32 channels)."""


def _after_a_gap(ids: set[int]) -> int | None:
    """The least id whose predecessor is not among ``ids`` (0 excepted), or None when
    they are 0 to k-1: the id msccl-executor-nccl's parser names, "thread block N is
    missing", as it scans the ids upward."""
    return min((i for i in ids if i > 0 and i - 1 not in ids), default=None)


_BLOCKED = frozenset({"allgather", "alltoall", "reduce_scatter"})  # a block of chunks per rank

_RECEIVES = frozenset({"r", "rcs", "rrs", "rrc", "rrcs"})
_SENDS = frozenset({"s", "rcs", "rrs", "rrcs"})
_REDUCES = frozenset({"rrs", "rrc", "rrcs", "re"})
_READS_SRC = frozenset({"s", "rrs", "rrc", "rrcs", "re", "cpy"})
_WRITES_DST = frozenset({"r", "rcs", "rrc", "rrcs", "re", "cpy"})
_BUFFERS = ("i", "o", "s")


# -- records ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MscclStep:
    """One ``<step>``: ``cnt`` chunks from ``srcbuf[srcoff]`` to ``dstbuf[dstoff]``.

    ``depid``/``deps`` name a threadblock and a step of the same GPU that
    must finish first (``-1``: none); ``hasdep`` says that the step, when it
    ends, signals the steps that wait on it or on an earlier step of its
    threadblock (the first such step from ``deps`` on releases the wait).
    """

    index: int
    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int = -1
    deps: int = -1
    hasdep: bool = False


@dataclass(frozen=True, slots=True)
class MscclThreadblock:
    """One ``<tb>``: sends to rank ``send`` and receives from rank ``recv`` (-1: none)."""

    id: int
    send: int
    recv: int
    chan: int
    steps: tuple[MscclStep, ...]


@dataclass(frozen=True, slots=True)
class MscclGpu:
    """One ``<gpu>``: its buffer sizes in chunks and its threadblocks."""

    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    threadblocks: tuple[MscclThreadblock, ...]

    def threadblock(self, tb_id: int) -> MscclThreadblock | None:
        """The threadblock of id ``tb_id``, or ``None``."""
        for tb in self.threadblocks:
            if tb.id == tb_id:
                return tb
        return None


@dataclass(frozen=True)
class MscclAlgorithm:
    """A whole ``<algo>``, checked (see :func:`read_msccl`).

    Attributes
    ----------
    collective:
        ``coll``: one of :data:`MSCCL_COLLECTIVES`.
    chunks_per_rank:
        Allgather and all-to-all: ``nchunksperloop / ngpus`` (a rank's block);
        otherwise ``nchunksperloop``.
    source:
        The file name errors give (``"<string>"`` for XML text).
    """

    name: str
    collective: str
    ngpus: int
    nchunksperloop: int
    inplace: bool
    proto: str
    nchannels: int
    gpus: tuple[MscclGpu, ...]
    root: int = 0
    source: str = "<string>"
    _steps: _StepGraph | None = field(default=None, init=False, repr=False, compare=False)
    """The step graph :func:`read_msccl` checked, for :func:`time_msccl` (built once:
    about a quarter of the timing of a 128-rank ring)."""

    @property
    def chunks_per_rank(self) -> int:
        """Chunks of one rank's block (the number of portsim instances)."""
        if self.collective in _BLOCKED:
            return self.nchunksperloop // self.ngpus
        return self.nchunksperloop

    def runtime_limits(self) -> tuple[str, ...]:
        """What the MSCCL runtime would refuse to load, one sentence each (first rank
        and threadblock over each limit): :data:`RUNTIME_MAX_STEPS` steps a
        threadblock, :data:`RUNTIME_MAX_THREADBLOCKS_PER_CHANNEL` threadblocks with
        a send peer a channel (and as many with a receive peer: a threadblock that
        only copies counts in neither), a ``cnt`` of :data:`RUNTIME_MAX_COUNT` or
        more, a threadblock id of :data:`RUNTIME_MAX_THREADBLOCKS` or more or a gap
        among a rank's ids (its parser wants 0, 1, 2, ...),
        ``msccl.h`` of microsoft/msccl (other builds set other limits,
        so these are notes: the algorithm's meaning does not depend on them).

        Examples
        --------
        >>> from portsim.planners.msccl.generators import ring_allgather_xml
        >>> read_msccl(ring_allgather_xml(4)).runtime_limits()
        ()
        """
        notes: list[str] = []
        longest = max(((len(tb.steps), -gpu.id, -tb.id) for gpu in self.gpus
                       for tb in gpu.threadblocks), default=(0, 0, 0))
        if longest[0] > RUNTIME_MAX_STEPS:
            notes.append(f"gpu[{-longest[1]}].tb[{-longest[2]}] has {longest[0]} steps: the "
                         f"MSCCL runtime loads at most {RUNTIME_MAX_STEPS} a threadblock "
                         f"(MSCCL_MAX_NUM_STEPS in microsoft/msccl's msccl.h)")
        crowded_note = ""
        for gpu in self.gpus:
            # (channel, "sending" or "receiving") -> threadblocks with such a peer
            per_channel: dict[tuple[int, str], int] = {}
            for tb in gpu.threadblocks:
                for peer, role in ((tb.send, "sending"), (tb.recv, "receiving")):
                    if peer >= 0:
                        per_channel[tb.chan, role] = per_channel.get((tb.chan, role), 0) + 1
            crowded = max(per_channel.items(), key=lambda c: (c[1], -c[0][0]),
                          default=((0, ""), 0))
            if crowded[1] > RUNTIME_MAX_THREADBLOCKS_PER_CHANNEL:
                (chan, role), count = crowded
                crowded_note = (f"gpu[{gpu.id}] has {count} threadblocks {role} on channel "
                                f"{chan}: the MSCCL runtime loads at most "
                                f"{RUNTIME_MAX_THREADBLOCKS_PER_CHANNEL} a channel "
                                f"(MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL in msccl.h)")
                break
        if crowded_note:
            notes.append(crowded_note)
        big = next(((gpu.id, tb.id, step.index, step.cnt) for gpu in self.gpus
                    for tb in gpu.threadblocks for step in tb.steps
                    if step.cnt >= RUNTIME_MAX_COUNT and step.type != "nop"), None)
        if big is not None:
            notes.append(f"gpu[{big[0]}].tb[{big[1]}].step[{big[2]}] has cnt {big[3]}: the "
                         f"MSCCL runtime takes a count below {RUNTIME_MAX_COUNT} a step "
                         f"(MSCCL_MAX_COUNT in msccl.h)")
        # its parser refuses the id (threadblocks 0..k-1: so a rank of more than 216)
        high = next(((gpu.id, tb.id) for gpu in self.gpus for tb in gpu.threadblocks
                     if tb.id >= RUNTIME_MAX_THREADBLOCKS), None)
        if high is not None:
            notes.append(f"gpu[{high[0]}].tb[{high[1]}]: the MSCCL runtime loads at most "
                         f"{RUNTIME_MAX_THREADBLOCKS} threadblocks a rank, ids 0 to "
                         f"{RUNTIME_MAX_THREADBLOCKS - 1} (MSCCL_MAX_NUM_THREAD_BLOCKS in "
                         f"microsoft/msccl's msccl.h)")
        # ... and any gap among a rank's ids ("thread block N is missing")
        gap = next(((gpu.id, after) for gpu in self.gpus
                    for after in [_after_a_gap({tb.id for tb in gpu.threadblocks})]
                    if after is not None), None)
        if gap is not None:
            notes.append(f"gpu[{gap[0]}].tb[{gap[1]}] without tb[{gap[1] - 1}]: the MSCCL "
                         f"runtime takes a rank's threadblock ids 0, 1, 2, ... without a gap "
                         f"(its parser refuses it: 'thread block {gap[1]} is missing')")
        return tuple(notes)


# -- reading ------------------------------------------------------------------------------


# The step graph of a 128-rank file holds 500,000 phases; the cyclic collector
# walked them again and again as they were made (12 s of a 13 s read, 3 s without).
@paused_collection()
def read_msccl(path_or_text: str | os.PathLike[str]) -> MscclAlgorithm:
    """Read and check an MSCCL XML algorithm.

    Parameters
    ----------
    path_or_text:
        A file name, or the XML text itself (a string starting with ``<``).

    Returns
    -------
    MscclAlgorithm
        The checked algorithm.

    Raises
    ------
    ScheduleError
        With ``source`` = the file, one line naming the GPU, the threadblock,
        the step and the value: not XML, a missing or non-integer attribute,
        an unknown step type or collective, a rank missing, ``cnt`` out of
        its buffer, a send with no matching receive (or the reverse), a
        dependency on a missing step, a dependency that no step signals
        (no step from ``deps`` on with ``hasdep="1"``), a cycle of
        dependencies.

    Examples
    --------
    >>> algo = read_msccl('<algo name="x" coll="allgather" ngpus="2" nchunksperloop="2" '
    ...     'inplace="1" proto="Simple" nchannels="1">'
    ...     '<gpu id="0" i_chunks="0" o_chunks="2" s_chunks="0"><tb id="0" send="1" recv="1" '
    ...     'chan="0"><step s="0" type="s" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" '
    ...     'cnt="1" depid="-1" deps="-1" hasdep="0"/><step s="1" type="r" srcbuf="o" '
    ...     'srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>'
    ...     '</tb></gpu><gpu id="1" i_chunks="0" o_chunks="2" s_chunks="0"><tb id="0" '
    ...     'send="0" recv="0" chan="0"><step s="0" type="s" srcbuf="o" srcoff="1" '
    ...     'dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/><step s="1" '
    ...     'type="r" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" '
    ...     'deps="-1" hasdep="0"/></tb></gpu></algo>')
    >>> algo.collective, algo.ngpus, len(algo.gpus[0].threadblocks[0].steps)
    ('allgather', 2, 2)
    """
    text, source = _xml_text(path_or_text)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise ScheduleError(f"not well-formed XML: {err}", source=source) from None
    if root.tag != "algo":
        raise ScheduleError("the root element must be <algo>", value=root.tag, source=source)
    attr = _Attributes(source)
    ngpus = attr.integer(root, "ngpus", "algo", minimum=1)
    nchunks = attr.integer(root, "nchunksperloop", "algo", minimum=1)
    coll = root.get("coll", "")
    # The MSCCL runtime and msccl-tools since 2023 spell it "reducescatter";
    # earlier msccl-tools wrote "reduce_scatter", portsim's name for it.
    coll = _COLL_ALIASES.get(coll, coll)
    if coll not in MSCCL_COLLECTIVES:
        why = ("unknown collective (expected "
               + ", ".join(sorted(MSCCL_COLLECTIVES | set(_COLL_ALIASES))) + ")")
        raise ScheduleError(why, path="algo.coll", value=coll, source=source)
    if coll in _BLOCKED and nchunks % ngpus:
        raise ScheduleError(f"{with_article(coll)} needs nchunksperloop to be a multiple of ngpus "
                            f"({ngpus})", path="algo.nchunksperloop", value=nchunks,
                            source=source)
    inplace_flag = attr.integer(root, "inplace", "algo", default=0)
    if inplace_flag not in (0, 1):  # a runtime reading it as a C truth value: not 0 is in place
        raise ScheduleError("inplace must be 0 or 1", path="algo.inplace", value=inplace_flag,
                            source=source)
    inplace = inplace_flag == 1
    nchannels = attr.integer(root, "nchannels", "algo", default=1, minimum=1)
    algo_root = attr.integer(root, "root", "algo", default=0)
    if not 0 <= algo_root < ngpus:
        raise ScheduleError(f"root must be a rank in 0..{ngpus - 1}", path="algo.root",
                            value=algo_root, source=source)
    gpus: dict[int, MscclGpu] = {}
    for g_elem in root:
        if g_elem.tag != "gpu":
            raise ScheduleError("unknown element inside <algo> (expected <gpu>)",
                                path="algo", value=g_elem.tag, source=source)
        rank = attr.integer(g_elem, "id", "gpu")
        # Before its threadblocks: a copied <gpu> block's peers may name the rank itself.
        if rank in gpus:
            raise ScheduleError("rank listed twice", path=f"gpu[{rank}]", value=rank,
                                source=source)
        gpu = _read_gpu(g_elem, attr, ngpus, nchannels)
        gpus[gpu.id] = gpu
    for rank in range(ngpus):
        if rank not in gpus:
            raise ScheduleError(f"rank missing: ngpus = {ngpus} but no <gpu id={rank}>",
                                path=f"gpu[{rank}]", value=rank, source=source)
    algo = MscclAlgorithm(
        name=root.get("name", ""), collective=coll, ngpus=ngpus, nchunksperloop=nchunks,
        inplace=inplace, proto=root.get("proto", ""), nchannels=nchannels,
        gpus=tuple(gpus[r] for r in range(ngpus)), root=algo_root, source=source)
    _check_size(algo)
    for gpu in algo.gpus:
        _check_gpu(algo, gpu)
    # pairing, dependencies and cycles; kept for time_msccl
    object.__setattr__(algo, "_steps", _step_graph(algo))
    return algo


def _xml_text(path_or_text: str | os.PathLike[str]) -> tuple[str, str]:
    if isinstance(path_or_text, str) and path_or_text.lstrip().startswith("<"):
        return path_or_text, "<string>"
    if not isinstance(path_or_text, str | os.PathLike):
        raise ScheduleError("expected a file name or the XML text of an MSCCL algorithm",
                            path="algorithm", value=type(path_or_text).__name__)
    source = os.fspath(path_or_text)
    try:
        return Path(source).read_text(encoding="utf-8"), source
    except OSError as err:
        raise ScheduleError(f"cannot read the file: {err.strerror or err}",
                            source=source) from None
    except UnicodeDecodeError:
        raise ScheduleError("not UTF-8 text", source=source) from None


@dataclass(frozen=True)
class _Attributes:
    source: str

    def integer(self, elem: ET.Element, key: str, where: str, *, default: int | None = None,
                minimum: int | None = None, maximum: int | None = None) -> int:
        raw = elem.get(key)
        if raw is None:
            if default is not None:
                return default
            raise ScheduleError("missing attribute", path=f"{where}.{key}", source=self.source)
        # ASCII digits only: int() also takes "1_0" and other scripts' digits,
        # which the MSCCL runtime (atoi) reads otherwise ("1_0" is 1 there).
        if _INTEGER_RE.fullmatch(raw.strip()) is None:
            raise ScheduleError("not an integer", path=f"{where}.{key}", value=raw,
                                source=self.source)
        value = int(raw.strip())
        if minimum is not None and value < minimum:
            raise ScheduleError(f"must be >= {minimum}", path=f"{where}.{key}", value=value,
                                source=self.source)
        if maximum is not None and value > maximum:
            raise ScheduleError(f"must be <= {maximum}", path=f"{where}.{key}", value=value,
                                source=self.source)
        return value

    def string(self, elem: ET.Element, key: str, where: str) -> str:
        raw = elem.get(key)
        if raw is None:
            raise ScheduleError("missing attribute", path=f"{where}.{key}", source=self.source)
        return raw


def _read_gpu(elem: ET.Element, attr: _Attributes, ngpus: int, nchannels: int) -> MscclGpu:
    rank = attr.integer(elem, "id", "gpu")
    if not 0 <= rank < ngpus:
        raise ScheduleError(f"rank out of 0..{ngpus - 1}", path="gpu.id", value=rank,
                            source=attr.source)
    where = f"gpu[{rank}]"
    sizes = [attr.integer(elem, f"{b}_chunks", where, minimum=0) for b in _BUFFERS]
    tbs: dict[int, MscclThreadblock] = {}
    for t_elem in elem:
        if t_elem.tag != "tb":
            raise ScheduleError("unknown element inside <gpu> (expected <tb>)", path=where,
                                value=t_elem.tag, source=attr.source)
        tb_id = attr.integer(t_elem, "id", f"{where}.tb", minimum=0)
        tw = f"{where}.tb[{tb_id}]"
        if tb_id in tbs:
            raise ScheduleError("threadblock listed twice", path=tw, value=tb_id,
                                source=attr.source)
        peers = []
        for key in ("send", "recv"):
            peer = attr.integer(t_elem, key, tw)
            if peer != -1 and (not 0 <= peer < ngpus or peer == rank):
                raise ScheduleError(f"peer must be -1 or another rank in 0..{ngpus - 1}",
                                    path=f"{tw}.{key}", value=peer, source=attr.source)
            peers.append(peer)
        chan = attr.integer(t_elem, "chan", tw, minimum=0)
        if chan >= nchannels:  # the runtime sets up nchannels channels, no more
            raise ScheduleError(f"chan must be a channel in 0..{nchannels - 1} (nchannels = "
                                f"{nchannels})", path=f"{tw}.chan", value=chan,
                                source=attr.source)
        steps = []
        for position, s_elem in enumerate(t_elem):
            if s_elem.tag != "step":
                raise ScheduleError("unknown element inside <tb> (expected <step>)", path=tw,
                                    value=s_elem.tag, source=attr.source)
            steps.append(_read_step(s_elem, attr, tw, position))
        tbs[tb_id] = MscclThreadblock(tb_id, peers[0], peers[1], chan, tuple(steps))
    return MscclGpu(rank, sizes[0], sizes[1], sizes[2], tuple(tbs.values()))


def _read_step(elem: ET.Element, attr: _Attributes, tw: str, position: int) -> MscclStep:
    index = attr.integer(elem, "s", f"{tw}.step")
    sw = f"{tw}.step[{index}]"
    if index != position:
        raise ScheduleError(f"steps must be numbered 0, 1, ... in order (expected {position})",
                            path=f"{sw}.s", value=index, source=attr.source)
    kind = attr.string(elem, "type", sw)
    if kind not in STEP_TYPES:
        raise ScheduleError("unknown step type (expected " + ", ".join(sorted(STEP_TYPES))
                            + ")", path=f"{sw}.type", value=kind, source=attr.source)
    bufs = []
    for key in ("srcbuf", "dstbuf"):
        buf = attr.string(elem, key, sw)
        if buf not in _BUFFERS:
            raise ScheduleError("unknown buffer (expected i, o or s)", path=f"{sw}.{key}",
                                value=buf, source=attr.source)
        bufs.append(buf)
    return MscclStep(
        index=index, type=kind, srcbuf=bufs[0],
        # -1: an offset the step does not use (msccl-tools writes a nop's so, and
        # the runtime takes it); one the step reads or writes is checked below.
        srcoff=attr.integer(elem, "srcoff", sw, minimum=-1),
        dstbuf=bufs[1], dstoff=attr.integer(elem, "dstoff", sw, minimum=-1),
        cnt=attr.integer(elem, "cnt", sw, minimum=0 if kind == "nop" else 1),
        depid=attr.integer(elem, "depid", sw, minimum=-1),
        deps=attr.integer(elem, "deps", sw, minimum=-1),
        hasdep=attr.integer(elem, "hasdep", sw, minimum=0, maximum=1) == 1,
    )


def _capacity(algo: MscclAlgorithm, gpu: MscclGpu, buf: str) -> int:
    """Chunks of ``buf`` on ``gpu``; in place, the input is part of the output (allgather),
    the output part of the input (reduce_scatter), or the output is the input (the
    other collectives)."""
    if algo.inplace and algo.collective in ("allgather", "reduce_scatter") and buf == (
            "i" if algo.collective == "allgather" else "o"):
        return algo.chunks_per_rank
    if algo.inplace and algo.collective != "allgather" and buf == "o":
        return gpu.i_chunks
    return {"i": gpu.i_chunks, "o": gpu.o_chunks, "s": gpu.s_chunks}[buf]


def _check_size(algo: MscclAlgorithm) -> None:
    slots = 2 * algo.ngpus * algo.nchunksperloop
    moved = sum(step.cnt for gpu in algo.gpus for tb in gpu.threadblocks for step in tb.steps)
    if slots + moved > MAX_MSCCL_CHUNKS:
        raise ScheduleError(
            f"too large: 2 * ngpus * nchunksperloop = {slots} buffer slots and {moved} chunks "
            f"moved by the steps, more than the {MAX_MSCCL_CHUNKS} chunks portsim times",
            path="algo.nchunksperloop" if slots > MAX_MSCCL_CHUNKS else "algo",
            value=slots + moved, source=algo.source)


def _check_gpu(algo: MscclAlgorithm, gpu: MscclGpu) -> None:
    signals: _Signals = {}
    for tb in gpu.threadblocks:
        _check_chains(algo, gpu, tb)
        for step in tb.steps:
            where = f"gpu[{gpu.id}].tb[{tb.id}].step[{step.index}]"
            if step.type in _SENDS and tb.send < 0:
                raise ScheduleError(f"a '{step.type}' step sends, but its threadblock has "
                                    "send = -1", path=f"{where}.type", value=step.type,
                                    source=algo.source)
            if step.type in _RECEIVES and tb.recv < 0:
                raise ScheduleError(f"a '{step.type}' step receives, but its threadblock has "
                                    "recv = -1", path=f"{where}.type", value=step.type,
                                    source=algo.source)
            operands = []
            if step.type in _READS_SRC:
                operands.append(("src", step.srcbuf, step.srcoff))
            if step.type in _WRITES_DST:
                operands.append(("dst", step.dstbuf, step.dstoff))
            for key, buf, off in operands:
                if off < 0:
                    raise ScheduleError(
                        f"must be >= 0: a '{step.type}' step "
                        f"{'reads' if key == 'src' else 'writes'} it (-1 is for an offset "
                        "a step does not use, as a nop's)", path=f"{where}.{key}off",
                        value=off, source=algo.source)
                cap = _capacity(algo, gpu, buf)
                if off + step.cnt > cap:
                    raise ScheduleError(
                        f"cnt out of the buffer: {key}off {off} + cnt {step.cnt} > {cap} "
                        f"chunks of buffer '{buf}'", path=f"{where}.cnt", value=step.cnt,
                        source=algo.source)
            if step.depid != -1 or step.deps != -1:
                dep_tb = gpu.threadblock(step.depid)
                if dep_tb is None or not 0 <= step.deps < len(dep_tb.steps):
                    raise ScheduleError(
                        "dependency on a missing step", path=f"{where}.depid",
                        value=f"tb {step.depid} step {step.deps}", source=algo.source)
                _signal(algo, gpu, tb, step, signals)


def _counters(tb: MscclThreadblock) -> dict[int, int]:
    """The runtime's step counter at the end of each step of ``tb`` but its ``nop`` steps.

    The MSCCL runtime's parser turns a threadblock into transfers: a ``nop``
    with a dependency (``depid`` >= 0) lends it to the next transfer, a ``nop``
    without one is dropped; the interpreter's counter then advances by one
    per transfer plus one per dependency a transfer takes beyond the first.
    So the counter of a step is its ``s`` index when every ``nop`` carries a
    dependency and the step after it has its own, as msccl-tools writes
    them, and falls behind by one for each ``nop`` without a dependency
    before it.
    """
    counter, pending, values = 0, 0, {}
    for step in tb.steps:
        if step.type == "nop":
            pending += step.depid >= 0
            continue
        counter += max(pending + (step.depid >= 0) - 1, 0)
        values[step.index] = counter
        counter += 1
        pending = 0
    return values


def _check_chains(algo: MscclAlgorithm, gpu: MscclGpu, tb: MscclThreadblock) -> None:
    """Refuse a ``nop`` dependency handed to a step without one, as the runtime does."""
    pending = False
    for step in tb.steps:
        if step.type == "nop":
            pending = pending or step.depid >= 0
            continue
        if pending and step.depid < 0:
            raise ScheduleError(
                "a nop before this step has a dependency (depid/deps) and this step none: "
                "the MSCCL runtime refuses the file (a chain of nop dependencies ends with "
                "the step's own)", path=f"gpu[{gpu.id}].tb[{tb.id}].step[{step.index}].depid",
                value=step.depid, source=algo.source)
        pending = False


_Signals = dict[int, tuple[list[int], list[int]]]
"""Per threadblock id of one GPU: the runtime counters of its steps that signal
(``hasdep="1"``, not a ``nop``), in step order (so in increasing order), and
their indexes."""


def _signal(algo: MscclAlgorithm, gpu: MscclGpu, tb: MscclThreadblock,
            step: MscclStep, signals: _Signals | None = None) -> int:
    """The index of the step whose end releases ``step``'s dependency.

    The MSCCL runtime's interpreter publishes a threadblock's flag, its step
    counter (:func:`_counters`), only at the end of a step with
    ``hasdep="1"``; a step with ``depid=b deps=s`` spins until threadblock
    ``b``'s flag reaches ``s``.  So it is released by the first step of
    ``b`` with ``hasdep="1"`` whose counter reaches ``s`` (from ``s`` on when
    the counters are the ``s`` indexes), not by step ``s`` itself.  A ``nop``
    is no transfer of the runtime: it publishes nothing, whatever its
    ``hasdep`` (its dependency is waited for by the next step).

    Raises
    ------
    ScheduleError
        When no such step exists: the waiting step never starts, and the
        runtime hangs.
    """
    table = None if signals is None else signals.get(step.depid)
    if table is None:
        # Once per threadblock with ``signals`` (a GPU's table, filled here):
        # counting its steps again for every step waiting on it took 2 of the
        # 5 s of reading a 64-rank tree broadcast of 256 chunks.
        waited = gpu.threadblock(step.depid)
        assert waited is not None  # checked by _check_gpu
        counted = _counters(waited)
        signalling = [c.index for c in waited.steps if c.hasdep and c.index in counted]
        table = ([counted[i] for i in signalling], signalling)
        if signals is not None:
            signals[step.depid] = table
    # the first step that signals with a counter from deps on
    first = bisect.bisect_left(table[0], step.deps)
    if first < len(table[1]):
        return table[1][first]
    dep_tb = gpu.threadblock(step.depid)
    assert dep_tb is not None
    counters = _counters(dep_tb)
    later = dep_tb.steps[step.deps:]
    why = f'no step from {step.deps} on has hasdep="1"'
    if any(c.hasdep and c.type != "nop" for c in later):
        last = max(c.index for c in later if c.hasdep and c.type != "nop")
        why = (f"the runtime does not count a nop without a dependency, so tb {step.depid}'s "
               f'last step with hasdep="1", {last}, signals {counters[last]}, short of '
               f"{step.deps}")
    elif any(candidate.hasdep for candidate in later):
        why = f'only nops from {step.deps} on have hasdep="1", and a nop signals nothing'
    raise ScheduleError(
        f"waits on tb {step.depid} step {step.deps}, which never signals: {why} (the MSCCL "
        "runtime would hang)", path=f"gpu[{gpu.id}].tb[{tb.id}].step[{step.index}]",
        source=algo.source)


# -- the step graph -----------------------------------------------------------------------

_StepKey = tuple[int, int, int]  # (gpu, tb, step)


def _where(key: _StepKey) -> str:
    return f"gpu[{key[0]}].tb[{key[1]}].step[{key[2]}]"


@dataclass(frozen=True)
class _StepGraph:
    graph: nx.DiGraph
    sender: Mapping[tuple[Any, ...], _StepKey]    # transfer -> the step that sends it
    receiver: Mapping[tuple[Any, ...], _StepKey]  # transfer -> the step that receives it


def _step_graph(algo: MscclAlgorithm) -> _StepGraph:
    """The precedence graph: nodes ``("start"|"recv"|"reduce"|"end", step)`` and
    transfers ``("xfer", chan, sender, receiver, k)``.  A transfer follows its
    sending step's earlier phases and precedes its receiving step's ``recv``
    phase: the data waits in the connection's buffer until the receiving step
    runs (MSCCL's FIFO connections), so a transfer never waits for its receiver.

    Raises
    ------
    ScheduleError
        On a send without its receive (or the reverse), paired steps whose
        ``cnt`` differ, two threadblocks of one GPU sending to (receiving
        from) the same peer on one channel, a cycle.
    """
    graph = nx.DiGraph()
    senders: dict[tuple[int, int, int], list[_StepKey]] = {}
    receivers: dict[tuple[int, int, int], list[_StepKey]] = {}
    owner_send: dict[tuple[int, int, int], int] = {}
    owner_recv: dict[tuple[int, int, int], int] = {}
    for gpu in algo.gpus:
        for tb in gpu.threadblocks:
            for role, peer, owner, lists in (("send", tb.send, owner_send, senders),
                                             ("recv", tb.recv, owner_recv, receivers)):
                if peer < 0:
                    continue
                channel = (tb.chan, gpu.id, peer) if role == "send" else (tb.chan, peer, gpu.id)
                if channel in owner and any(
                        s.type in (_SENDS if role == "send" else _RECEIVES) for s in tb.steps):
                    raise ScheduleError(
                        f"threadblocks {owner[channel]} and {tb.id} both {role} "
                        f"{'to' if role == 'send' else 'from'} rank {peer} on channel "
                        f"{tb.chan}", path=f"gpu[{gpu.id}].tb[{tb.id}].{role}", value=peer,
                        source=algo.source)
                if any(s.type in (_SENDS if role == "send" else _RECEIVES) for s in tb.steps):
                    owner[channel] = tb.id
                lists.setdefault(channel, []).extend(
                    (gpu.id, tb.id, s.index) for s in tb.steps
                    if s.type in (_SENDS if role == "send" else _RECEIVES))
    step_of = {(g.id, t.id, s.index): s for g in algo.gpus for t in g.threadblocks
               for s in t.steps}
    out_xfer: dict[_StepKey, tuple[Any, ...]] = {}
    in_xfer: dict[_StepKey, tuple[Any, ...]] = {}
    sender: dict[tuple[Any, ...], _StepKey] = {}
    receiver: dict[tuple[Any, ...], _StepKey] = {}
    for channel in sorted(set(senders) | set(receivers)):
        sends = senders.get(channel, [])
        recvs = receivers.get(channel, [])
        chan, a, b = channel
        for k, (snd, rcv) in enumerate(itertools.zip_longest(sends, recvs)):
            if rcv is None:
                raise ScheduleError(
                    f"a send with no matching receive (rank {b} receives only "
                    f"{len(recvs)} time(s) from rank {a} on channel {chan})",
                    path=f"{_where(snd)}.type", value=step_of[snd].type, source=algo.source)
            if snd is None:
                raise ScheduleError(
                    f"a receive with no matching send (rank {a} sends only "
                    f"{len(sends)} time(s) to rank {b} on channel {chan})",
                    path=f"{_where(rcv)}.type", value=step_of[rcv].type, source=algo.source)
            if step_of[snd].cnt != step_of[rcv].cnt:
                raise ScheduleError(
                    f"cnt differs from that of the matching send {_where(snd)} "
                    f"({step_of[snd].cnt})", path=f"{_where(rcv)}.cnt",
                    value=step_of[rcv].cnt, source=algo.source)
            xfer = ("xfer", chan, a, b, k)
            out_xfer[snd] = xfer
            in_xfer[rcv] = xfer
            sender[xfer] = snd
            receiver[xfer] = rcv
    for gpu in algo.gpus:
        signals: _Signals = {}
        for tb in gpu.threadblocks:
            previous: _StepKey | None = None
            for step in tb.steps:
                key = (gpu.id, tb.id, step.index)
                phases: list[tuple[Any, ...]] = [("start", key)]
                if key in in_xfer:  # the data lands in the connection's buffer
                    phases.append(("recv", key))
                    graph.add_edge(in_xfer[key], ("recv", key))
                if step.type in _REDUCES:
                    phases.append(("reduce", key))
                if key in out_xfer:
                    phases.append(out_xfer[key])
                phases.append(("end", key))
                nx.add_path(graph, phases)
                if previous is not None:
                    graph.add_edge(("end", previous), ("start", key))
                if step.depid != -1:
                    signal = _signal(algo, gpu, tb, step, signals)
                    graph.add_edge(("end", (gpu.id, step.depid, signal)), ("start", key))
                previous = key
    # A topological sort first: find_cycle alone restarts its search from every
    # node and took 26 s on a 64-rank ring allreduce (80,000 phases).
    if nx.is_directed_acyclic_graph(graph):
        return _StepGraph(graph, sender, receiver)
    cycle = nx.find_cycle(graph)
    steps_in = []
    for u, _v in cycle:
        if u[0] != "xfer" and _where(u[1]) not in steps_in:
            steps_in.append(_where(u[1]))
    raise ScheduleError("a cycle of dependencies (through " + " -> ".join(steps_in) + ")",
                        path=f"{steps_in[0]}.depid", value=step_of[_key_of(steps_in[0])].depid,
                        source=algo.source)


def _key_of(where: str) -> _StepKey:
    parts = [int(x.split("[")[1].rstrip("]")) for x in where.split(".")]
    return (parts[0], parts[1], parts[2])


# -- meaning and timing -------------------------------------------------------------------


@dataclass(frozen=True)
class MscclTiming:
    """The list-scheduled meaning of an algorithm on a platform.

    Attributes
    ----------
    schedule:
        The timed one-shot schedule (to be replayed strictly).
    ranks:
        Platform node of each rank.
    makespan:
        When the last event ends, as list-scheduled.
    problems:
        Why the result is not what the collective promises, one sentence
        each naming the rank and the chunk (empty when correct).
    """

    algorithm: MscclAlgorithm
    schedule: Schedule
    ranks: tuple[NodeId, ...]
    makespan: Fraction
    problems: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        """True when every rank ends with what the collective promises."""
        return not self.problems


def _operation(algo: MscclAlgorithm, ranks: tuple[NodeId, ...], chunk: Fraction) -> Operation:
    """The portsim operation the timed schedule is replayed against.

    ``reduce_scatter`` has no portsim operation (an operation's instances all
    promise the same to the same nodes, and a reduce-scatter promises block
    ``r`` to rank ``r`` only): chunk ``j`` of block ``k`` is instance
    ``k * c + j`` of a commutative allreduce, whose items (``v{S}#t``) and
    initial holdings are exactly the reduce-scatter's.  The strict replay
    then checks every port, link, holding and reduction; what each rank ends
    with is judged by the importer (:attr:`MscclTiming.problems`), not by the
    engine's completion check, which would ask every rank for every block
    (see :attr:`MscclValidation.feasible`).
    """
    kind = algo.collective
    root = ranks[algo.root]
    if kind == "allgather":
        return Operation(OperationKind.ALLGATHER, participants=ranks, size=chunk)
    if kind == "alltoall":
        return Operation(OperationKind.ALLTOALL, sources=ranks, targets=ranks, size=chunk)
    if kind in ("allreduce", "reduce_scatter"):  # reduce_scatter: see _REDUCE_SCATTER
        return Operation(OperationKind.ALLREDUCE, participants=ranks, commutative=True,
                         size=chunk)
    if kind == "reduce":
        return Operation(OperationKind.REDUCE, participants=ranks, target=root,
                         commutative=True, size=chunk)
    return Operation(OperationKind.BROADCAST, source=root,
                     targets=tuple(r for r in ranks if r != root), size=chunk)


_Slot = tuple[str, int]


def _slot(algo: MscclAlgorithm, rank: int, buf: str, off: int) -> _Slot:
    """The canonical slot of ``buf[off]`` on ``rank`` (in place: one buffer)."""
    if algo.inplace and algo.collective == "allgather" and buf == "i":
        return ("o", rank * algo.chunks_per_rank + off)
    if algo.inplace and algo.collective == "reduce_scatter" and buf == "o":
        return ("i", rank * algo.chunks_per_rank + off)
    if algo.inplace and algo.collective != "allgather" and buf == "o":
        return ("i", off)
    return (buf, off)


def _layout(algo: MscclAlgorithm, ranks: tuple[NodeId, ...]
            ) -> tuple[dict[tuple[int, _Slot], Item], dict[tuple[int, _Slot], Item]]:
    """(initial contents, promised final contents) of the slots, per (rank, slot)."""
    n, c = algo.ngpus, algo.chunks_per_rank
    start: dict[tuple[int, _Slot], Item] = {}
    final: dict[tuple[int, _Slot], Item] = {}
    everyone = range(n)
    for r in everyone:
        def at(buf: str, off: int, rank: int = r) -> tuple[int, _Slot]:
            return (rank, _slot(algo, rank, buf, off))
        for j in range(c):
            if algo.collective == "allgather":
                start[at("i", j)] = Item.message(ranks[r], instance=j)
                for k in everyone:
                    final[at("o", k * c + j)] = Item.message(ranks[k], instance=j)
            elif algo.collective == "alltoall":
                for k in everyone:
                    start[at("i", k * c + j)] = Item.message(ranks[r], ranks[k], instance=j)
                    final[at("o", k * c + j)] = Item.message(ranks[k], ranks[r], instance=j)
            elif algo.collective == "reduce_scatter":
                for k in everyone:
                    start[at("i", k * c + j)] = Item.subset([r], k * c + j)
                final[at("o", j)] = Item.subset(everyone, r * c + j)
            elif algo.collective in ("allreduce", "reduce"):
                start[at("i", j)] = Item.subset([r], j)
                if algo.collective == "allreduce" or r == algo.root:
                    final[at("o", j)] = Item.subset(everyone, j)
            else:  # broadcast
                if r == algo.root:
                    start[at("i", j)] = Item.broadcast(j)
                else:
                    final[at("o", j)] = Item.broadcast(j)
    return start, final


@paused_collection()  # as read_msccl
def time_msccl(algo: MscclAlgorithm, platform: Platform, *, size: Fraction | int | str = 1,
               ranks: Sequence[NodeId] | None = None) -> MscclTiming:
    """Give ``algo`` its meaning on ``platform`` and list-schedule it.

    Parameters
    ----------
    algo:
        A checked algorithm (:func:`read_msccl`).
    platform:
        The platform, with the port model to time under.
    size:
        The message size: a chunk is ``size / nchunksperloop``.
    ranks:
        Platform node of each rank (default: the first ``ngpus`` processors).

    Raises
    ------
    ScheduleError
        When the ranks do not fit the platform (too few processors, an
        unknown node, a rank out of reach of its peer).
    """
    chunk = parse_rational(size, path="size", error=ScheduleError) / algo.nchunksperloop
    if chunk <= 0:
        raise ScheduleError("size must be > 0", path="size", value=str(size))
    nodes = _ranks(algo, platform, ranks)
    op = _operation(algo, nodes, chunk)
    try:
        op = op.resolve(platform)
    except PortsimError as err:
        raise ScheduleError(err.message, path=err.path, value=err.value,
                            source=algo.source) from None
    return _ListScheduler(algo, platform, nodes, op).run()


def _ranks(algo: MscclAlgorithm, platform: Platform,
           ranks: Sequence[NodeId] | None) -> tuple[NodeId, ...]:
    if ranks is None:
        processors = platform.processors
        if len(processors) < algo.ngpus:
            raise ScheduleError(f"the algorithm has {algo.ngpus} ranks but the platform only "
                                f"{len(processors)} processors", path="ranks",
                                value=len(processors), source=algo.source)
        return tuple(processors[: algo.ngpus])
    if isinstance(ranks, str | bytes | Mapping) or not isinstance(ranks, Iterable):
        # a str is iterable: "P0" was read as the ranks "P" and "0"
        raise ScheduleError("ranks must be a list of node ids, one per rank", path="ranks",
                            value=ranks, source=algo.source)
    nodes = tuple(ranks)
    if len(nodes) != algo.ngpus:
        raise ScheduleError(f"ranks must list {algo.ngpus} nodes, one per rank",
                            path="ranks", value=list(nodes), source=algo.source)
    for i, node in enumerate(nodes):
        if node not in platform or platform.node(node).router:
            raise ScheduleError("not a processor of the platform", path=f"ranks[{i}]",
                                value=node, source=algo.source)
        if node in nodes[:i]:
            raise ScheduleError("node listed twice", path=f"ranks[{i}]", value=node,
                                source=algo.source)
    return nodes


@dataclass
class _ListScheduler:
    """Place the phases of the step graph in order of readiness on a port clock."""

    algo: MscclAlgorithm
    platform: Platform
    ranks: tuple[NodeId, ...]
    op: Operation
    problems: list[str] = field(default_factory=list)
    paths: dict[NodeId, dict[NodeId, list[NodeId]]] = field(default_factory=dict)
    """The cheapest paths from each sending rank, found once in one search: a Dijkstra
    per transfer took 6 of the 9 s of timing a 32-rank ring allreduce on a complete
    platform, and one per rank pair 25 of the 26 s of a 128-rank all-to-all."""

    def run(self) -> MscclTiming:
        algo = self.algo
        steps = algo._steps if algo._steps is not None else _step_graph(algo)
        graph = steps.graph
        self.step_of = {(g.id, t.id, s.index): s for g in algo.gpus for t in g.threadblocks
                        for s in t.steps}
        start, final = _layout(algo, self.ranks)
        self.buffers: dict[tuple[int, _Slot], Item | None] = dict(start)
        self.writer: dict[tuple[int, _Slot], _StepKey] = {}  # the step that last wrote a slot
        self.readers: dict[tuple[int, _Slot], list[_StepKey]] = {}  # read since that write
        self.graph = graph
        # The place of each phase in the order they are placed, a topological
        # order of the step graph: a phase's ancestors all come before it.
        self.position: dict[Hashable, int] = {}
        self.clock = PortClock(self.platform, size=self.op.size)
        for (rank, _), item in start.items():
            self.clock.hold(self.ranks[rank], item)
        self.received: dict[_StepKey, list[Item | None]] = {}
        self.outgoing: dict[_StepKey, list[Item | None]] = {}
        self.sender = steps.sender
        self.receiver = steps.receiver
        done: dict[Hashable, Fraction] = {}
        waiting = {node: graph.in_degree(node) for node in graph.nodes}
        order = {node: i for i, node in enumerate(sorted(graph.nodes, key=_sort_key))}
        # Keyed by the float of the ready time first: floats compare in C, and
        # rounding is monotone, so only equal floats fall back to the exact
        # time (the order is the exact one; Fractions compared in the heap
        # took a fifth of the timing of a 64-rank ring allreduce).
        heap: list[tuple[float, Fraction, int, Hashable]] = [
            (0.0, Fraction(0), order[node], node) for node, d in waiting.items() if d == 0]
        heapq.heapify(heap)
        while heap:
            _, ready, _, node = heapq.heappop(heap)
            self.position[node] = len(self.position)
            done[node] = self._place(node, ready)
            for succ in graph.successors(node):
                waiting[succ] -= 1
                if waiting[succ] == 0:
                    at = max(done[p] for p in graph.predecessors(succ))
                    heapq.heappush(heap, (float(at), at, order[succ], succ))
        for (rank, slot), want in sorted(final.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            got = self.buffers.get((rank, slot))
            name = f"rank {rank} ({self.ranks[rank]}) buffer {slot[0]}[{slot[1]}]"
            if got is None:
                self.problems.append(f"{name} never receives chunk {want}")
            elif got != want:
                self.problems.append(f"{name} ends with {got}, expected chunk {want}")
        schedule = Schedule(self.platform, self.op, self.clock.events,
                            follows=self.clock.follows)
        return MscclTiming(algo, schedule, self.ranks, self.clock.end_time,
                           tuple(self.problems))

    # -- one phase ------------------------------------------------------------------------

    def _place(self, node: Hashable, ready: Fraction) -> Fraction:
        assert isinstance(node, tuple)
        phase = node[0]
        if phase == "xfer":
            return self._transfer(node, ready)
        key: _StepKey = node[1]
        step = self.step_of[key]
        if phase == "reduce":
            return self._reduce(key, step, ready)
        if phase == "recv":
            self._receive(key, step)
        if phase == "start":
            if step.type == "s":
                self.outgoing[key] = [self._read(key, step.srcbuf, step.srcoff + i)
                                      for i in range(step.cnt)]
            elif step.type == "cpy":
                for i in range(step.cnt):
                    self._write(key, step.dstbuf, step.dstoff + i,
                                self._read(key, step.srcbuf, step.srcoff + i))
        return ready

    def _transfer(self, node: tuple[Any, ...], ready: Fraction) -> Fraction:
        snd = self.sender[node]
        rcv = self.receiver[node]
        values = self.outgoing.get(snd, [])
        src, dst = self.ranks[snd[0]], self.ranks[rcv[0]]
        end = ready
        from_src = self.paths.get(src)
        if from_src is None:
            from_src = self.paths[src] = cheapest_paths_from(self.platform, src, self.op.size)
        # cheapest_path raises the error of a rank out of reach
        path = from_src.get(dst) or cheapest_path(self.platform, src, dst, self.op.size)
        for item in values:
            if item is None:
                continue
            # Each hop waits for the previous one (chained, in the timing and in
            # the engine's replays): a router on the path may hold this item
            # already (from another rank's transfer), but an MSCCL connection
            # carries the sender's own data, it forwards no copy.  Every hop
            # but the last is a transit send: a GPU or switch it passes
            # through keeps no copy (a relaying GPU holds the chunk from its
            # own receive only, as validate's makespan says).
            for last in self.clock.route(path, item, chained=True, not_before=ready)[-1:]:
                end = max(end, last.start + self.clock.transfer_time(last.src, last.dst))
        self.received[rcv] = list(values)
        return end

    def _receive(self, key: _StepKey, step: MscclStep) -> None:
        values = self.received.get(key, [])
        if step.type in ("r", "rcs"):
            for i, item in enumerate(values):
                self._write(key, step.dstbuf, step.dstoff + i, item)
        if step.type == "rcs":
            self.outgoing[key] = list(values)

    def _reduce(self, key: _StepKey, step: MscclStep, ready: Fraction) -> Fraction:
        rank = key[0]
        node = self.ranks[rank]
        end = ready
        results: list[Item | None] = []
        for i in range(step.cnt):
            local = self._read(key, step.srcbuf, step.srcoff + i)
            other = (self._read(key, step.dstbuf, step.dstoff + i) if step.type == "re"
                     else self.received.get(key, [None] * step.cnt)[i])
            if local is None or other is None:
                results.append(None)
                continue
            out = combine([other, local], commutative=True)
            if isinstance(out, str):
                # Overlapping sets: a rank's chunk counted twice; else two chunks
                # of different indexes (a wrong block or offset) combined.
                why = ("a chunk reduced twice" if other.instance == local.instance
                       else "chunks of different indexes")
                self.problems.append(
                    f"rank {rank} ({node}) chunk {local.instance}: {_where(key)} reduces "
                    f"{other} with {local}: {out} ({why})")
                results.append(None)
                continue
            event = self.clock.compute(node, (other, local), out, not_before=ready)
            end = max(end, event.start + self.platform.compute_time(node))
            results.append(out)
        if step.type in ("rrc", "rrcs", "re"):
            for i, item in enumerate(results):
                self._write(key, step.dstbuf, step.dstoff + i, item)
        if step.type in ("rrs", "rrcs"):
            self.outgoing[key] = results
        return end

    def _read(self, key: _StepKey, buf: str, off: int) -> Item | None:
        slot = _slot(self.algo, key[0], buf, off)
        item = self.buffers.get((key[0], slot))
        if item is None:
            self.problems.append(f"rank {key[0]} ({self.ranks[key[0]]}): {_where(key)} "
                                 f"reads {buf}[{off}], which holds no chunk yet")
            return None
        writer = self.writer.get((key[0], slot))
        if writer is not None and writer[:2] != key[:2] and not self._after(writer, key):
            # Threadblocks run concurrently: MSCCL orders a read after another
            # threadblock's write only through depid/deps (or a chain of steps
            # and transfers).  Without one, the chunk read is a race the list
            # schedule's timing happened to win.
            self.problems.append(
                f"rank {key[0]} ({self.ranks[key[0]]}): {_where(key)} reads {buf}[{off}] "
                f"({item}), written by {_where(writer)} of another threadblock with no "
                f"dependency (depid/deps) ordering the two: a race")
        self.readers.setdefault((key[0], slot), []).append(key)
        return item

    def _write(self, key: _StepKey, buf: str, off: int, item: Item | None) -> None:
        slot = (key[0], _slot(self.algo, key[0], buf, off))
        # Overwriting what another threadblock wrote or still reads, unordered,
        # is a race too: which value is read, or stays, depends on timing.
        earlier = [("wrote", w) for w in (self.writer.get(slot),) if w is not None]
        earlier += [("reads", r) for r in self.readers.pop(slot, [])]
        for what, other in earlier:
            if other[:2] != key[:2] and not self._after(other, key):
                self.problems.append(
                    f"rank {key[0]} ({self.ranks[key[0]]}): {_where(key)} writes {buf}[{off}], "
                    f"which {_where(other)} of another threadblock {what}, with no "
                    f"dependency (depid/deps) ordering the two: a race")
                break
        self.buffers[slot] = item
        self.writer[slot] = key

    def _after(self, writer: _StepKey, reader: _StepKey) -> bool:
        """True when the step graph orders ``reader``'s start after ``writer``'s end.

        A search back from ``reader``'s start through the phases placed after
        ``writer``'s end only: a path between the two holds no other (all the
        ancestors of a 128-rank hierarchical allreduce's steps took 36 of its 42 s).
        """
        source, target = ("end", writer), ("start", reader)
        position = self.position
        low = position.get(source)
        if low is None or low > position[target]:  # not placed yet, or placed after
            return False
        predecessors = self.graph.pred
        seen = {target}
        stack = [target]
        while stack:
            for before in predecessors[stack.pop()]:
                if before == source:
                    return True
                if before not in seen and position[before] > low:
                    seen.add(before)
                    stack.append(before)
        return False


def _sort_key(node: tuple[Any, ...]) -> tuple[Any, ...]:
    if node[0] == "xfer":
        return (1, node[1:])
    return (0, node[1], node[0])
