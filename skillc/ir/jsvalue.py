"""JavaScript value semantics for template data: conversions, property access, operators.

Values are plain Python: None is ``null``, :data:`UNDEFINED` is ``undefined``, bool, int or
float are numbers, str, list (array) and dict (object). Numbers stay ``int`` whenever
JavaScript would print them as integers, so rendered text and JSON output agree with what
WeChat shows. Nothing here raises on user data: bad operands give NaN, ``undefined`` or
``false`` exactly as JavaScript does. Operator behaviour follows the runtime that executes
wcc's output (see docs/expressions.md).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Final, TypeAlias

from skillc.frontend.expr import UNDEFINED, Undefined

__all__ = [
    "UNDEFINED",
    "JSValue",
    "Undefined",
    "add",
    "arithmetic",
    "bitwise",
    "compare",
    "get_member",
    "loose_equals",
    "negate",
    "number_to_string",
    "strict_equals",
    "to_boolean",
    "to_int32",
    "to_number",
    "to_string",
    "to_text",
]

JSValue: TypeAlias = "bool | int | float | str | list[JSValue] | dict[str, JSValue] | Undefined | None"

_MAX_SAFE: Final = 2**53
_NAN: Final = math.nan
# Own properties of Object.prototype, Array.prototype, ... are functions, which wcc turns into
# undefined; these names are additionally blocked by wcc itself.
_BLOCKED_KEYS: Final = frozenset({"__proto__", "prototype", "caller"})


# --------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------


def _num(x: int | float) -> int | float:
    """Normalize an arithmetic result: a double that JavaScript prints as an integer becomes
    int; a Python int beyond 2**53 becomes the double JavaScript would hold."""
    if isinstance(x, int):
        return x if -_MAX_SAFE <= x <= _MAX_SAFE else _int_to_float(x)
    if x.is_integer() and -_MAX_SAFE <= x <= _MAX_SAFE and not (x == 0 and math.copysign(1.0, x) < 0):
        return int(x)
    return x


def _int_to_float(x: int) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def number_to_string(x: int | float) -> str:
    """JavaScript ``String(number)``: shortest round-trip digits, exponent outside [1e-7, 1e21)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -_MAX_SAFE <= x <= _MAX_SAFE:
            return str(x)
        x = _int_to_float(x)
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr gives the shortest digits that round-trip, the same digits ECMAScript requires.
    digits, exp = _shortest_digits(abs(x))
    k = len(digits)
    n = exp + k  # position of the decimal point relative to the digits
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _shortest_digits(x: float) -> tuple[str, int]:
    """(digits without leading/trailing zeros, exponent) with x == int(digits) * 10**exponent."""
    text = repr(x)
    mantissa, _, exp_text = text.partition("e")
    exp = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    exp -= len(frac)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    return stripped or "0", exp


# The WhiteSpace and LineTerminator characters StringToNumber trims.
_WS = " \t\n\v\f\r\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(map(chr, range(0x2000, 0x200B)))
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_RADIX = re.compile(r"0(?:[xX](?P<x>[0-9a-fA-F]+)|[oO](?P<o>[0-7]+)|[bB](?P<b>[01]+))")


def _string_to_number(s: str) -> int | float:
    s = s.strip(_WS)
    if not s:
        return 0
    if _DECIMAL.fullmatch(s):
        if s.endswith("Infinity"):
            return -math.inf if s[0] == "-" else math.inf
        return _num(float(s))
    m = _RADIX.fullmatch(s)
    if m:
        if m.group("x"):
            return _num(int(m.group("x"), 16))
        if m.group("o"):
            return _num(int(m.group("o"), 8))
        return _num(int(m.group("b"), 2))
    return _NAN


def to_number(v: JSValue) -> float:
    """JavaScript ``Number(v)``. Returns an int when the number is integral (int is a float
    for typing purposes)."""
    if isinstance(v, bool):
        return 1 if v else 0
    if isinstance(v, int):
        return v if -_MAX_SAFE <= v <= _MAX_SAFE else _int_to_float(v)
    if isinstance(v, float):
        return v
    if v is None:
        return 0
    if isinstance(v, str):
        return _string_to_number(v)
    if isinstance(v, list):
        return _string_to_number(to_string(v))
    return _NAN  # undefined, objects


def to_int32(v: JSValue) -> int:
    n = to_number(v)
    if isinstance(n, float):
        if n != n or n in (math.inf, -math.inf):
            return 0
        n = int(n)
    return _wrap_int32(n)


def _wrap_int32(n: int) -> int:
    n &= 0xFFFFFFFF
    return n - 0x100000000 if n >= 0x80000000 else n


# --------------------------------------------------------------------------------------
# Conversions
# --------------------------------------------------------------------------------------


def to_boolean(v: JSValue) -> bool:
    if isinstance(v, bool):
        return v
    if v is None or v is UNDEFINED:
        return False
    if isinstance(v, int):
        return v != 0
    if isinstance(v, float):
        return not (v == 0 or v != v)
    if isinstance(v, str):
        return v != ""
    return True  # arrays and objects, even empty ones


def to_string(v: JSValue) -> str:
    """JavaScript ``String(v)``."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return number_to_string(v)
    if v is None:
        return "null"
    if v is UNDEFINED:
        return "undefined"
    if isinstance(v, list):
        return _join(v, 0)
    return "[object Object]"


def _join(items: Sequence[JSValue], depth: int) -> str:
    # Array.prototype.join: null and undefined elements become empty strings. Data comes from
    # JSON, so it cannot be cyclic, but a depth guard keeps hostile nesting from recursing.
    if depth > 100:
        return ""
    parts = []
    for item in items:
        if item is None or item is UNDEFINED:
            parts.append("")
        elif isinstance(item, list):
            parts.append(_join(item, depth + 1))
        else:
            parts.append(to_string(item))
    return ",".join(parts)


def to_text(v: JSValue) -> str:
    """How a mustache renders in text or in a mixed attribute value: ``undefined`` renders as
    nothing, ``null`` as "null", everything else as ``String(v)``."""
    if v is UNDEFINED:
        return ""
    return to_string(v)


def _to_primitive(v: JSValue) -> JSValue:
    if isinstance(v, list | dict):
        return to_string(v)
    return v


# --------------------------------------------------------------------------------------
# Property access
# --------------------------------------------------------------------------------------


def _utf16_length(s: str) -> int:
    if s.isascii():
        return len(s)
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


def _array_index(key: str) -> int | None:
    # Only canonical numeric strings ("0", "12", not "01" or "1.0") index an array.
    if key.isdigit() and key.isascii() and (key == "0" or key[0] != "0"):
        return int(key)
    return None


def get_member(obj: JSValue, key: JSValue) -> JSValue:
    """``obj[key]`` as wcc evaluates it: null/undefined objects and keys give undefined, as do
    methods (wcc hides functions) and missing keys; strings and arrays have ``length`` and
    indices."""
    if obj is None or obj is UNDEFINED or key is None or key is UNDEFINED:
        return UNDEFINED
    name = key if isinstance(key, str) else to_string(key)
    if name in _BLOCKED_KEYS:
        return UNDEFINED
    if isinstance(obj, Mapping):
        return obj.get(name, UNDEFINED)
    if isinstance(obj, str):
        if name == "length":
            return _utf16_length(obj)
        i = _array_index(name)
        if i is None:
            return UNDEFINED
        if obj.isascii() or all(ord(ch) <= 0xFFFF for ch in obj):
            return obj[i] if i < len(obj) else UNDEFINED
        units = obj.encode("utf-16-le", "surrogatepass")
        if 2 * i + 2 > len(units):
            return UNDEFINED
        return units[2 * i : 2 * i + 2].decode("utf-16-le", "surrogatepass")
    if isinstance(obj, list):
        if name == "length":
            return len(obj)
        i = _array_index(name)
        return obj[i] if i is not None and i < len(obj) else UNDEFINED
    return UNDEFINED


# --------------------------------------------------------------------------------------
# Operators
# --------------------------------------------------------------------------------------


def add(a: JSValue, b: JSValue) -> JSValue:
    """``a + b``: string concatenation when either primitive is a string, else numeric."""
    pa, pb = _to_primitive(a), _to_primitive(b)
    if isinstance(pa, str) or isinstance(pb, str):
        return to_string(pa) + to_string(pb)
    return _num_op(to_number(pa) + to_number(pb))


def _num_op(x: float) -> int | float:
    return _num(x) if isinstance(x, int) or x == x else x


def arithmetic(op: str, a: JSValue, b: JSValue) -> JSValue:
    """``-``, ``*``, ``/``, ``%`` on ToNumber of both sides."""
    x, y = to_number(a), to_number(b)
    if op == "-":
        return _num_op(x - y)
    if op == "*":
        if isinstance(x, int) and isinstance(y, int):
            if (x == 0 and y < 0) or (y == 0 and x < 0):
                return -0.0
            return _num(x * y)
        return _num_op(_mul(x, y))
    if op == "/":
        return _num_op(_div(x, y))
    if op == "%":
        return _num_op(_mod(x, y))
    return _NAN


def _mul(x: float, y: float) -> float:
    return float(x) * float(y)


def _div(x: float, y: float) -> float:
    if y == 0:
        if x == 0 or x != x:
            return _NAN
        neg = (x < 0) != (math.copysign(1.0, y) < 0)
        return -math.inf if neg else math.inf
    if isinstance(x, int) and isinstance(y, int) and x % y == 0:
        q = x // y
        # JavaScript keeps the sign of zero: 0 / -5 is -0.
        return -0.0 if q == 0 and (x < 0) != (y < 0) else q
    return float(x) / float(y)


def _mod(x: float, y: float) -> float:
    if y == 0 or x != x or y != y or x in (math.inf, -math.inf):
        return _NAN
    if y in (math.inf, -math.inf):
        return x
    if isinstance(x, int) and isinstance(y, int):
        r = abs(x) % abs(y)
        if r == 0 and x < 0:
            return -0.0
        return -r if x < 0 else r
    return math.fmod(x, y)


def negate(v: JSValue) -> JSValue:
    """wcc compiles unary minus as ``0 - v``, so ``-0`` is never produced."""
    return arithmetic("-", 0, v)


def bitwise(op: str, a: JSValue, b: JSValue) -> int:
    """``|``, ``^``, ``&``, ``<<``, ``>>`` on 32-bit integers."""
    x = to_int32(a)
    y = to_int32(b)
    if op == "|":
        r = x | y
    elif op == "&":
        r = x & y
    elif op == "^":
        r = x ^ y
    elif op == "<<":
        r = x << (y & 31)
    elif op == ">>":
        return x >> (y & 31)
    else:
        return 0
    return _wrap_int32(r)


def _utf16_key(s: str) -> str | bytes:
    # JavaScript compares strings by UTF-16 code units; only astral characters order
    # differently from Python's code-point comparison.
    if s.isascii() or all(ord(ch) <= 0xFFFF for ch in s):
        return s
    return s.encode("utf-16-be", "surrogatepass")


def compare(op: str, a: JSValue, b: JSValue) -> bool:
    """``<``, ``>``, ``<=``, ``>=``: strings by code units, everything else numerically."""
    pa, pb = _to_primitive(a), _to_primitive(b)
    if isinstance(pa, str) and isinstance(pb, str):
        ka, kb = _utf16_key(pa), _utf16_key(pb)
        if type(ka) is not type(kb):
            ka = pa.encode("utf-16-be", "surrogatepass")
            kb = pb.encode("utf-16-be", "surrogatepass")
        if op == "<":
            return ka < kb  # type: ignore[operator]
        if op == ">":
            return ka > kb  # type: ignore[operator]
        if op == "<=":
            return ka <= kb  # type: ignore[operator]
        return ka >= kb  # type: ignore[operator]
    x, y = to_number(pa), to_number(pb)
    # NaN compares false either way, as in JavaScript.
    if op == "<":
        return x < y
    if op == ">":
        return x > y
    if op == "<=":
        return x <= y
    return x >= y


def strict_equals(a: JSValue, b: JSValue) -> bool:
    """``===``: same type and value; arrays and objects by identity."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is b  # arrays and objects by identity; null, undefined


def loose_equals(a: JSValue, b: JSValue) -> bool:
    """``==``, the abstract equality algorithm."""
    a_nullish = a is None or a is UNDEFINED
    b_nullish = b is None or b is UNDEFINED
    if a_nullish or b_nullish:
        return a_nullish and b_nullish
    a_obj = isinstance(a, list | dict)
    b_obj = isinstance(b, list | dict)
    if a_obj and b_obj:
        return a is b
    if isinstance(a, bool):
        return loose_equals(to_number(a), b)
    if isinstance(b, bool):
        return loose_equals(a, to_number(b))
    if a_obj:
        return loose_equals(_to_primitive(a), b)
    if b_obj:
        return loose_equals(a, _to_primitive(b))
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return to_number(a) == to_number(b)
