"""Quantities in a text, and whether a claim's quantity is one the premise gives.

A number in a claim is bound to what it counts: "10 GB" is not "10 members", "300,000
kilometres per second" and "299,792,458 metres per second" are one speed written twice, and
"about 70,400" is 70,400. :func:`quantities` reads each number of a text with the unit that
follows it (a known unit with its dimension and scale, or the counted noun), and
:func:`is_given` says whether one of a premise's quantities names the same amount:

* the same dimension (length, mass, time, data, speed, temperature, area, volume, share,
  money) converted to one scale; a number counting something else ("10 members", "35,500
  voles") never meets a measured one ("10 GB"), and meets any other count of the same value
  (the counted noun is only a soft sign: "35,500 animals", "35,500 voles");
* equal values, within 1 % when the units differ (a rounded conversion) and within
  :data:`HEDGED` when either side is hedged ("about", "around", "roughly", "nearly"...);
* a frequency ("once daily", "three times a day") is a count of times.

Pure functions, no model.

Examples
--------
>>> claim = quantities("The Enterprise plan gets 10 GB.")
>>> is_given(claim[0], quantities("It offers 1000 GB for up to 10 members."))
False
>>> speed = quantities("Light travels at about 300,000 kilometres per second.")
>>> is_given(speed[0], quantities("Light travels at 299,792,458 metres per second."))
True
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ragmeter.text import STOP_WORDS

__all__ = ["Quantity", "is_given", "quantities", "unbound_quantities"]


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with what it measures."""

    #: The value in the dimension's base unit (metres, grams, seconds, bytes, m/s, kelvin...).
    value: float
    #: The number as written (with "million" and the like applied), before any unit.
    number: float
    #: "length", "mass", ... for a known unit; None for a counted noun or a bare number.
    dimension: str | None
    #: For a unit of no known dimension, the stems of the (at most two) words after the
    #: number ("members", "small moons"), else ().
    nouns: tuple[str, ...]
    #: Hedged by "about", "around", "roughly"... (or by "~").
    approx: bool
    #: Said to be exact ("exactly", "precisely"): no rounding of the passage's number.
    exact: bool = False

    @property
    def has_unit(self) -> bool:
        """Whether a unit was written after the number (a known one, or a noun)."""
        return self.dimension is not None or bool(self.nouns)


# unit words -> (dimension, scale to the base unit)
_UNITS: dict[str, tuple[str, float]] = {}


def _add(dimension: str, scale: float, *names: str) -> None:
    for name in names:
        _UNITS[name] = (dimension, scale)


_add("length", 1e-3, "mm", "millimetre", "millimetres", "millimeter", "millimeters")
_add("length", 1e-2, "cm", "centimetre", "centimetres", "centimeter", "centimeters")
_add("length", 1.0, "m", "metre", "metres", "meter", "meters")
_add("length", 1e3, "km", "kilometre", "kilometres", "kilometer", "kilometers", "kms")
_add("length", 1609.344, "mile", "miles", "mi")
_add("length", 0.3048, "ft", "foot", "feet")
_add("length", 0.0254, "inch", "inches")
_add("mass", 1e-3, "mg", "milligram", "milligrams")
_add("mass", 1.0, "g", "gram", "grams")
_add("mass", 1e3, "kg", "kilogram", "kilograms", "kilo", "kilos")
_add("mass", 1e6, "tonne", "tonnes", "ton", "tons", "t")
_add("mass", 453.592, "lb", "lbs", "pound", "pounds")
_add("time", 1.0, "s", "sec", "secs", "second", "seconds")
_add("time", 60.0, "min", "mins", "minute", "minutes")
_add("time", 3600.0, "h", "hr", "hrs", "hour", "hours")
_add("time", 86400.0, "day", "days")
_add("time", 604800.0, "week", "weeks")
_add("time", 31557600.0, "year", "years", "yr", "yrs")
_add("data", 1.0, "byte", "bytes", "b")
_add("data", 1e3, "kb", "kilobyte", "kilobytes")
_add("data", 1e6, "mb", "megabyte", "megabytes")
_add("data", 1e9, "gb", "gigabyte", "gigabytes")
_add("data", 1e12, "tb", "terabyte", "terabytes")
_add("volume", 1e-3, "ml", "millilitre", "millilitres", "milliliter", "milliliters")
_add("volume", 1.0, "l", "litre", "litres", "liter", "liters")
_add("volume", 3.78541, "gallon", "gallons")
_add("volume", 1e-3, "cm³", "cm3", "cc")
_add("volume", 1e3, "m³", "m3")
_add("volume/time", 1e3, "m³/s", "m3/s")
_add("area", 1.0, "m²", "m2")
_add("area", 1e6, "km²", "km2")
_add("area", 1e4, "hectare", "hectares", "ha")
_add("area", 4046.86, "acre", "acres")
_add("share", 1.0, "%", "percent", "per cent", "pct")
_add("money", 1.0, "$", "dollar", "dollars", "usd")
_add("money_eur", 1.0, "€", "euro", "euros", "eur")
_add("money_gbp", 1.0, "£", "pound sterling")
_add("speed", 1000 / 3600, "km/h", "kmh", "kph")
_add("speed", 1.0, "m/s")
_add("speed", 1e3, "km/s")
_add("speed", 0.44704, "mph")
_add("frequency", 1.0, "hz", "hertz")
_add("frequency", 1e3, "khz")
_add("frequency", 1e6, "mhz")
_add("frequency", 1e9, "ghz")
_add("power", 1.0, "w", "watt", "watts")
_add("power", 1e3, "kw", "kilowatt", "kilowatts")
_add("power", 1e6, "mw", "megawatt", "megawatts")

_SQUARE = {"square", "sq"}
_CUBIC = {"cubic"}
#: How far apart two hedged values may be ("about 70,400" and 70,412; not "about 36,380"
#: and 32,950).
HEDGED = 0.05
#: Counts of times, read before a word of frequency ("once daily", "twice a week"; not
#: "once a market town").
_TIMES = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
_FREQUENCY = frozenset({"daily", "a", "an", "per", "every", "each", "weekly", "monthly", "yearly"})
_EXACT = frozenset({"exactly", "precisely"})
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9}
_HEDGES = frozenset(
    """
    about around approximately roughly nearly almost some circa approx over under estimated
    ~ close
    """.split()  # noqa: SIM905
)
_NUMBER_WORDS: dict[str, float] = {
    w: float(i)
    for i, w in enumerate(
        """
        zero one two three four five six seven eight nine ten eleven twelve thirteen
        fourteen fifteen sixteen seventeen eighteen nineteen twenty
        """.split()  # noqa: SIM905
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80}
_NUMBER_WORDS |= {"ninety": 90, "hundred": 100, "dozen": 12}

# A token: a number (digits with separators and decimals, or a currency sign before it), a
# word, a percent sign, a slash unit ("km/h", "m/s", "m³/s"), a unit with its power ("km²")
# or a punctuation mark (which ends a number's unit: "Two: Phobos and Deimos" counts nothing
# named).
_TOKEN_RE = re.compile(
    r"[$€£~]|\d+(?:[,\u00a0]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
    r"|[A-Za-z]+[²³]?/[A-Za-z]+|[A-Za-z]+[²³]|[A-Za-z]+|%|°[CF]?|[.,:;!?()]"
)


def _number(token: str) -> float | None:
    if token[0].isdigit():
        return float(token.replace(",", "").replace("\u00a0", ""))
    return _NUMBER_WORDS.get(token)


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@lru_cache(maxsize=20_000)
def quantities(text: str) -> tuple[Quantity, ...]:
    """Every number of ``text`` ("one" only before a known unit) with its unit.

    >>> [(q.value, q.dimension) for q in quantities("It weighs 2.5 kg and costs $40.")]
    [(2500.0, 'mass'), (40.0, 'money')]
    """
    toks = [t.lower() for t in _TOKEN_RE.findall(text)]
    out: list[Quantity] = []
    k = 0
    while k < len(toks):
        value = _number(toks[k])
        if toks[k] in _TIMES and k + 1 < len(toks) and toks[k + 1] in _FREQUENCY:
            out.append(Quantity(_TIMES[toks[k]], _TIMES[toks[k]], "times", (), approx=False))
            k += 1
            continue
        if value is None or (toks[k] == "one" and not _unit_at(toks, k + 1)):
            k += 1
            continue
        before = toks[max(0, k - 3) : k]
        approx = any(w in _HEDGES for w in before)
        exact = any(w in _EXACT for w in before)
        currency = toks[k - 1] if k and toks[k - 1] in ("$", "€", "£") else None
        j = k + 1
        if j < len(toks) and toks[j] in _SCALES:
            value *= _SCALES[toks[j]]
            j += 1
        number = value
        dimension, scale, nouns, j = _unit(toks, j)
        if currency is not None and dimension is None:
            dimension, scale = _UNITS[currency]
        if dimension == "temperature":
            value = value + 273.15 if scale == 1.0 else (value - 32) * 5 / 9 + 273.15
            scale = 1.0
        out.append(
            Quantity(
                value=value * scale,
                number=number,
                dimension=dimension,
                nouns=nouns,
                approx=approx,
                exact=exact,
            )
        )
        k = j
    return tuple(out)


def _unit_at(toks: list[str], j: int) -> bool:
    return j < len(toks) and (toks[j] in _UNITS or toks[j] in _SQUARE or toks[j] in _CUBIC)


def _unit(toks: list[str], j: int) -> tuple[str | None, float, tuple[str, ...], int]:
    """(dimension, scale, counted noun, next index) of the unit starting at ``toks[j]``."""
    if j >= len(toks):
        return None, 1.0, (), j
    word = toks[j]
    if word in ("°", "°c", "°f") or (word == "degrees" and j + 1 < len(toks)):
        follow = toks[j + 1] if j + 1 < len(toks) else ""
        if word == "°f" or follow in ("fahrenheit", "f"):
            return "temperature", 0.0, (), j + (2 if word == "degrees" or word == "°" else 1)
        if word == "°c" or follow in ("celsius", "c", "centigrade") or word == "°":
            return "temperature", 1.0, (), j + (2 if word in ("degrees", "°") else 1)
    if word in ("degree", "degrees"):  # no scale named: the number as written
        return None, 1.0, (), j + 1
    if word == "times" and j + 1 < len(toks) and toks[j + 1] in _FREQUENCY:
        return "times", 1.0, (), j + 1
    if word in _SQUARE and j + 1 < len(toks) and toks[j + 1] in _UNITS:
        dim, scale = _UNITS[toks[j + 1]]
        if dim == "length":
            return "area", scale * scale, (), j + 2
    following = _UNITS.get(toks[j + 1]) if j + 1 < len(toks) else None
    if word in _CUBIC and following is not None and following[0] == "length":
        dim, scale = "volume", following[1] ** 3 * 1e3  # "cubic metres" in litres
        j += 2
    elif word in _UNITS:
        dim, scale = _UNITS[word]
        j += 1
    else:
        dim = None
    if dim is not None:
        if j + 1 < len(toks) and toks[j] == "per" and toks[j + 1] in _UNITS:
            per_dim, per_scale = _UNITS[toks[j + 1]]
            if dim == "length" and per_dim == "time":
                return "speed", scale / per_scale, (), j + 2
            return f"{dim}/{per_dim}", scale / per_scale, (), j + 2
        if j < len(toks) and toks[j] in ("squared", "2") and dim == "length":
            return "area", scale * scale, (), j + 1
        return dim, scale, (), j
    # a counted noun: the next content words ("10 members", "two small moons": without tags
    # the noun may be the first or the second word, so both are kept)
    if toks[j] in STOP_WORDS or not toks[j].isalpha():
        return None, 1.0, (), j
    nouns = [w for w in toks[j : j + 2] if w.isalpha() and w not in STOP_WORDS]
    return None, 1.0, tuple(_stem(w) for w in nouns), j + 1


def _close(a: float, b: float, tolerance: float) -> bool:
    if a == b:
        return True
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def _significant_digits(x: float) -> int:
    """The digits ``x`` is written with (trailing zeros of a whole number not counted:
    1,000 has one, 1.25 three)."""
    text = f"{abs(x):.12g}"
    mantissa = text.split("e")[0]
    digits = mantissa.replace(".", "").lstrip("0")
    if "." not in mantissa:
        digits = digits.rstrip("0")
    return max(1, len(digits))


def _rounds_to(value: float, rounded: float) -> bool:
    """Whether ``value`` rounded or cut to the digits ``rounded`` is written with gives it."""
    if value == 0 or rounded == 0:
        return value == rounded
    places = _significant_digits(rounded) - 1 - math.floor(math.log10(abs(value)))
    cut = math.trunc(value * 10**places) / 10**places
    return _close(round(value, places), rounded, 1e-9) or _close(cut, rounded, 1e-9)


def _converted(claim: Quantity, given: Quantity) -> bool:
    """Whether two quantities of one dimension are written in different units."""
    if claim.dimension is None or not claim.number or not given.number:
        return False
    return not _close(claim.value / claim.number, given.value / given.number, 1e-9)


def is_given(claim: Quantity, premise: Sequence[Quantity]) -> bool:
    """Whether a quantity of ``premise`` names the same amount as ``claim``."""
    # in one unit, a claim may round or cut the passage's number to its own digits ("1.6
    # billion" for 1.61 billion, "23,000" for 23,412, "99%" for 99.9%), not give another
    # ("$541 million" for $538 million); a whole number under 10,000 that ends in zero is
    # exact (the year 1890 is not 1889)
    number = float(claim.number)  # a number word is an int ("sixty")
    year_like = number.is_integer() and number < 10_000 and number % 10 == 0
    may_round = not claim.exact and not year_like
    for given in premise:
        if claim.dimension != given.dimension:
            # a count never meets a measured quantity, but a bare number in the claim ("in
            # 1889") meets a premise number written with a unit
            bare = not claim.has_unit and given.dimension is not None
            if bare and _close(claim.value, given.number, 0.0):
                return True
            continue
        tolerance = HEDGED if claim.approx or given.approx else 0.0
        if tolerance == 0.0 and _converted(claim, given):
            tolerance = 0.01  # a unit conversion rounds
        if _close(claim.value, given.value, tolerance):
            return True
        if tolerance == 0.0 and may_round and _rounds_to(given.number, number):
            return True
    return False


def unbound_quantities(claim: str, premise: str) -> int:
    """How many of ``claim``'s quantities no quantity of ``premise`` gives."""
    given = quantities(premise)
    return sum(1 for q in quantities(claim) if not is_given(q, given))
