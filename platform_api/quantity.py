"""apimachinery's ``resource.Quantity``: parsing (``ParseQuantity``) and its canonical text.

A value is kept as an exact ``Decimal`` (rounded up to nano units, as apimachinery does);
``Quantity`` adds the format the text was written in, which decides how it prints
(``1024Mi`` prints ``1Gi``, ``1500m`` stays ``1500m``, ``1.5`` becomes ``1500m``).  The CEL
quantity library, admission plugins and validation all parse through here.
"""

from __future__ import annotations

import decimal
import functools
from dataclasses import dataclass
from decimal import Decimal

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = f"quantities must match the regular expression '{_SPLIT_RE}'"
NUMERIC = "unable to parse numeric part of quantity"
SUFFIX = "unable to parse quantity's suffix"
DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
_SUFFIX_CHARS = set("eEinumkKMGTP")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_SUFFIX = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
CTX = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
_NANO = Decimal("1e-9")
_MILLI = Decimal("1e-3")
INT64_MAX = (1 << 63) - 1
MAX_MILLI_VALUE = INT64_MAX // 1000  # resource.MaxMilliValue


class QuantityError(ValueError):
    pass


@dataclass(frozen=True)
class Quantity:
    """A parsed quantity: its exact value and the format it prints in."""

    value: Decimal
    format: str = DECIMAL_SI
    text: str = ""  # the text as given, when apimachinery keeps it (already canonical)

    def __str__(self) -> str:
        return self.text or format_quantity(self.value, self.format)

    def milli_value(self) -> int:
        """``MilliValue``: thousandths, rounded up."""
        return _ceil(CTX.multiply(self.value, 1000))

    def int_value(self) -> int:
        """``Value``: the integer value, rounded up."""
        return _ceil(self.value)


def _ceil(value: Decimal) -> int:
    """Rounded up to an int64; 0 past its range, as Go's overflowing int64 scaling answers
    (and without building a million-digit integer for ``1e1000000``)."""
    if value.adjusted() >= 19:
        return 0
    result = int(value.to_integral_value(rounding=decimal.ROUND_CEILING, context=CTX))
    return result if -(1 << 63) <= result <= INT64_MAX else 0


def _scan(text: str) -> tuple[bool, str, str, str]:
    """apimachinery's parseQuantityString: (positive, integer digits, fraction digits, suffix)."""
    pos, end, positive = 0, len(text), True
    if text[:1] in ("-", "+"):
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isascii() and text[pos].isdigit():
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isascii() and text[pos].isdigit():
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """(base, exponent, format) of a suffix."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], DECIMAL_SI
    if suffix in _BINARY:
        return 2, _BINARY[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[:1] in "+-" else digits
        if body.isascii() and body.isdigit():
            value = int(digits)
            if -(1 << 63) <= value < 1 << 63:
                value = (value + (1 << 31)) % (1 << 32) - (1 << 31)  # Go's int32() truncation
                return 10, value, DECIMAL_EXPONENT
    raise QuantityError(SUFFIX)


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Quantity:
    """``resource.ParseQuantity``, or QuantityError with apimachinery's message."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(Decimal(0), DECIMAL_SI, "0")
    positive, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    amount = Decimal(num + denom).scaleb(-len(denom), CTX)  # int() stops at 4300 digits
    amount = amount.scaleb(exponent, CTX) if base == 10 else CTX.multiply(amount, 2**exponent)
    if amount.as_tuple().exponent < -9:  # type: ignore[operator]
        amount = amount.quantize(_NANO, rounding=decimal.ROUND_UP, context=CTX)
    if fmt == BINARY_SI and amount > INT64_MAX:
        amount = Decimal(INT64_MAX)
    if fmt == BINARY_SI and 0 < amount < 1:
        fmt = DECIMAL_SI
    value = amount if positive else -amount
    return Quantity(value, fmt, text if _kept(num, denom, base, exponent) else "")


def _kept(num: str, denom: str, base: int, exponent: int) -> bool:
    """Whether apimachinery's fast path keeps the text as the quantity's string."""
    shifted = num + denom
    if base == 2:
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        return (
            not denom
            and precision >= 0
            and int(shifted) << exponent <= INT64_MAX
            and exponent % 10 == 0
            and int(shifted) & 7 != 0
        )
    scale = exponent - len(denom)
    precision = 18 - len(num) - len(denom)
    return (
        precision >= 0
        and scale >= -9
        and scale % 3 == 0
        and not shifted.endswith("000")
        and shifted[0] != "0"
    )


def parse_quantity(text: str) -> Decimal:
    """The exact value of ``text``, or QuantityError with apimachinery's message."""
    return parse(text).value


def format_quantity(value: Decimal, fmt: str = DECIMAL_SI) -> str:
    """``Quantity.String()`` of a value in a format (apimachinery's CanonicalizeBytes)."""
    if value == 0:
        return "0"
    if fmt == BINARY_SI and (-1024 < value < 1024 or value != value.to_integral_value()):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        mantissa, power = int(value), 0
        while mantissa % 1024 == 0 and power < len(_BINARY_SUFFIX) - 1:
            mantissa //= 1024
            power += 1
        return f"{mantissa}{_BINARY_SUFFIX[power]}"
    sign, digits, exp = value.normalize(CTX).as_tuple()
    exp = int(exp)
    shift = exp % 3  # a multiple of three, as Go's AsCanonicalBytes
    # digits as text: int <-> str conversions stop at 4300 digits
    text, exp = "".join(map(str, digits)) + "0" * shift, exp - shift
    number = f"{'-' if sign else ''}{text}"
    if fmt == DECIMAL_EXPONENT:
        return number + (f"e{exp}" if exp else "")
    return number + _DECIMAL_SUFFIX.get(exp, "")


def canonical(text: str) -> str:
    """The text kube writes back for a quantity (``2000m`` -> ``2``)."""
    return str(parse(text))


@functools.lru_cache(maxsize=4096)
def resource_list_text(text: str) -> str:
    """A ResourceList value as kube stores it: parsed, rounded up (away from zero) to
    thousandths (SetDefaults_ResourceList), canonical (``0.0001`` and ``1n`` -> ``1m``)."""
    q = parse(text)
    rounded = q.value.quantize(_MILLI, rounding=decimal.ROUND_UP, context=CTX)
    if rounded == q.value:
        return str(q)
    return str(Quantity(rounded, q.format))
