"""The scenario and schedule documents as pydantic models (SPEC.md).

These models check the *shape* of a document: its keys (unknown keys are
rejected everywhere), the type of every value, and the bounds that need no
context (a cost is > 0, a node count >= 1).  Every number may be an integer,
a decimal or a rational string such as ``"2/3"``; it becomes an exact
:class:`fractions.Fraction`.  Checks that need the platform (unknown node ids,
reachability, duplicate participants) happen when the loader builds the model
objects of :mod:`simulator`.

Validation is strict: a node id must be a string, a flag a boolean, a count
an integer; nothing is silently coerced.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from portsim.scenarios import generators
from portsim.simulator.errors import PortsimError
from portsim.simulator.numbers import parse_rational
from portsim.simulator.operations import OperationKind
from portsim.simulator.platform import Link, Platform, PortModel

__all__ = [
    "CompleteGeneratorSpec",
    "CostRange",
    "GeneratorSpec",
    "LinkSpec",
    "NodeSpec",
    "NonNegativeRational",
    "OperationSpec",
    "PlannerEntry",
    "PlatformSpec",
    "PositiveRational",
    "RandomGeneratorSpec",
    "Rational",
    "ScenarioSpec",
    "ScheduleFileSpec",
    "SenderTimesGeneratorSpec",
    "SimgridSpec",
    "ThreeClassGeneratorSpec",
    "TiersGeneratorSpec",
]


# -- exact numbers -------------------------------------------------------------


def _rational(value: object) -> Fraction:
    try:
        return parse_rational(value)
    except PortsimError as err:
        raise PydanticCustomError("rational", err.message) from None


def _positive_rational(value: object) -> Fraction:
    number = _rational(value)
    if number <= 0:
        raise PydanticCustomError("positive", "must be > 0")
    return number


def _non_negative_rational(value: object) -> Fraction:
    number = _rational(value)
    if number < 0:
        raise PydanticCustomError("non_negative", "must be >= 0")
    return number


Rational = Annotated[Fraction, PlainValidator(_rational)]
"""Any exact number, such as ``3``, ``0.25`` or ``"2/3"``."""

PositiveRational = Annotated[Fraction, PlainValidator(_positive_rational)]
"""An exact number > 0 (link costs, sizes, horizons)."""

NonNegativeRational = Annotated[Fraction, PlainValidator(_non_negative_rational)]
"""An exact number >= 0 (compute times)."""


def _range(value: object, *, positive: bool) -> tuple[Fraction, Fraction]:
    one = _positive_rational if positive else _non_negative_rational
    if isinstance(value, list | tuple):
        if len(value) != 2:
            raise PydanticCustomError("range", "expected a number or a range [lo, hi]")
        lo, hi = one(value[0]), one(value[1])
        if lo > hi:
            raise PydanticCustomError("range", "a range [lo, hi] needs lo <= hi")
        return lo, hi
    number = one(value)
    return number, number


def _positive_range(value: object) -> tuple[Fraction, Fraction]:
    return _range(value, positive=True)


def _non_negative_range(value: object) -> tuple[Fraction, Fraction]:
    return _range(value, positive=False)


CostRange = Annotated[tuple[Fraction, Fraction], PlainValidator(_positive_range)]
"""A number or a range ``[lo, hi]`` of numbers > 0, read as ``(lo, hi)``."""

ComputeRange = Annotated[tuple[Fraction, Fraction], PlainValidator(_non_negative_range)]
"""A number or a range ``[lo, hi]`` of numbers >= 0, read as ``(lo, hi)``."""


def _port_model(value: object) -> PortModel:
    try:
        return PortModel.parse(value)
    except PortsimError as err:
        raise PydanticCustomError("port_model", err.message) from None


PortModelField = Annotated[PortModel, PlainValidator(_port_model)]


class _Strict(BaseModel):
    """Base of every document model: frozen, strict, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# -- platform ------------------------------------------------------------------


class NodeSpec(_Strict):
    """``{id, compute, port_model, router}``: one node of an explicit platform."""

    id: str
    compute: NonNegativeRational = Fraction(1)
    port_model: PortModelField | None = None
    router: bool = False


class LinkSpec(_Strict):
    """``{src, dst, c | bandwidth [latency], both_ways}``: a directed link (and its
    reverse if ``both_ways``).

    ``c`` is the time of a unit-size message; ``bandwidth`` (> 0) with an
    optional ``latency`` (>= 0, default 0) makes a transfer of size ``s``
    last ``latency + s / bandwidth`` (:meth:`portsim.simulator.platform.Link.duration`).
    Exactly one of ``c`` and ``bandwidth`` is given.
    """

    src: str
    dst: str
    c: PositiveRational | None = None
    bandwidth: PositiveRational | None = None
    latency: NonNegativeRational | None = None
    both_ways: bool = False

    @field_validator("c", "bandwidth", "latency", mode="before")
    @classmethod
    def _not_null(cls, value: object) -> object:
        # absent is None (the other one of c and bandwidth; latency 0), but `latency:
        # null` given is no number, as `compute: null` is not: it read as 0 silently
        return _rational(value) if value is None else value

    @model_validator(mode="after")
    def _one_rule(self) -> LinkSpec:
        if self.c is not None and self.bandwidth is not None:
            raise PydanticCustomError("link_rule", "give c or bandwidth, not both")
        if self.c is None and self.bandwidth is None:
            raise PydanticCustomError("link_rule", "give c or bandwidth (with an optional "
                                                   "latency)")
        if self.c is not None and self.latency is not None:
            raise PydanticCustomError("link_rule", "latency goes with bandwidth; c is "
                                                   "already the time of a unit message")
        return self

    def links(self) -> tuple[Link, ...]:
        """The link (and its reverse when ``both_ways``)."""
        pairs = [(self.src, self.dst)] + ([(self.dst, self.src)] if self.both_ways else [])
        if self.bandwidth is None:
            assert self.c is not None
            return tuple(Link(a, b, self.c) for a, b in pairs)
        latency = self.latency if self.latency is not None else Fraction(0)
        return tuple(Link(a, b, latency + 1 / self.bandwidth, latency) for a, b in pairs)


class CompleteGeneratorSpec(_Strict):
    """``{type: complete, n, c, compute}``: every ordered pair linked with cost ``c``."""

    type: Literal["complete"]
    n: int = Field(ge=1)
    c: PositiveRational = Fraction(1)
    compute: NonNegativeRational = Fraction(1)


class SenderTimesGeneratorSpec(_Strict):
    """``{type: sender_times, times: {A: 10, ...}}``: c(i, j) = t(i), compute 0."""

    type: Literal["sender_times"]
    times: dict[str, PositiveRational] = Field(min_length=1)


class RandomGeneratorSpec(_Strict):
    """``{type: random, n, degree, c, compute}``: a seeded, strongly connected digraph."""

    type: Literal["random"]
    n: int = Field(ge=2)
    degree: int = Field(ge=1)
    c: CostRange = (Fraction(1), Fraction(1))
    compute: ComputeRange = (Fraction(1), Fraction(1))


class TiersGeneratorSpec(_Strict):
    """``{type: tiers, wan, man, lan, hosts, c_wan, c_man, c_lan, compute, wan_redundancy}``.

    A Tiers-like WAN/MAN/LAN platform with routers
    (:func:`portsim.scenarios.tiers.tiers_platform`, whose defaults these are); hosts
    are ``P0, P1, ...``, routers ``W*``, ``M*``, ``L*``.
    """

    type: Literal["tiers"]
    wan: int = Field(default=3, ge=1)
    man: int = Field(default=2, ge=1)
    lan: int = Field(default=2, ge=1)
    hosts: int = Field(default=4, ge=1)
    c_wan: CostRange = (Fraction(5), Fraction(10))
    c_man: CostRange = (Fraction(2), Fraction(5))
    c_lan: CostRange = (Fraction(1, 2), Fraction(2))
    compute: ComputeRange = (Fraction(1), Fraction(5))
    wan_redundancy: int = Field(default=1, ge=0)


def _three(value: object, what: str, positive: bool) -> tuple[Fraction, Fraction, Fraction]:
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise PydanticCustomError("three", "expected a list of three {what}, one per class",
                                  {"what": what})
    numbers = []
    for index, item in enumerate(value):
        number = _rational(item)
        if number < 0 or (positive and number == 0):
            raise PydanticCustomError("class_value", "item {index} must be {bound} 0",
                                      {"index": index, "bound": ">" if positive else ">="})
        numbers.append(number)
    return numbers[0], numbers[1], numbers[2]


def _class_times(value: object) -> tuple[Fraction, Fraction, Fraction]:
    return _three(value, "times", positive=True)


def _class_probabilities(value: object) -> tuple[Fraction, Fraction, Fraction]:
    first, second, third = _three(value, "probabilities", positive=False)
    if first + second + third != 1:
        raise PydanticCustomError("sum", "the three probabilities must sum to 1")
    return first, second, third


ClassTimes = Annotated[tuple[Fraction, Fraction, Fraction], PlainValidator(_class_times)]
"""Three times > 0, one per processor class."""

ClassProbabilities = Annotated[tuple[Fraction, Fraction, Fraction],
                               PlainValidator(_class_probabilities)]
"""Three probabilities >= 0 summing to 1 exactly."""


class ThreeClassGeneratorSpec(_Strict):
    """``{type: three_class, n, times, probabilities | counts}``: a random sender-time cluster.

    Liu, Kuo and Wang (2007), section 6.2: each of the ``n`` processors
    ``P0..`` draws its class among three (see
    :func:`portsim.scenarios.generators.three_class_platform`).  Without ``times``,
    three distinct integer times are drawn from 1..10 per seed.
    """

    type: Literal["three_class"]
    n: int = Field(ge=2)
    times: ClassTimes | None = None
    probabilities: ClassProbabilities | None = None
    counts: list[Annotated[int, Field(ge=0)]] | None = Field(default=None, min_length=3,
                                                            max_length=3)


class _FabricSpec(_Strict):
    """A fabric generator (issue 14): each one's ``build(port_model)`` makes the
    platform; every node is ``multiport`` unless the platform's ``port_model``
    is given."""

    compute: NonNegativeRational = Fraction(1)


class DgxA100GeneratorSpec(_FabricSpec):
    """``{type: dgx_a100, servers, nvlink, nic, ib, compute}``
    (:func:`portsim.scenarios.generators.dgx_a100_platform`)."""

    type: Literal["dgx_a100"]
    servers: int = Field(default=1, ge=1)
    nvlink: PositiveRational = Fraction(300)
    nic: PositiveRational = Fraction(25)
    ib: PositiveRational = Fraction(25)

    def build(self, port_model: PortModel) -> Platform:
        return generators.dgx_a100_platform(self.servers, nvlink=self.nvlink, nic=self.nic,
                                            ib=self.ib, compute=self.compute,
                                            port_model=port_model)


class Mi250GeneratorSpec(_FabricSpec):
    """``{type: mi250, servers, xgmi, ib, compute}``
    (:func:`portsim.scenarios.generators.mi250_platform`)."""

    type: Literal["mi250"]
    servers: int = Field(default=1, ge=1)
    xgmi: PositiveRational = Fraction(50)
    ib: PositiveRational = Fraction(16)

    def build(self, port_model: PortModel) -> Platform:
        return generators.mi250_platform(self.servers, xgmi=self.xgmi, ib=self.ib,
                                         compute=self.compute, port_model=port_model)


class Dgx1GeneratorSpec(_FabricSpec):
    """``{type: dgx1, nvlink, compute}`` (:func:`portsim.scenarios.generators.dgx1_platform`)."""

    type: Literal["dgx1"]
    nvlink: PositiveRational = Fraction(25)

    def build(self, port_model: PortModel) -> Platform:
        return generators.dgx1_platform(nvlink=self.nvlink, compute=self.compute,
                                        port_model=port_model)


class FatTreeGeneratorSpec(_FabricSpec):
    """``{type: fat_tree, k, host, aggregation, core, compute}``
    (:func:`portsim.scenarios.generators.fat_tree_platform`)."""

    type: Literal["fat_tree"]
    k: int = Field(default=4, ge=2)
    host: PositiveRational = Fraction(1)
    aggregation: PositiveRational = Fraction(1)
    core: PositiveRational = Fraction(1)

    def build(self, port_model: PortModel) -> Platform:
        return generators.fat_tree_platform(self.k, host=self.host,
                                            aggregation=self.aggregation, core=self.core,
                                            compute=self.compute, port_model=port_model)


class RingGeneratorSpec(_FabricSpec):
    """``{type: ring, n, bandwidth, compute}``.

    See :func:`portsim.scenarios.generators.ring_platform`.
    """

    type: Literal["ring"]
    n: int = Field(default=8, ge=2)
    bandwidth: PositiveRational = Fraction(1)

    def build(self, port_model: PortModel) -> Platform:
        return generators.ring_platform(self.n, bandwidth=self.bandwidth,
                                        compute=self.compute, port_model=port_model)


class TorusGeneratorSpec(_FabricSpec):
    """``{type: torus, rows, cols, bandwidth, compute}``
    (:func:`portsim.scenarios.generators.torus_platform`)."""

    type: Literal["torus"]
    rows: int = Field(default=4, ge=1)
    cols: int = Field(default=4, ge=1)
    bandwidth: PositiveRational = Fraction(1)

    def build(self, port_model: PortModel) -> Platform:
        return generators.torus_platform(self.rows, self.cols, bandwidth=self.bandwidth,
                                         compute=self.compute, port_model=port_model)


FABRIC_GENERATORS = (DgxA100GeneratorSpec, Mi250GeneratorSpec, Dgx1GeneratorSpec,
                     FatTreeGeneratorSpec, RingGeneratorSpec, TorusGeneratorSpec)
"""The fabric generator specs (each has ``build``)."""

GeneratorSpec = Annotated[
    CompleteGeneratorSpec | SenderTimesGeneratorSpec | RandomGeneratorSpec
    | TiersGeneratorSpec | ThreeClassGeneratorSpec | DgxA100GeneratorSpec
    | Mi250GeneratorSpec | Dgx1GeneratorSpec | FatTreeGeneratorSpec | RingGeneratorSpec
    | TorusGeneratorSpec,
    Field(discriminator="type"),
]


class SimgridSpec(_Strict):
    """``{file, message_size, task_flops}``: a SimGrid platform XML file to import.

    ``file`` is relative to the scenario (or study) file.  A host's compute
    time is ``task_flops / speed``; a route's cost is ``sum(latency) +
    message_size / min(bandwidth)`` in seconds (:mod:`portsim.scenarios.simgrid`).
    The defaults, one megabyte (10^6 bytes) and one gigaflop (10^9 flops),
    are those of :func:`portsim.scenarios.simgrid.simgrid_platform`.  ``simgrid:
    path.xml`` is short for ``simgrid: {file: path.xml}``.
    """

    file: str = Field(min_length=1)
    message_size: PositiveRational = Fraction(10**6)
    task_flops: PositiveRational = Fraction(10**9)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: object) -> object:
        if isinstance(data, str):
            return {"file": data}
        if not isinstance(data, dict):
            raise PydanticCustomError(
                "simgrid", "expected a file name or a mapping {file, message_size, task_flops}")
        return data


class PlatformSpec(_Strict):
    """A platform: a port model and ``nodes`` + ``links``, a ``generator`` or ``simgrid``.

    Whether exactly one of the three forms is given is checked by the loader,
    which can then name the offending key.
    """

    port_model: PortModelField = PortModel()
    nodes: list[NodeSpec] | None = None
    links: list[LinkSpec] | None = None
    generator: GeneratorSpec | None = None
    simgrid: SimgridSpec | None = None


# -- operation and planners ----------------------------------------------------


class OperationSpec(_Strict):
    """The collective operation; which fields apply to which ``type`` is in SPEC.md."""

    type: Literal[
        "scatter", "gather", "broadcast", "reduce", "allreduce", "alltoall", "allgather"
    ]
    source: str | None = None
    targets: list[str] | None = Field(default=None, min_length=1)
    participants: list[str] | None = Field(default=None, min_length=1)
    target: str | None = None
    commutative: bool = False
    sources: list[str] | None = Field(default=None, min_length=1)
    size: PositiveRational = Fraction(1)

    @property
    def kind(self) -> OperationKind:
        """The operation kind as the simulator's enum."""
        return OperationKind(self.type)


class PlannerEntry(_Strict):
    """One entry of ``planners``: a name, or ``{name: ..., <option>: <value>, ...}``.

    Options are free-form; the planner checks them.
    """

    name: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _split_options(cls, data: object) -> object:
        if isinstance(data, str):
            return {"name": data}
        if isinstance(data, dict):
            options = {k: v for k, v in data.items() if k != "name"}
            return {"name": data["name"], "options": options} if "name" in data else {
                "options": options}
        return data


# -- documents -----------------------------------------------------------------


class ScenarioSpec(_Strict):
    """A scenario file (SPEC.md, "Scenario file")."""

    name: str = Field(pattern=r"^[a-z0-9_-]+$")
    description: str = ""
    seed: int | None = Field(default=None, ge=0)
    platform: PlatformSpec
    operation: OperationSpec
    planners: list[PlannerEntry] = Field(default_factory=list)
    horizon: PositiveRational | None = None

    @field_validator("planners")
    @classmethod
    def _some_planner(cls, planners: list[PlannerEntry]) -> list[PlannerEntry]:
        if not planners:
            raise PydanticCustomError("planners", "list at least one planner to run")
        return planners


class ScheduleFileSpec(_Strict):
    """A schedule file (SPEC.md, "Schedule file"), one-shot or periodic.

    ``events`` are checked one by one by :meth:`portsim.simulator.schedule.Schedule.from_dicts`.
    """

    description: str | None = None
    platform: PlatformSpec | None = None
    platform_file: str | None = None
    port_model: PortModelField | None = None
    seed: int | None = Field(default=None, ge=0)
    operation: OperationSpec
    period: Rational | None = None
    instances_per_period: int = 1
    follows: list[Any] | None = None
    events: list[Any]
