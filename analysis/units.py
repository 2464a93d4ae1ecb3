"""Unit strings of ddlsim scenarios ("25Gbps", "2us", "25MB"), parsed as models/units.cpp parses them.

The unit tables, factors and rules mirror models/units.cpp exactly (keep them in step):

* bandwidth, to bytes per second: bps Kbps Mbps Gbps Tbps (bits/s, powers of 1000), Bps KBps MBps GBps
  TBps (bytes/s, powers of 1000), KiBps MiBps GiBps TiBps (bytes/s, powers of 1024);
* time, to seconds: ns us ms s;
* bytes: B KB MB GB TB (powers of 1000), KiB MiB GiB TiB (powers of 1024).

A value is a number (as std::from_chars reads it: no leading '+', no hexadecimal) followed by a unit,
with optional spaces between them (not around the value: " 25Gbps" and "25Gbps " are errors, a stray
space); units are case-sensitive; a missing or unknown unit and a non-finite number are errors.
parse_quantity and parse_number, which match table cells, ignore spaces around a value. Python 3
standard library only.
"""

import math
import re

BANDWIDTH_UNITS = {  # -> bytes per second
    "bps": 1.0 / 8, "Kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8, "Tbps": 1e12 / 8,
    "Bps": 1.0, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
    "KiBps": 1024.0, "MiBps": 1048576.0, "GiBps": 1073741824.0, "TiBps": 1099511627776.0,
}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}  # -> seconds
BYTE_UNITS = {  # -> bytes
    "B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
    "KiB": 1024.0, "MiB": 1048576.0, "GiB": 1073741824.0, "TiB": 1099511627776.0,
}

# kind -> (unit table, what models/units.cpp calls it in messages, base unit)
KINDS = {
    "bandwidth": (BANDWIDTH_UNITS, "bandwidth", "Bps"),
    "time": (TIME_UNITS, "time", "s"),
    "bytes": (BYTE_UNITS, "size in bytes", "B"),
}

# What std::from_chars(double, chars_format::general) accepts at the start of a string.
_NUMBER = re.compile(r"-?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?i:infinity|inf|nan(?:\([A-Za-z0-9_]*\))?))")


class UnitError(ValueError):
    """A string that is not a number followed by a unit of the expected kind."""


def _split(text):
    """'  25 Gbps ' -> (25.0, 'Gbps'); None when it does not start with a number. Trims spaces only."""
    s = text.strip(" ")
    m = _NUMBER.match(s)
    if not m:
        return None
    return float(m.group(0)), s[m.end():].strip(" ")


def _parse(text, kind):
    units, what, _ = KINDS[kind]
    names = ", ".join(units)
    if text != text.strip():
        where = "start" if text[:1].isspace() else "end"
        inner = f': "{text.strip()}"' if text.strip() else ""
        raise UnitError(f'"{text}" has a space at its {where}; a {what} is written without spaces around it{inner}')
    split = _split(text)
    if split is None:
        raise UnitError(f'expected a {what}: a number followed by one of {names}, got "{text}"')
    value, unit = split
    if not unit:
        raise UnitError(f'missing unit in "{text}"; expected one of {names}')
    if unit not in units:
        raise UnitError(f'unknown {what} unit "{unit}" in "{text}"; expected one of {names}')
    if not math.isfinite(value):
        raise UnitError(f'"{text}" is not a finite {what}')
    return value * units[unit]


def parse_bandwidth_Bps(text):
    """'25Gbps' -> 3.125e9 (bytes per second)."""
    return _parse(text, "bandwidth")


def parse_time_s(text):
    """'2us' -> 2e-06 (seconds)."""
    return _parse(text, "time")


def parse_bytes(text):
    """'25MB' -> 25e6, '1MiB' -> 1048576.0 (bytes)."""
    return _parse(text, "bytes")


def unit_kind(unit):
    """'Gbps' -> 'bandwidth', 'us' -> 'time', 'MiB' -> 'bytes', anything else -> None (no unit name is
    in two tables)."""
    for kind, (units, _, _) in KINDS.items():
        if unit in units:
            return kind
    return None


def parse_quantity(text):
    """A string with a unit of any kind -> (kind, value in the kind's base unit: B/s, s or B).

    None when text is not a finite number followed by a known unit (a bare number has no kind).
    """
    split = _split(text)
    if split is None:
        return None
    value, unit = split
    kind = unit_kind(unit)
    if kind is None or not math.isfinite(value):
        return None
    return kind, value * KINDS[kind][0][unit]


def parse_number(text):
    """A bare number as from_chars reads it, spaces around allowed ('8', '8.0', '1e3') -> float; else None."""
    split = _split(text)
    if split is None or split[1]:
        return None
    return split[0]
