"""Exact numbers: parsing every cost and time as a rational, printing them back.

Every number read from a file may be an integer, a decimal or a rational string
such as ``"2/3"``; it becomes a :class:`fractions.Fraction`.  Exact results are
printed as ``"2/9"`` or ``"12"``, never as rounded floats.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable
from decimal import Context, Decimal
from fractions import Fraction
from typing import Final, TypeAlias

from portsim.simulator.errors import PortsimError

__all__ = ["EXACT_TEXT_CHARS", "MAX_EXPONENT", "MAX_TERM", "SHORT_BITS", "Time", "approximate",
           "common_denominator", "counted", "decimal_exponent", "digits", "format_rational",
           "parse_rational", "per_time", "readable", "rounded_up", "short", "simplest_between",
           "with_article", "with_decimal"]

MAX_EXPONENT = 1000
"""Largest decimal exponent accepted in a number string (``"1e1000"``).

Python would otherwise build ``10**99999999`` for ``"1e99999999"`` and hang."""

MAX_TERM = 10**18
"""Largest numerator (in absolute value) and denominator of a number read from
input: ``"1e400"``, ``1e-999`` or an integer of 30 digits are refused rather
than carried through the engine's integer time scale (below 2**63)."""

_EXPONENT = re.compile(r"[eE]\s*([-+]?\d+)\s*$")

Time: TypeAlias = Fraction
"""Simulated time, always an exact rational in the model."""


def parse_rational(
    value: object,
    *,
    path: str | None = None,
    error: type[PortsimError] = PortsimError,
) -> Fraction:
    """Read ``value`` as an exact rational.

    Parameters
    ----------
    value:
        An ``int``, a ``Fraction``, a finite ``float`` (read as the decimal it
        prints as, so ``0.1`` is ``1/10``), a ``Decimal`` (exactly), a
        NumPy integer or float (as an ``int`` or a ``float``), or a string holding an integer, a
        decimal (``"0.25"``) or a fraction (``"2/3"``), in ASCII digits
        (no ``_`` separator, no other script's digits).
    path:
        Key path of the value, used in the error message.
    error:
        Exception class raised on bad input (a :class:`PortsimError` subclass).

    Returns
    -------
    Fraction

    Raises
    ------
    PortsimError
        (or ``error``) when the value is not a finite number, or when the
        numerator or the denominator of an ``int``, ``float`` or string
        exceeds :data:`MAX_TERM` in absolute value (a ``Fraction`` built by
        the program is taken as it is).

    Examples
    --------
    >>> parse_rational("2/3")
    Fraction(2, 3)
    >>> parse_rational(0.1)
    Fraction(1, 10)
    """
    if isinstance(value, bool):
        raise error("expected a number, not a boolean", path=path, value=value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return _bounded(Fraction(value), value, path, error)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise error("expected a finite number", path=path, value=value)
        # float.__repr__: numpy's float64 (a float) prints itself as
        # "np.float64(0.5)", which is no number
        return _bounded(Fraction(float.__repr__(value)), value, path, error)
    if isinstance(value, numbers.Integral):  # numpy's integers
        return _bounded(Fraction(int(value)), value, path, error)
    if isinstance(value, numbers.Rational):
        return _bounded(Fraction(int(value.numerator), int(value.denominator)), value, path,
                        error)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise error("expected a finite number", path=path, value=value)
        return _bounded(Fraction(value), value, path, error)
    if isinstance(value, numbers.Real):  # numpy's float32, float16: the decimal they print
        if not math.isfinite(value):
            raise error("expected a finite number", path=path, value=value)
        return parse_rational(str(value), path=path, error=error)
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 200:
            raise error("number is too long", path=path, value=value[:40] + "...")
        if not text.isascii() or "_" in text:
            # Python's Fraction reads "1_000" and other scripts' digits ("٣" is 3):
            # a number in a file or on the command line is ASCII digits only
            raise error("expected a number such as 3, 0.25 or \"2/3\" (ASCII digits, "
                        "no '_')", path=path, value=value)
        exponent = _EXPONENT.search(text)
        if exponent is not None and abs(int(exponent.group(1))) > MAX_EXPONENT:
            raise error(f"number is out of range (exponent beyond +-{MAX_EXPONENT})",
                        path=path, value=value)
        try:
            result = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise error(
                "expected a number such as 3, 0.25 or \"2/3\"", path=path, value=value
            ) from None
        return _bounded(result, value, path, error)
    raise error("expected a number such as 3, 0.25 or \"2/3\"", path=path, value=value)


def _bounded(number: Fraction, value: object, path: str | None,
             error: type[PortsimError]) -> Fraction:
    """``number``, unless its numerator or denominator exceeds :data:`MAX_TERM`."""
    if abs(number.numerator) > MAX_TERM:
        raise error("number is out of range (beyond +-10^18)", path=path, value=_short(value))
    if number.denominator > MAX_TERM:
        raise error("number is too fine (a denominator beyond 10^18: write it as a "
                    "fraction such as \"1/3\", or use a larger unit)",
                    path=path, value=_short(value))
    return number


def _short(value: object) -> object:
    text = str(value)
    return value if len(text) <= 40 else text[:40] + "..."


_CHUNK_DIGITS = 4000
"""Digits per piece when an integer is written in pieces (:func:`_decimal`): under
Python's default limit of 4,300 digits per integer-string conversion."""

_CHUNK = 10 ** _CHUNK_DIGITS


def _decimal(n: int) -> str:
    """``str(n)``, also beyond Python's limit on integer-string conversions (an exact
    certificate of a large program may hold rationals of thousands of digits):
    written in pieces of :data:`_CHUNK_DIGITS` digits, without touching the
    process-wide limit."""
    if -_CHUNK < n < _CHUNK:
        return str(n)
    sign, n = ("-", -n) if n < 0 else ("", n)
    pieces: list[int] = []
    while n:
        n, piece = divmod(n, _CHUNK)
        pieces.append(piece)
    return sign + str(pieces[-1]) + "".join(str(p).zfill(_CHUNK_DIGITS)
                                            for p in reversed(pieces[:-1]))


def format_rational(value: Fraction | int) -> str:
    """Print an exact rational as ``"2/9"`` or ``"12"``, however many digits it has.

    Examples
    --------
    >>> format_rational(Fraction(4, 2))
    '2'
    >>> format_rational(Fraction(2, 9))
    '2/9'
    >>> len(format_rational(Fraction(10 ** 5000 + 1, 3)))
    5003
    """
    value = Fraction(value)
    if value.denominator == 1:
        return _decimal(value.numerator)
    return f"{_decimal(value.numerator)}/{_decimal(value.denominator)}"


SHORT_BITS = 64
"""Relative precision of :func:`rounded_up`.

A rational whose numerator and denominator together hold more than twice
this many bits (about 39 digits) is replaced by the simplest rational at most
``2**-SHORT_BITS`` (about 5e-20) above it, relatively: some 40 digits where the
original may hold thousands."""


def digits(value: Fraction | int) -> int:
    """About how many decimal digits ``value``'s numerator and denominator hold together.

    Beyond :data:`_CHUNK_DIGITS` digits, read from the bit lengths (to one digit or
    so), so it costs nothing even where printing the number would.

    Examples
    --------
    >>> digits(Fraction(2, 9)), digits(Fraction(10 ** 50, 3))
    (2, 52)
    """
    value = Fraction(value)
    count = 0
    for n in (abs(value.numerator), value.denominator):
        if n < _CHUNK:
            count += len(str(n))
        else:
            count += math.floor((n.bit_length() - 1) * math.log10(2)) + 1
    return count


def decimal_exponent(value: Fraction | int) -> int:
    """``floor(log10(value))``, exactly: the ``e`` with ``10^e <= value < 10^(e+1)``
    (``value > 0``).

    Examples
    --------
    >>> decimal_exponent(Fraction(7, 4)), decimal_exponent(Fraction(3, 65))
    (0, -2)
    >>> decimal_exponent(1000), decimal_exponent(Fraction(999, 1000)), decimal_exponent(1)
    (3, -1, 0)
    """
    value = Fraction(value)
    if value <= 0:
        raise ValueError(f"decimal_exponent needs a positive number, got {value}")
    p, q = value.numerator, value.denominator

    def at_least(e: int) -> bool:  # value >= 10^e, in integers
        return p >= q * 10**e if e >= 0 else p * 10**-e >= q

    exponent = len(str(p)) - len(str(q))  # within one of the answer
    while not at_least(exponent):
        exponent -= 1
    while at_least(exponent + 1):
        exponent += 1
    return exponent


def simplest_between(low: Fraction, high: Fraction) -> Fraction:
    """The simplest rational of ``[low, high]`` (smallest denominator, then numerator).

    The continued-fraction walk down the Stern–Brocot tree: each step either
    finds an integer in the interval or keeps the common integer part and
    turns the interval over (``x = a + 1/y``).  ``0 < low <= high``.

    Examples
    --------
    >>> simplest_between(Fraction(3, 10), Fraction(2, 5))
    Fraction(1, 3)
    >>> simplest_between(Fraction(7, 2), Fraction(9, 2))
    Fraction(4, 1)
    """
    if not 0 < low <= high:
        raise ValueError(f"simplest_between needs 0 < low <= high, not [{low}, {high}]")
    terms: list[int] = []
    while True:
        whole = low.numerator // low.denominator
        if whole == low or whole + 1 <= high:
            last = Fraction(whole if whole == low else whole + 1)
            break
        terms.append(whole)
        low, high = 1 / (high - whole), 1 / (low - whole)
    for whole in reversed(terms):
        last = whole + 1 / last
    return last


def rounded_up(value: Fraction) -> Fraction:
    """``value`` itself when it is short (or not positive), else a short rational just above it.

    A certified upper bound stays certified when it is raised; one computed
    from an exact dual may hold a hundred thousand digits that nobody can read.
    Above ``2 * SHORT_BITS`` bits (numerator and denominator together), the
    answer is the simplest rational of ``[value, value + |value| 2**-SHORT_BITS]``
    (:func:`simplest_between`, after a cut of ``value`` to some 130 bits so
    that the walk never touches the long numbers).

    Examples
    --------
    >>> rounded_up(Fraction(2, 9))
    Fraction(2, 9)
    >>> big = Fraction(10 ** 200 + 1, 3 * 10 ** 200)
    >>> short = rounded_up(big)
    >>> big < short < big * (1 + Fraction(1, 2 ** 64)), digits(short) <= 40
    (True, True)
    """
    value = Fraction(value)
    bits = value.numerator.bit_length() + value.denominator.bit_length()
    if value <= 0 or bits <= 2 * SHORT_BITS:
        return value
    low = _cut(value, up=True)
    high = max(low, _cut(value + value / 2 ** SHORT_BITS, up=False))
    return simplest_between(low, high)


def _cut(value: Fraction, *, up: bool) -> Fraction:
    """``value > 0`` rounded (up or down) to a multiple of a power of two some
    ``2 * SHORT_BITS + 4`` bits below its magnitude."""
    shift = 2 * SHORT_BITS + 4 - (value.numerator.bit_length() - value.denominator.bit_length())
    num, den = value.numerator, value.denominator
    if shift >= 0:
        num <<= shift
    else:
        den <<= -shift
    whole = -(-num // den) if up else num // den
    return Fraction(whole, 1 << shift) if shift >= 0 else Fraction(whole << -shift)


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, the noun plural (``+ "s"``) unless ``count`` is 1.

    Examples
    --------
    >>> counted(1, "unit"), counted(3, "instance"), counted(0, "matching")
    ('1 unit', '3 instances', '0 matchings')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def with_article(noun: str) -> str:
    """``noun`` after its indefinite article, by its first letter, either case (the
    collectives' names, ``an allgather``, ``a broadcast``; class names, ``an
    Operation``).

    Examples
    --------
    >>> with_article("allgather"), with_article("broadcast"), with_article("Operation")
    ('an allgather', 'a broadcast', 'an Operation')
    """
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def per_time(count: int, span: Fraction | float) -> float:
    """``count / span`` as a float, correctly rounded when ``span`` is exact.

    ``count / float(span)`` rounds ``span`` first: 166 operations over 1000/3
    gave ``0.49800000000000005``, not the float of the exact ``249/500``.

    Examples
    --------
    >>> per_time(166, Fraction(1000, 3)), per_time(3, 1.5)
    (0.498, 2.0)
    """
    if isinstance(span, Fraction):
        return float(Fraction(count) / span)
    return count / span


def common_denominator(values: Iterable[Fraction]) -> int:
    """Least common multiple of the denominators of ``values`` (1 when empty)."""
    result = 1
    for v in values:
        d = v.denominator
        if d != 1 and result % d:
            result = result * d // math.gcd(result, d)
    return result


def approximate(value: Fraction, digits: int = 6, spec: str = ".6g") -> str:
    """``~`` and ``value`` to ``digits`` significant digits, formatted by ``spec``.

    In decimal arithmetic, so that no exponent over- or underflows (floats
    stop at 1e±308).

    >>> approximate(Fraction(1, 3)), approximate(Fraction(10**50 - 1, 10**100), 4, ".3e")
    ('~0.333333', '~1.000e-50')
    >>> approximate(Fraction(10**50 + 1)), approximate(Fraction(1, 10**45))
    ('~1e+50', '~1e-45')
    """
    ctx = Context(prec=digits, Emax=10**9, Emin=-10**9)
    # normalized: the digits a rounding leaves as zeros are not written
    # (~1e+50 as ~1e-45, not ~1.00000e+50)
    return "~" + format(ctx.divide(value.numerator, value.denominator).normalize(ctx), spec)


EXACT_TEXT_CHARS: Final = 40
"""Longest exact rational written as such where a person reads it (a message, a
table cell, a chart's title): a longer one (an ``lp`` bound of 70 digits over 70
digits) also gets, or is replaced by, its decimal value (:func:`readable`,
:func:`short`)."""


def readable(value: Fraction) -> str:
    """``value`` exactly, with its decimal value after it when the fraction is long
    (more than :data:`EXACT_TEXT_CHARS`: an ``lp`` bound of 100 digits over 100).

    >>> readable(Fraction(2, 9))
    '2/9'
    >>> readable(Fraction(10**50 + 1, 3 * 10**50)).endswith(" (~0.333333)")
    True
    """
    text = format_rational(value)
    return text if len(text) <= EXACT_TEXT_CHARS else f"{text} ({approximate(value)})"


def short(value: Fraction) -> str:
    """``value`` exactly, or only its decimal value when the fraction is longer than
    :data:`EXACT_TEXT_CHARS`: for a table cell, where a long fraction would be cut
    to its first digits (``1219326311370217892…`` for about 0.123).

    >>> short(Fraction(2, 9)), short(Fraction(10**50 + 1, 3 * 10**50))
    ('2/9', '~0.333333')
    """
    text = format_rational(value)
    return text if len(text) <= EXACT_TEXT_CHARS else approximate(value)


def with_decimal(value: Fraction, exact: str | None = None) -> str:
    """``value`` exactly (``exact``, default :func:`format_rational`) and, unless it is
    a whole number, its decimal value to 4 significant digits: ``= 0.75`` where that
    decimal is the value, ``~ 0.9967`` where it is rounded.  A ratio as ``portsim
    validate`` and ``run --asymptotic`` print it; an ``exact`` already approximate
    (``~0.333333``, :func:`short`) is left alone.

    >>> with_decimal(Fraction(3, 4)), with_decimal(Fraction(299, 300)), with_decimal(Fraction(1))
    ('3/4 = 0.75', '299/300 ~ 0.9967', '1')
    """
    text = format_rational(value) if exact is None else exact
    if value.denominator == 1 or text.startswith("~"):
        return text
    decimal = f"{float(value):.4g}"
    sign = "=" if Fraction(decimal) == value else "~"
    return f"{text} {sign} {decimal}"
