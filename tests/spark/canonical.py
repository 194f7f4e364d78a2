"""One canonical rendering of a SQL value, from Spark's Python objects and from
rtsql's text, so that the two engines' answers compare as plain JSON.

Scalars become strings (integers in decimal, doubles as Python's shortest
round-trip text or NaN/Infinity/-Infinity, booleans true/false, timestamps
`YYYY-MM-DD HH:MM:SS[.ffffff]` without trailing zeros, binary `X'HEX'`); NULL
is None; arrays are lists and structs objects of canonical values, in field
order.
"""

import datetime
import decimal
import json
import math
import re


def double_text(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def timestamp_text(y, mo, d, h, mi, s, us):
    text = f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}"
    if us:
        text += f".{us:06d}".rstrip("0")
    return text


def from_python(v):
    """Spark's value as PySpark's collect() returns it."""
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return double_text(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, datetime.datetime):
        return timestamp_text(v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond)
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return "interval " + str((v.days * 86400 + v.seconds) * 1000000 + v.microseconds)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "X'" + bytes(v).hex().upper() + "'"
    if hasattr(v, "asDict"):  # a Row: a struct
        return {k: from_python(x) for k, x in zip(v.__fields__, v)}
    if isinstance(v, dict):
        return {str(k): from_python(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [from_python(x) for x in v]
    return repr(v)


def _from_json(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return double_text(v)
    if isinstance(v, list):
        return [_from_json(x) for x in v]
    if isinstance(v, dict):
        return {k: _from_json(x) for k, x in v.items()}
    return _timestamp_or_text(v)


_TS = re.compile(r"^(-?\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:Z|[+-]00(?::?00)?)?$")


_TSTZ = re.compile(r"^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(\.\d{1,6})?"
                   r"([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?( BC)?$")


def _days_from_civil(y, m, d):
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _civil_from_days(z):
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def _utc_of_timestamptz(s):
    """A TIMESTAMP as pgwire sends it (timestamptz: the session zone's wall
    clock, its offset, ' BC' before year 1) as the UTC text Spark's answers
    are recorded in; other text as it is."""
    m = _TSTZ.match(s)
    if not m:
        return s
    year = int(m.group(1))
    if m.group(12):
        year = 1 - year
    seconds = (_days_from_civil(year, int(m.group(2)), int(m.group(3))) * 86400
               + int(m.group(4)) * 3600 + int(m.group(5)) * 60 + int(m.group(6)))
    offset = int(m.group(9)) * 3600 + int(m.group(10) or 0) * 60 + int(m.group(11) or 0)
    seconds -= offset if m.group(8) == "+" else -offset
    y, mo, d = _civil_from_days(seconds // 86400)
    rest = seconds % 86400
    # Spark writes a year past 9999 with its sign.
    return (f"{'+' if y > 9999 else ''}{y:04d}-{mo:02d}-{d:02d} "
            f"{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}" + (m.group(7) or ""))


_ERA = re.compile(r"^(\d{4,})(-\d\d-\d\d.*?)( BC)?$")


def _spark_era(s):
    """A DATE or TIMESTAMP_NTZ as pgwire sends it (PostgreSQL's year: no '+'
    past 9999, ' BC' before year 1) in Spark's text: +10000-01-01,
    0000-12-31, -5877587-06-28; other text as it is."""
    m = _ERA.match(s)
    if not m:
        return s
    y = int(m.group(1))
    if m.group(3):
        y = 1 - y
    year = f"+{y}" if y > 9999 else (f"{y:04d}" if y >= 0 else f"-{-y:04d}")
    return year + m.group(2)


def _timestamp_or_text(s):
    m = _TS.match(s)
    if not m:
        return s
    frac = (m.group(7) or "").ljust(6, "0")[:6]
    return timestamp_text(int(m.group(1)), *(int(m.group(i)) for i in range(2, 7)), int(frac))


_INTERVAL = re.compile(r"^(?:(-?\d+) days? ?)?(?:(-)?(\d+):(\d\d):(\d\d)(?:\.(\d{1,6}))?)?$")


def _interval_or_text(s):
    """rtsql's interval text ('1 day 01:00:00', '-00:00:01.5') as microseconds."""
    m = _INTERVAL.match(s)
    if not m or not s:
        return s
    days = int(m.group(1) or 0)
    clock = ((int(m.group(3) or 0) * 60 + int(m.group(4) or 0)) * 60 + int(m.group(5) or 0)) * 1000000
    clock += int((m.group(6) or "").ljust(6, "0") or 0)
    if m.group(2) or (days < 0 and s.startswith("-")):
        # rtsql writes one sign before the whole interval: "-1 day 02:00:00".
        clock = -clock
    return "interval " + str(days * 86400000000 + clock)


_PG_YM = re.compile(r"^(?:(-?\d+) years?)? ?(?:(-?\d+) mons?)?$")


def ym_text(months, type_name):
    """A year-month interval as Spark's CAST(... AS STRING) writes it, for its
    type: INTERVAL '1-2' YEAR TO MONTH, INTERVAL '1' YEAR, INTERVAL '14' MONTH."""
    sign = "-" if months < 0 else ""
    a = abs(months)
    if type_name == "interval year":
        return f"INTERVAL '{sign}{a // 12}' YEAR"
    if type_name == "interval month":
        return f"INTERVAL '{months}' MONTH"
    return f"INTERVAL '{sign}{a // 12}-{a % 12}' YEAR TO MONTH"


def _year_month_or_text(s, type_name):
    """rtsql's year-month interval as pgwire sends it (PostgreSQL's '1 year 2
    mons', '-3 mons', '00:00:00') as Spark's text."""
    if s == "00:00:00":
        return ym_text(0, type_name)
    m = _PG_YM.match(s)
    if not m or not s:
        return s
    return ym_text(int(m.group(1) or 0) * 12 + int(m.group(2) or 0), type_name)


def from_rtsql(text, type_name):
    """rtsql's value as its server's text, given its type as typeof() names it."""
    if text is None:
        return None
    t = type_name or ""
    if t.startswith(("array", "struct", "map")):
        # The test reads a nested value as to_json(array(value)).
        try:
            return _from_json(json.loads(text)[0])
        except (ValueError, IndexError, TypeError):
            return text
    if t == "boolean":
        return {"t": "true", "f": "false"}.get(text, text)
    if t in ("tinyint", "smallint", "int", "bigint"):
        return text
    if t in ("double", "float"):
        try:
            return double_text(text)
        except ValueError:
            return text
    if t == "timestamp":
        return _timestamp_or_text(_utc_of_timestamptz(text))
    if t.startswith("timestamp"):
        return _timestamp_or_text(_spark_era(text))
    if t == "date":
        return _spark_era(text)
    if t.startswith(("interval year", "interval month")):
        return _year_month_or_text(text, t)
    if t.startswith("interval"):
        return _interval_or_text(text)
    if t == "binary":
        if text.startswith("\\x"):
            return "X'" + text[2:].upper() + "'"
        return text
    return text


def _without_null_fields(v):
    """to_json leaves a struct's NULL fields out: so does the comparison."""
    if isinstance(v, list):
        return [_without_null_fields(x) for x in v]
    if isinstance(v, dict):
        return {k: _without_null_fields(x) for k, x in v.items() if x is not None}
    return v


def same(a, b):
    return json.dumps(_without_null_fields(a)) == json.dumps(_without_null_fields(b))


def same_map(a, b, type_name):
    """Whether two maps hold the same entries: PySpark hands a map over as a
    Java HashMap, so the order of its keys in the golden file is the hash's,
    not the map's."""
    if not (type_name or "").startswith("map") or not isinstance(a, dict) or not isinstance(b, dict):
        return False
    return (json.dumps(_without_null_fields(a), sort_keys=True)
            == json.dumps(_without_null_fields(b), sort_keys=True))


def same_but_type(spark_value, spark_type, value, type_name):
    """Whether two values of different types are the same value: a Spark DATE
    and rtsql's TIMESTAMP at its midnight, a DECIMAL and the DOUBLE of the same
    number, a FLOAT and the DOUBLE that holds it."""
    if spark_value is None or value is None or spark_type == type_name:
        return False
    if spark_type == "date" and type_name == "timestamp":
        return value == spark_value + " 00:00:00"
    if spark_type.startswith("decimal") or spark_type in ("float", "tinyint", "smallint"):
        try:
            return decimal.Decimal(spark_value) == decimal.Decimal(value)
        except (decimal.InvalidOperation, TypeError):
            return False
    return False
