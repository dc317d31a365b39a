"""Import a SimGrid platform XML file as a portsim :class:`~portsim.simulator.platform.Platform`.

Many users describe their clusters for SimGrid (``<platform version="4.1">``
with ``<zone routing="Full">``, ``<host speed>``, ``<link bandwidth latency>``,
``<router>`` and ``<route src dst><link_ctn id/></route>``).
:func:`simgrid_platform` reads such a file; a scenario file names one as::

    platform:
      port_model: bidirectional
      simgrid: {file: platforms/cluster.xml, message_size: 1000000, task_flops: 1e9}

(the path relative to the scenario or study file; ``simgrid: FILE`` alone
takes the defaults :data:`DEFAULT_MESSAGE_SIZE` and :data:`DEFAULT_TASK_FLOPS`).

Conversion
----------
- Each ``<host>`` becomes a node; each ``<router>`` a router node (it only
  forwards).  Ids are kept, so they must match ``[A-Za-z0-9_.-]+``.
- Compute time of a host: ``task_flops / speed``, ``speed`` its first power
  state (``speed="1Gf,500Mf"`` reads ``1Gf``).  Routers compute nothing.
- Each ``<route src dst>`` becomes a direct link ``src -> dst`` of latency
  ``sum(latency)`` and bandwidth ``min(bandwidth) / message_size`` (messages
  per second) over the links the route crosses, so that a transfer of size
  ``s`` (in messages) lasts ``sum(latency) + s · message_size /
  min(bandwidth)`` (:meth:`portsim.simulator.platform.Link.duration`) and a unit
  message ``c = sum(latency) + message_size / min(bandwidth)``: the time of
  one message of ``message_size`` bytes alone on the route, latencies added
  and the slowest link limiting the rate (SimGrid's
  plain model, without the TCP correction factors its default ``LV08`` model
  applies: multiply latencies by 13.01 and bandwidths by 0.97 beforehand to
  mimic it).  A route is symmetrical unless ``symmetrical="NO"``: the reverse
  link gets the same cost, as SimGrid reuses the links in reverse order.
- Units follow SimGrid: speed in flops (``f``, ``kf``, ``Mf``, ``Gf``, ``Tf``,
  ``Pf``; a bare number is flops), bandwidth in bytes or bits per second
  (``Bps``, ``kBps``, ``MBps``, ``GBps``, ``TBps``, ``KiBps``..., ``bps``,
  ``Mbps``, ``Gbps``...; bare = ``Bps``), latency in seconds (``s``, ``ms``,
  ``us``, ``ns``, ``ps``; bare = ``s``).  Every conversion is exact
  (:class:`fractions.Fraction`), so costs come out in seconds.  A ``<link>``
  without ``latency`` has latency 0 (SimGrid's default); an empty one is an
  error, as is a missing attribute SimGrid requires (``missing attribute``).
- Nested zones are flattened; ``<zoneRoute>``, ``<cluster>`` and
  ``<cabinet>`` (which SimGrid expands itself) are rejected with a clear
  error, as are routes naming unknown links or endpoints, and ``<include>``
  (SimGrid's or XInclude: the included elements would be lost).  External
  entities are not read (an error), nor entity bombs (expat's limit).
- Each route is its own link: routes that share a SimGrid ``<link>`` (a
  backbone) do not contend for it in portsim, which would split its
  bandwidth max-min fairly between their flows, so transfers on two such
  routes at once run at full rate each (figures can exceed SimGrid's).  A
  route is a list of links, not a path of a graph (Full routing has none):
  a link listed twice counts its latency twice.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

from portsim.simulator.errors import ScenarioError
from portsim.simulator.numbers import format_rational, parse_rational
from portsim.simulator.platform import (
    BIDIRECTIONAL,
    NODE_ID_PATTERN,
    Link,
    Node,
    Platform,
    PortModel,
)

__all__ = ["DEFAULT_MESSAGE_SIZE", "DEFAULT_TASK_FLOPS", "simgrid_platform"]

DEFAULT_MESSAGE_SIZE = 10**6
"""Bytes of one message when not given (one megabyte)."""

DEFAULT_TASK_FLOPS = 10**9
"""Flops of one reduction task when not given (one gigaflop)."""

_SI = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
       "E": 10**18}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_TIME = {"": Fraction(1), "s": Fraction(1), "ms": Fraction(1, 10**3),
         "us": Fraction(1, 10**6), "ns": Fraction(1, 10**9), "ps": Fraction(1, 10**12),
         "m": Fraction(60), "h": Fraction(3600)}
_NUMBER = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
_UNSUPPORTED = ("zoneRoute", "ASroute", "cluster", "cabinet", "bypassRoute",
                "bypassZoneRoute")


def _quantity(text: str | None, kind: str, where: str, source: str) -> Fraction:
    """Parse ``"125MBps"``, ``"50us"``, ``"1Gf"`` into bytes/s, seconds, flops."""
    match = _NUMBER.match(text or "")
    if match is None:
        raise ScenarioError(f"not a SimGrid {kind}", path=where, value=text, source=source)
    # The number as every number portsim reads: "1e99999999" would otherwise
    # build a ten-million-digit integer (a hang), "1e400" a bandwidth beyond 10^18.
    try:
        value = parse_rational(match.group(1), path=where, error=ScenarioError)
    except ScenarioError as err:
        raise ScenarioError(err.message, path=where, value=text, source=source) from None
    unit = match.group(2)
    scale: Fraction | None = None
    if kind == "latency":
        scale = _TIME.get(unit)
    elif kind == "speed":
        stem = unit[:-1] if unit.endswith("f") else unit
        factor = _BINARY.get(stem, _SI.get(stem))
        scale = None if factor is None else Fraction(factor)
    elif kind == "bandwidth":
        bits = unit.endswith("bps")
        stem = unit[:-3] if unit.endswith(("Bps", "bps")) else unit
        factor = _BINARY.get(stem, _SI.get(stem))
        scale = None if factor is None else Fraction(factor, 8 if bits else 1)
    if scale is None:
        raise ScenarioError(f"unknown {kind} unit {unit!r}", path=where, value=text,
                            source=source)
    result = value * scale
    if result < 0 or (result == 0 and kind != "latency"):
        raise ScenarioError(f"{kind} must be {'>=' if kind == 'latency' else '>'} 0",
                            path=where, value=text, source=source)
    return result


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _required(element: ET.Element, key: str, where: str, source: str) -> str:
    """The attribute ``key`` of ``element``, which SimGrid requires: absent, it is a
    ``missing attribute`` error at ``WHERE.KEY`` (as the MSCCL reader says it), where a
    missing bandwidth was ``not a SimGrid bandwidth`` with no value to show."""
    value = element.get(key)
    if value is None:
        raise ScenarioError("missing attribute", path=f"{where}.{key}", source=source)
    return value


def simgrid_platform(
    path: str | os.PathLike[str],
    *,
    message_size: Fraction | int | str = DEFAULT_MESSAGE_SIZE,
    task_flops: Fraction | int | str = DEFAULT_TASK_FLOPS,
    port_model: PortModel | str = BIDIRECTIONAL,
) -> Platform:
    """Read a SimGrid platform XML file (see the module notes for the conversion).

    Parameters
    ----------
    path:
        The XML file.
    message_size:
        Bytes of one message (the unit-size message of SPEC.md), > 0;
        default one megabyte, :data:`DEFAULT_MESSAGE_SIZE`.
    task_flops:
        Flops of one reduction task, > 0; default one gigaflop,
        :data:`DEFAULT_TASK_FLOPS`.
    port_model:
        Platform-wide port model (SimGrid has none; one-port is portsim's).

    Returns
    -------
    Platform
        Costs and compute times in seconds, exact.

    Raises
    ------
    ScenarioError
        One line naming the file, the element and the bad value: unreadable
        file or XML, unknown unit, unknown link or endpoint in a route, a
        duplicate id, an unsupported element.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> xml = '''<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">
    ...   <host id="A" speed="1Gf"/><host id="B" speed="500Mf"/>
    ...   <link id="l" bandwidth="125MBps" latency="50us"/>
    ...   <route src="A" dst="B"><link_ctn id="l"/></route></zone></platform>'''
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "p.xml"; _ = f.write_text(xml)
    >>> p = simgrid_platform(f, message_size=10**6, task_flops=10**9)
    >>> p.cost("A", "B"), p.cost("B", "A"), p.node("B").compute
    (Fraction(161, 20000), Fraction(161, 20000), Fraction(2, 1))
    >>> p.link("A", "B").latency, p.link("A", "B").bandwidth  # 50 us; 125 messages/s
    (Fraction(1, 20000), Fraction(125, 1))
    """
    source = os.fspath(path)
    size = parse_rational(message_size, path="message_size", error=ScenarioError)
    flops = parse_rational(task_flops, path="task_flops", error=ScenarioError)
    for name, number in (("message_size", size), ("task_flops", flops)):
        if number <= 0:
            raise ScenarioError("must be > 0", path=name, value=format_rational(number),
                                source=source)
    try:
        root = ET.fromstring(Path(path).read_bytes())
    except FileNotFoundError:
        raise ScenarioError("file not found", source=source) from None
    except OSError as err:
        raise ScenarioError(f"cannot read file: {err.strerror}", source=source) from None
    except ET.ParseError as err:
        raise ScenarioError(f"invalid XML: {err}", source=source) from None
    if _local(root.tag) != "platform":
        raise ScenarioError("the root element must be <platform>", value=_local(root.tag),
                            source=source)
    nodes: dict[str, Node] = {}
    bandwidth: dict[str, Fraction] = {}
    latency: dict[str, Fraction] = {}
    routes: list[ET.Element] = []
    seen: dict[str, int] = {}  # elements of each tag so far, to name one without an id
    for element in root.iter():
        tag = _local(element.tag)
        index = seen[tag] = seen.get(tag, -1) + 1
        if tag in ("host", "router", "link"):  # an id SimGrid requires (a link without
            # one matched a route's <link_ctn id="">)
            _required(element, "id", f"{tag}[{index}]", source)
        ident = element.get("id", "")
        where = f"{tag}[id={ident}]"
        if tag == "include":  # SimGrid's <include file> and XInclude: content read elsewhere
            raise ScenarioError("<include> is not supported: portsim reads one file; paste "
                                "the included file's elements in its place", path=where,
                                value=element.get("file") or element.get("href"),
                                source=source)
        if tag in _UNSUPPORTED:
            raise ScenarioError(f"<{tag}> is not supported: flatten the platform into one "
                                f"zone with host-to-host routes", path=where, source=source)
        if tag in ("host", "router"):
            if not NODE_ID_PATTERN.match(ident):
                raise ScenarioError("a host or router id must match [A-Za-z0-9_.-]+",
                                    path=where, value=ident, source=source)
            if ident in nodes:
                raise ScenarioError("duplicate host or router id", path=where, value=ident,
                                    source=source)
            if tag == "host":
                speed = _required(element, "speed", where, source).split(",")[0]
                nodes[ident] = Node(ident, flops / _quantity(speed, "speed",
                                                             f"{where}.speed", source))
            else:
                nodes[ident] = Node(ident, Fraction(0), router=True)
        elif tag == "link":
            if ident in bandwidth:
                raise ScenarioError("duplicate link id", path=where, value=ident,
                                    source=source)
            bandwidth[ident] = _quantity(_required(element, "bandwidth", where, source),
                                         "bandwidth", f"{where}.bandwidth", source)
            # no latency: 0, SimGrid's default (an empty or "null" one is refused)
            latency[ident] = _quantity(element.get("latency", "0"), "latency",
                                       f"{where}.latency", source)
        elif tag == "route":
            routes.append(element)
    costs = _route_costs(routes, nodes, bandwidth, latency, source)
    try:
        return Platform(tuple(nodes.values()),
                        tuple(Link.of_bandwidth(s, d, rate / size, lat)
                              for (s, d), (lat, rate) in costs.items()),
                        PortModel.parse(port_model, path="port_model"))
    except Exception as err:
        raise ScenarioError(f"not a valid platform: {err}", source=source) from None


def _route_costs(routes: list[ET.Element], nodes: Mapping[str, Node],
                 bandwidth: Mapping[str, Fraction], latency: Mapping[str, Fraction],
                 source: str
                 ) -> dict[tuple[str, str], tuple[Fraction, Fraction]]:
    """Per route ``src -> dst``: (sum of the latencies, least bandwidth)."""
    costs: dict[tuple[str, str], tuple[Fraction, Fraction]] = {}
    explicit: set[tuple[str, str]] = set()  # reverse routes may be overridden, not these
    for index, route in enumerate(routes):
        where = f"route[{index}]"
        src, dst = (_required(route, key, where, source) for key in ("src", "dst"))
        for key, end in (("src", src), ("dst", dst)):
            if end not in nodes:
                raise ScenarioError("unknown host or router", path=f"{where}.{key}",
                                    value=end, source=source)
        if src == dst:
            raise ScenarioError("a route joins two distinct ends", path=where,
                                value=f"{src} -> {dst}", source=source)
        hops = [_required(ctn, "id", f"{where}.link_ctn", source)
                for ctn in route if _local(ctn.tag) == "link_ctn"]
        if not hops:
            raise ScenarioError("a route crosses at least one <link_ctn>", path=where,
                                value=f"{src} -> {dst}", source=source)
        for hop in hops:
            if hop not in bandwidth:
                raise ScenarioError("unknown link", path=f"{where}.link_ctn", value=hop,
                                    source=source)
        cost = (sum((latency[h] for h in hops), Fraction(0)), min(bandwidth[h] for h in hops))
        if (src, dst) in explicit:
            raise ScenarioError("a route between these two ends is given twice",
                                path=where, value=f"{src} -> {dst}", source=source)
        explicit.add((src, dst))
        costs[(src, dst)] = cost
        if route.get("symmetrical", "YES").upper() != "NO":
            costs.setdefault((dst, src), cost)
    return costs
