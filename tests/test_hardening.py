"""The crashes and hangs found by the bad-input corpus and the fuzz test, each pinned.

Each was a hang (minutes or more), a memory blow-up or a traceback before
the fix; each is now a clean error or a quick, correct answer.
"""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from portsim.scenarios.generators import complete_platform, random_platform
from portsim.simulator import (
    Operation,
    OperationKind,
    Platform,
    PlatformError,
    PortModel,
    PortsimError,
    Schedule,
    ScheduleError,
    parse_rational,
    validate,
)
from portsim.simulator.engine import MAX_REPLAY_EVENTS
from portsim.simulator.errors import short_repr


def broadcast_pair(**kw: object) -> Schedule:
    p = Platform.build(["A", "B"], [("A", "B", 1)], **kw)  # type: ignore[arg-type]
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    return Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b", "start": 0}], period=2)


def test_exponent_beyond_the_cap_is_an_error_not_a_hang() -> None:
    # Fraction("1e99999999") would compute 10**99999999 (minutes).
    with pytest.raises(PortsimError, match="out of range"):
        parse_rational("1e99999999")
    with pytest.raises(PortsimError, match="out of range"):
        parse_rational("2.5E-1001")
    with pytest.raises(PortsimError, match="out of range"):  # beyond MAX_TERM = 10**18
        parse_rational("1e1000")
    assert parse_rational("1e18") == 10**18
    assert parse_rational("25e-2") == Fraction(1, 4)


@pytest.mark.parametrize("text", ["1_000", "\u0663", "1/\u0663", "\uff11", "2.\u0665"])
def test_a_number_is_ascii_digits(text: str) -> None:
    """Python's Fraction reads "1_000" as 1000 and Arabic-Indic "\u0663" as 3."""
    with pytest.raises(PortsimError, match="ASCII digits"):
        parse_rational(text)
    assert parse_rational("1000") == 1000
    assert parse_rational("3/4") == Fraction(3, 4)


def test_huge_lag_or_horizon_is_refused_before_replaying() -> None:
    s = broadcast_pair()
    lagged = Schedule(s.platform, s.operation, (s.events[0].__class__(
        "A", "B", s.events[0].item, Fraction(0), lag=10**12),), period=Fraction(2))
    with pytest.raises(ScheduleError, match=r"events\[0\]\.lag: replaying 1000000000010 "):
        validate(lagged)
    # A horizon past the cap (it was refused, "give a shorter horizon") is counted in
    # closed form past the steady state, as `run` counts it, in no time: instance p
    # completes at 2p + 1, so 5,000,001 of them by 10,000,002.
    began = time.perf_counter()
    assert validate(s, horizon=2 * (MAX_REPLAY_EVENTS + 1)).completed == MAX_REPLAY_EVENTS + 1
    assert time.perf_counter() - began < 5
    # Just under the cap still replays: one event per period.
    assert validate(s, horizon=40).completed == 20


def test_many_instances_per_period_replay_quickly() -> None:
    # Lists of instances_per_period entries (10**9) were built per replay.
    p = Platform.build(["A", "B"], [("A", "B", 1)])
    op = Operation(OperationKind.BROADCAST, source="A").resolve(p)
    s = Schedule.from_dicts(p, op, [
        {"kind": "send", "src": "A", "dst": "B", "item": "b#0", "start": 0},
        {"kind": "send", "src": "A", "dst": "B", "item": "b#5", "start": 1}],
        period=2, instances_per_period=10**9)
    began = time.perf_counter()
    report = validate(s, horizon=10)
    assert time.perf_counter() - began < 5
    # Five periods, two instances each complete (slots 0 and 5 of each period);
    # the other 10**9 - 2 slots are served by no event: incomplete, counted.
    assert report.completed == 10
    assert report.instances == 5 * 10**9
    assert [v.kind for v in report.violations] == ["incomplete"]
    assert ("instance slots #1-#4, #6-#999999999 (999999998 of 1000000000) never complete"
            in report.violations[0].detail)


def test_huge_multiport_count_replays_without_allocating_it() -> None:
    s = broadcast_pair(port_model="multiport:1000000000000")
    assert PortModel.parse("multiport:1000000000000").k == 10**12
    report = validate(s)
    assert report.feasible
    assert report.port_model == "multiport:1000000000000"
    with pytest.raises(PlatformError, match="multiport:K"):
        PortModel.parse("multiport:" + "9" * 5000)  # int() would raise ValueError


def test_generators_refuse_sizes_that_would_hang() -> None:
    with pytest.raises(PlatformError, match="3998000 links"):
        complete_platform(2000)
    with pytest.raises(PlatformError, match="<= 10000"):
        random_platform(10**6, 3)
    assert len(complete_platform(100).links) == 9900


def test_thousands_of_participants_resolve_quickly() -> None:
    # One reachability traversal, not one per pair: a 3000-node ring used to
    # take minutes for an all-reduce.
    n = 3000
    ids = [f"N{i}" for i in range(n)]
    p = Platform.build(ids, [(ids[i], ids[(i + 1) % n], 1) for i in range(n)])
    began = time.perf_counter()
    op = Operation(OperationKind.ALLREDUCE).resolve(p)
    Operation(OperationKind.BROADCAST, source="N7").resolve(p)
    Operation(OperationKind.GATHER, target="N7").resolve(p)
    assert time.perf_counter() - began < 10
    assert len(op.participants) == n
    chain = Platform.build(ids, [(ids[i], ids[i + 1], 1) for i in range(n - 1)])
    # the participants left to their default: no operation.participants[0] to name
    with pytest.raises(PortsimError, match=r"^operation: unreachable from N1 \(in the default "
                                           r"participants: every non-router node\) "
                                           r"\(got 'N0'\)"):
        Operation(OperationKind.ALLREDUCE).resolve(chain)


def test_errors_stay_on_one_short_line() -> None:
    err = ScheduleError("unknown key", path="a\nb", value="x\ny", source="f.yaml")
    assert str(err) == "f.yaml: a\\nb: unknown key (got 'x\\ny')"
    # A YAML alias bomb: 10**8 leaves, printed in a few characters.
    bomb: list[object] = ["x"] * 10
    for _ in range(8):
        bomb = [bomb] * 10
    began = time.perf_counter()
    text = str(ScheduleError("bad", value=bomb))
    assert time.perf_counter() - began < 1
    assert len(text) < 200
    assert short_repr("2/3") == "'2/3'"


def test_rationals_beyond_pythons_digit_limit_print_exactly() -> None:
    """An exact certificate of a large program may hold rationals of thousands of digits;
    Python refuses str() of an int over 4,300 digits.  Expected strings built by hand."""
    from portsim.simulator.numbers import format_rational

    assert format_rational(Fraction(10**5000 + 1, 3)) == "1" + "0" * 4999 + "1/3"
    assert format_rational(-(10**8001) - 7) == "-1" + "0" * 8000 + "7"
    assert format_rational(Fraction(-(10**4000))) == "-1" + "0" * 4000
    assert format_rational(10**4000 - 1) == "9" * 4000
    assert format_rational(Fraction(2, 10**6000)) == "1/5" + "0" * 5999


def _simplest_by_search(low: Fraction, high: Fraction) -> Fraction:
    """The rational of [low, high] with the smallest denominator, then numerator, by
    trying every denominator in turn (an independent check of simplest_between)."""
    q = 1
    while True:
        p = -((-low.numerator * q) // low.denominator)  # ceil(low * q)
        if Fraction(p, q) <= high:
            return Fraction(p, q)
        q += 1


def test_simplest_between_equals_a_search_over_denominators() -> None:
    import random

    from portsim.simulator.numbers import simplest_between

    rng = random.Random(7)
    for _ in range(2_000):
        low = Fraction(rng.randint(1, 500), rng.randint(1, 97))
        high = low + Fraction(rng.randint(0, 50), rng.randint(1, 300))
        assert simplest_between(low, high) == _simplest_by_search(low, high), (low, high)
    with pytest.raises(ValueError, match="0 < low <= high"):
        simplest_between(Fraction(1, 2), Fraction(1, 3))


def test_a_long_upper_end_is_rounded_up_short_and_stays_above() -> None:
    """An allreduce relaxation at N = 16 certified an upper end of 162,518 digits and
    printed it whole; an upper end is now raised to a short rational (still an upper
    bound), relatively at most 2^-64 higher, with a note."""
    import random

    from portsim.planners.lp._exact import ExactSolution
    from portsim.simulator.numbers import SHORT_BITS, digits, rounded_up

    rng = random.Random(3)
    for _ in range(300):
        num = rng.getrandbits(rng.randint(1, 4_000)) + 1
        value = Fraction(num, num * rng.randint(1, 10**6) // rng.randint(1, 10**6) + 1)
        short = rounded_up(value)
        assert value <= short <= value * (1 + Fraction(1, 2**SHORT_BITS))
        assert short == value or digits(short) <= 42, (digits(value), digits(short))
    lower = Fraction(2, 9)
    upper = lower + Fraction(1, 3**200_000)  # about 95,425 digits in the denominator
    interval = ExactSolution([], lower, upper, [], [], "interval")
    assert upper <= interval.upper <= upper * (1 + Fraction(1, 2**SHORT_BITS))
    assert digits(interval.upper) <= 42
    assert interval.notes[-1].startswith("upper end rounded up from a rational of about 190,")
    exact = ExactSolution([], upper, upper, [], [], "basis")  # an exact optimum stays whole
    assert exact.upper == upper
    assert exact.notes == ()
