"""The seeded calls of the differential test against Apache Spark.

Every scalar function rtsql lists gets a few calls over literal arguments drawn
from pools of awkward values: NULL, the empty string, integer bounds, NaN and
infinities, unicode ('straße', 'é日本'), leap days, years 1 and 9999, negative
numbers, zero divisors. `calls()` returns them in a fixed order for a fixed
seed, so tests/spark/record.py (with Spark) and tests/e2e/test_spark_functions.py
(without it) agree on the calls without exchanging anything but the golden file.

A signature is a tuple of pool names, one per argument; a function has one or
more signatures, and each call picks one and draws each argument from its pool.
Non-deterministic functions (rand, uuid, current_timestamp, shuffle,
aes_encrypt) are left out: their value cannot be recorded.
"""

import random

SEED = 43
CALLS_PER_FUNCTION = 18


def dbl(x):
    """A DOUBLE literal both engines read alike (a bare 1.5 is DECIMAL in Spark)."""
    return f"CAST({x} AS DOUBLE)"


def ts(x):
    return f"CAST('{x}' AS TIMESTAMP)"


POOLS = {
    # strings
    "s": ["NULL", "''", "'abc'", "'Hello World'", "'straße'", "'é日本'", "'  padded  '",
          "'xxhixx'", "'a,b,c'", "'ABC123'", "'ǅungla'", "'İstanbul'", "'12'", "'-3.5'",
          "'hello'", "'ﬁne'", "'a\tb'", "'😀x'"],
    # characters to trim, pad or search with
    "chars": ["NULL", "''", "'x'", "'xh'", "'l'", "'ß'", "' '", "'日'", "'ab'", "'o'"],
    # small integers: positions, counts, lengths
    "i": ["NULL", "0", "1", "-1", "2", "3", "5", "-7", "10", "100", "2147483647", "-2147483648"],
    # any integers, bigint bounds included
    "n": ["NULL", "0", "1", "-1", "7", "-13", "255", "2147483647", "-2147483648",
          "9223372036854775807", "-9223372036854775808", "4294967296", "1000000"],
    # doubles
    "d": ["NULL", dbl("0.0"), dbl("-0.0"), dbl("1.5"), dbl("-2.5"), dbl("0.125"), dbl("2.5"),
          dbl("3.14159"), dbl("1e308"), dbl("1e-7"), dbl("'NaN'"), dbl("'Infinity'"),
          dbl("'-Infinity'"), dbl("100"), dbl("-0.5"), dbl("0.5")],
    # any number, integer or double
    "num": [],
    # numeric text
    "numstr": ["NULL", "'12'", "'-3.5'", "'1e3'", "''", "'abc'", "' 7 '", "'0x1F'",
               "'2147483648'", "'9223372036854775808'", "'NaN'", "'Infinity'", "'1.9'", "'-0'"],
    # timestamps
    "ts": ["NULL", ts("2024-02-29 13:45:07.123456"), ts("1970-01-01 00:00:00"),
           ts("0001-01-01 00:00:00"), ts("9999-12-31 23:59:59.999999"),
           ts("2023-12-31 23:59:59.5"), ts("2021-03-28 01:30:00"), ts("1969-12-31 23:59:59"),
           ts("2000-01-01 12:00:00"), ts("2024-01-07 06:07:08.009")],
    # date and timestamp text
    "datestr": ["NULL", "'2024-02-29'", "'2023-02-29'", "'0001-01-01'", "'9999-12-31'",
                "'2024-13-01'", "''", "'2024-03-10 02:30:00'", "'2024-1-5'", "'not a date'",
                "'1970-01-01T00:00:00Z'", "'2000-06-15 12:34:56.789'"],
    # datetime patterns
    "dtfmt": ["'yyyy-MM-dd'", "'HH:mm:ss'", "'kk:mm'", "'Q'", "'D'", "'EEE'", "'MMMM'",
              "'yyyy-MM-dd HH:mm:ss.SSS'", "'hh a'", "'yy/M/d'", "'dd.MM.yyyy'",
              "'EEEE, MMM d'", "'''T''HH'", "'yyyy-MM-dd''T''HH:mm:ss'", "'SSSSSS'", "'QQQ'",
              "'LLL'", "'K:m:s'", "'DDD'", "NULL"],
    # parse patterns (to_date, to_timestamp, unix_timestamp)
    "parsefmt": ["'yyyy-MM-dd'", "'yyyy-MM-dd HH:mm:ss'", "'dd.MM.yyyy'", "'yyyy-M-d'",
                 "'yyyy-MM-dd HH:mm:ss.SSS'", "'yyyyMMdd'", "NULL"],
    # units of date_trunc, date_part, trunc
    "unit": ["'YEAR'", "'MONTH'", "'DAY'", "'HOUR'", "'QUARTER'", "'WEEK'", "'MINUTE'",
             "'second'", "'dow'", "'doy'", "'yy'", "'mm'", "'bogus'", "NULL"],
    # weekday names for next_day
    "dow": ["'MO'", "'Monday'", "'sun'", "'FRI'", "'xx'", "NULL"],
    # regular expressions
    "regex": ["'[a-z]+'", "'(\\\\d+)'", "'^a'", "'o'", "'.*'", "'('", "''", "'(\\\\w)(\\\\w)'",
              "'ß'", "NULL"],
    # LIKE patterns
    "likepat": ["'a%'", "'%o%'", "'_bc'", "'%'", "''", "'ABC%'", "'%ß'", "'a\\\\%'", "NULL"],
    # JSON text
    "json": ["'{\"a\":1,\"b\":[1,2,{\"c\":\"x\"}]}'", "'[1,2,3]'", "'{\"a\":null}'",
             "'not json'", "''", "'{\"a\":\"straße\",\"n\":1.5}'", "'[]'", "'{}'", "NULL",
             "'{\"a\":{\"b\":{\"c\":[true,false]}}}'", "'[{\"a\":1},{\"a\":2}]'"],
    "jsonpath": ["'$.a'", "'$.b[1]'", "'$.b[*]'", "'$'", "'$.b[2].c'", "'$.missing'", "'$[0]'",
                 "'$[*].a'", "'a'", "NULL", "'$.a.b.c'"],
    # DDL schemas for from_json and from_csv
    "schema": ["'a INT, b STRING'", "'a INT'", "'a DOUBLE, n DOUBLE'", "'b ARRAY<INT>'",
               "'a STRING'"],
    "csv": ["'1,abc'", "'x,y'", "''", "'1'", "'\"q,uoted\",2'", "NULL"],
    # arrays
    "arr": ["array(1, 2, 3)", "array(3, NULL, 1)", "array()", "array(1, 1, 2)", "NULL",
            "array(-5, 100, 7, 7)", "array(2147483647, 1)"],
    "sarr": ["array('a', 'b')", "array('b', NULL, 'a')", "array('straße', '')", "NULL",
             "array('x')"],
    "arrarr": ["array(array(1, 2), array(3))", "array(array(1), NULL)", "array(array())", "NULL"],
    # binary values
    "bin": ["CAST('abc' AS BINARY)", "X'00FF'", "CAST('é日' AS BINARY)", "X''", "NULL",
            "X'48656C6C6F'"],
    "charset": ["'UTF-8'", "'US-ASCII'", "'ISO-8859-1'", "'UTF-16'", "'bogus'", "NULL",
                "'utf8'"],
    "binfmt": ["'hex'", "'base64'", "'utf-8'", "'bogus'", "NULL"],
    "hexstr": ["'48656C6C6F'", "'4'", "'zz'", "''", "'00ff'", "NULL", "'aGVsbG8='"],
    "url": ["'https://user@example.com:8080/p/a?x=1&y=2#frag'", "'not a url'", "''",
            "'http://example.com'", "'a b&c=d/é'", "'%E6%97%A5+x'", "'%zz'", "NULL"],
    "urlpart": ["'HOST'", "'PATH'", "'QUERY'", "'REF'", "'PROTOCOL'", "'AUTHORITY'", "'FILE'",
                "'USERINFO'", "'host'"],
    "key": ["'x'", "'y'", "'z'", "NULL"],
    "bool": ["true", "false", "NULL"],
    "anyv": [],
    "printf": ["'%.2f'", "'%d'", "'%s-%s'", "'%5s|'", "'%-5d|'", "'%x'", "'%e'", "'%08.3f'",
               "'%%'", "'%b'", "'%,d'", "'%.0f'", "'%c'"],
    "fmtnum": ["0", "2", "-1", "'#,##0.00'", "'0.0'", "NULL", "5"],
    "shabits": ["0", "224", "256", "384", "512", "1", "NULL"],
    "base": ["2", "10", "16", "36", "-16", "1", "37", "NULL"],
    "maskch": ["'X'", "'x'", "'n'", "NULL", "'*'"],
    "intervalpart": ["0", "1", "25", "-3", "NULL"],
    "secs": ["0", "1.5", dbl("59.999999"), "60", "NULL", "-1", "30"],
}
POOLS["num"] = POOLS["n"][:8] + POOLS["d"][:10] + ["0.125", "1.5", "-2.5"]
POOLS["anyv"] = ["NULL", "1", "'a'", dbl("1.5"), "true", "9223372036854775807", "''",
                 ts("2024-02-29 00:00:00")]

S, C, I, N, D, NUM = "s", "chars", "i", "n", "d", "num"

# Family -> function -> signatures.
FAMILIES = {
    "string": {
        "ascii": [(S,)], "bit_length": [(S,), ("bin",)], "btrim": [(S,), (S, C)],
        "char": [(N,)], "chr": [(N,)], "char_length": [(S,), ("bin",)],
        "character_length": [(S,)], "concat": [(S,), (S, S), (S, S, S), ("bin", "bin")],
        "concat_ws": [(C, S, S), (C, S), (C, "sarr"), (C, S, "sarr")],
        "contains": [(S, C), ("bin", "bin")], "elt": [(I, S, S), (I, S, S, S)],
        "endswith": [(S, C)], "startswith": [(S, C)], "find_in_set": [(S, S), (C, S)],
        "format_number": [(NUM, "fmtnum")], "format_string": [("printf", NUM), ("printf", S, S)],
        "printf": [("printf", NUM), ("printf", S, S), ("printf", I), ("printf", D)],
        "ilike": [(S, "likepat")], "like": [(S, "likepat")], "initcap": [(S,)],
        "instr": [(S, C)], "lcase": [(S,)], "lower": [(S,)], "ucase": [(S,)], "upper": [(S,)],
        "left": [(S, I)], "right": [(S, I)], "len": [(S,), ("bin",)],
        "length": [(S,), ("bin",)], "octet_length": [(S,), ("bin",)],
        "levenshtein": [(S, S), (S, S, I)], "locate": [(C, S), (C, S, I)],
        "position": [(C, S), (C, S, I)], "lpad": [(S, I), (S, I, C), ("bin", I, "bin")],
        "rpad": [(S, I), (S, I, C), ("bin", I, "bin")], "ltrim": [(S,), (S, C)],
        "rtrim": [(S,), (S, C)], "trim": [(S,), (S, C)], "luhn_check": [(S,), ("numstr",)],
        "mask": [(S,), (S, "maskch"), (S, "maskch", "maskch", "maskch", "maskch")],
        "overlay": [(S, S, I), (S, S, I, I), ("bin", "bin", I)],
        "repeat": [(S, I)], "replace": [(S, C), (S, C, S)], "reverse": [(S,)],
        "soundex": [(S,)], "space": [(I,)], "split_part": [(S, C, I)],
        "substr": [(S, I), (S, I, I), ("bin", I, I)], "substring": [(S, I), (S, I, I), ("bin", I, I)],
        "substring_index": [(S, C, I)], "translate": [(S, C, C)],
    },
    "regex": {
        "regexp": [(S, "regex")], "regexp_like": [(S, "regex")], "rlike": [(S, "regex")],
        "regexp_count": [(S, "regex")], "regexp_extract": [(S, "regex"), (S, "regex", I)],
        "regexp_extract_all": [(S, "regex"), (S, "regex", I)],
        "regexp_instr": [(S, "regex"), (S, "regex", I)], "regexp_replace": [(S, "regex", S)],
        "regexp_substr": [(S, "regex")], "split": [(S, "regex"), (S, "regex", I)],
    },
    "datetime": {
        "add_months": [("ts", I), ("datestr", I)], "date": [("datestr",), ("ts",)],
        "date_add": [("ts", I), ("datestr", I)], "dateadd": [("ts", I)],
        "date_sub": [("ts", I), ("datestr", I)], "date_diff": [("ts", "ts")],
        "datediff": [("ts", "ts"), ("datestr", "datestr")],
        "date_format": [("ts", "dtfmt"), ("datestr", "dtfmt")],
        "date_from_unix_date": [(N,)], "date_part": [("unit", "ts")],
        "datepart": [("unit", "ts")], "date_trunc": [("unit", "ts")],
        "trunc": [("ts", "unit"), ("datestr", "unit")],
        "day": [("ts",), ("datestr",)], "dayofmonth": [("ts",)], "dayofweek": [("ts",)],
        "dayofyear": [("ts",)], "dayname": [("ts",)], "monthname": [("ts",)],
        "hour": [("ts",), ("datestr",)], "minute": [("ts",)], "second": [("ts",)],
        "month": [("ts",)], "quarter": [("ts",)], "weekday": [("ts",)],
        "weekofyear": [("ts",)], "year": [("ts",), ("datestr",)],
        "from_unixtime": [(N,), (N, "dtfmt")], "last_day": [("ts",), ("datestr",)],
        "make_date": [(N, I, I)], "make_dt_interval": [(), ("intervalpart",),
                                                        ("intervalpart", "intervalpart"),
                                                        ("intervalpart", "intervalpart",
                                                         "intervalpart", "secs")],
        "make_timestamp": [(N, I, I, I, I, "secs")],
        "make_timestamp_ltz": [(N, I, I, I, I, "secs")],
        "make_timestamp_ntz": [(N, I, I, I, I, "secs")],
        "months_between": [("ts", "ts"), ("ts", "ts", "bool")], "next_day": [("ts", "dow")],
        "timestamp_micros": [(N,)], "timestamp_millis": [(N,)], "timestamp_seconds": [(N,), (D,)],
        "to_date": [("datestr",), ("datestr", "parsefmt")],
        "to_timestamp": [("datestr",), ("datestr", "parsefmt")],
        "to_timestamp_ltz": [("datestr",), ("datestr", "parsefmt")],
        "to_timestamp_ntz": [("datestr",), ("datestr", "parsefmt")],
        "try_to_timestamp": [("datestr",), ("datestr", "parsefmt")],
        "to_unix_timestamp": [("datestr",), ("datestr", "parsefmt"), ("ts",)],
        "unix_timestamp": [("datestr",), ("datestr", "parsefmt"), ("ts",)],
        "unix_date": [("ts",)], "unix_micros": [("ts",)], "unix_millis": [("ts",)],
        "unix_seconds": [("ts",)],
    },
    "math": {
        **{f: [(NUM,)] for f in [
            "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "ceiling",
            "cos", "cosh", "cot", "csc", "degrees", "exp", "expm1", "floor", "isnan", "ln",
            "log10", "log1p", "log2", "negative", "positive", "radians", "rint", "sec", "sign",
            "signum", "sin", "sinh", "sqrt", "tan", "tanh"]},
        "atan2": [(NUM, NUM)], "hypot": [(NUM, NUM)], "pow": [(NUM, NUM)],
        "power": [(NUM, NUM)], "log": [(NUM,), (NUM, NUM)], "mod": [(N, N), (NUM, NUM)],
        "pmod": [(N, N), (NUM, NUM)], "div": [(N, N)], "nanvl": [(D, D)],
        "round": [(NUM,), (NUM, I)], "bround": [(NUM,), (NUM, I)],
        "bin": [(N,)], "bit_count": [(N,)], "bit_get": [(N, I)], "getbit": [(N, I)],
        "bitmap_bit_position": [(N,)], "bitmap_bucket_number": [(N,)],
        "bitmap_count": [("bin",)], "conv": [("numstr", "base", "base"), (S, "base", "base")],
        "e": [()], "pi": [()], "factorial": [(I,)],
        "shiftleft": [(N, I)], "shiftright": [(N, I)], "shiftrightunsigned": [(N, I)],
        "try_add": [(N, N), (NUM, NUM)], "try_subtract": [(N, N), (NUM, NUM)],
        "try_multiply": [(N, N), (NUM, NUM)], "try_divide": [(N, N), (NUM, NUM)],
        "width_bucket": [(NUM, NUM, NUM, I)],
    },
    "conversion": {
        **{f: [("anyv",), (NUM,), ("numstr",)] for f in [
            "bigint", "boolean", "double", "float", "int", "smallint", "tinyint", "string",
            "decimal"]},
        "binary": [(S,), ("bin",)], "timestamp": [("datestr",), ("ts",)],
        "decode": [("bin", "charset")], "encode": [(S, "charset")],
        "to_binary": [("hexstr",), ("hexstr", "binfmt")],
        "try_to_binary": [("hexstr",), ("hexstr", "binfmt")],
    },
    "conditional": {
        "coalesce": [("anyv", "anyv"), (NUM, NUM, NUM)], "equal_null": [("anyv", "anyv")],
        "greatest": [(NUM, NUM), (S, S, S)], "least": [(NUM, NUM), (S, S, S)],
        "if": [("bool", NUM, NUM)], "iff": [("bool", S, S)], "ifnull": [(NUM, NUM), (S, S)],
        "isnull": [("anyv",)], "isnotnull": [("anyv",)], "nullif": [(NUM, NUM), (S, S)],
        "nullifzero": [(NUM,)], "zeroifnull": [(NUM,)], "nvl": [(NUM, NUM), (S, S)],
        "nvl2": [("anyv", NUM, NUM)], "typeof": [("anyv",), (NUM,)],
        "assert_true": [("bool",)], "raise_error": [(S,)],
    },
    "hash": {
        "base64": [(S,), ("bin",)], "unbase64": [("hexstr",)], "crc32": [(S,), ("bin",)],
        "hash": [("anyv",), ("anyv", "anyv")], "xxhash64": [("anyv",), ("anyv", "anyv")],
        "hex": [(N,), (S,), ("bin",)], "unhex": [("hexstr",)], "md5": [(S,), ("bin",)],
        "sha": [(S,)], "sha1": [(S,), ("bin",)], "sha2": [(S, "shabits"), ("bin", "shabits")],
    },
    "json": {
        "from_json": [("json", "schema")], "get_json_object": [("json", "jsonpath")],
        "json_array_length": [("json",)], "json_extract": [("json", "jsonpath")], "json_object_keys": [("json",)],
        "schema_of_json": [("json",)], "to_json": [("jsonarg",)],
    },
    "csv": {
        "from_csv": [("csv", "schema")], "schema_of_csv": [("csv",)], "to_csv": [("csvarg",)],
    },
    "url": {
        "parse_url": [("url", "urlpart"), ("url", "urlpart", "key")], "url_decode": [("url",)],
        "url_encode": [("url",)],
    },
    "collection": {
        "array": [(), (NUM,), (NUM, NUM), (S, S)], "array_append": [("arr", N), ("sarr", S)],
        "array_compact": [("arr",), ("sarr",)], "array_contains": [("arr", N), ("sarr", S)],
        "array_distinct": [("arr",), ("sarr",)], "array_except": [("arr", "arr")],
        "array_insert": [("arr", I, N), ("sarr", I, S)], "array_intersect": [("arr", "arr")],
        "array_join": [("sarr", C), ("sarr", C, C), ("arr", C)], "array_max": [("arr",), ("sarr",)],
        "array_min": [("arr",), ("sarr",)], "array_position": [("arr", N), ("sarr", S)],
        "array_prepend": [("arr", N)], "array_remove": [("arr", N), ("sarr", S)],
        "array_repeat": [(S, I), (N, I)], "array_size": [("arr",)],
        "array_sort": [("arr",), ("sarr",)], "array_union": [("arr", "arr")],
        "arrays_overlap": [("arr", "arr")], "arrays_zip": [("arr", "arr"), ("arr", "sarr")],
        "cardinality": [("arr",)], "size": [("arr",), ("sarr",)],
        "element_at": [("arr", I), ("sarr", I)], "try_element_at": [("arr", I)],
        "get": [("arr", I)], "flatten": [("arrarr",)],
        "named_struct": [("key", NUM), ("key", S, "key", NUM)],
        "struct": [(NUM,), (NUM, S)], "sequence": [(N, N), (N, N, N)],
        "slice": [("arr", I, I)], "sort_array": [("arr",), ("arr", "bool"), ("sarr", "bool")],
    },
}
POOLS["jsonarg"] = ["named_struct('a', 1, 'b', 'x')", "array(1, 2)",
                    "named_struct('t', " + ts("2024-02-29 13:45:07.123456") + ")",
                    "named_struct('t', " + ts("2024-02-29 13:45:07") + ")",
                    "named_struct('d', " + dbl("1.5") + ", 'n', CAST(NULL AS INT))",
                    "named_struct('s', 'straße', 'q', 'a\"b')", "array(named_struct('a', 1))",
                    "named_struct('nan', " + dbl("'NaN'") + ")", "NULL"]
POOLS["csvarg"] = ["named_struct('a', 1, 'b', 'x')", "named_struct('s', 'q,\"r')",
                   "named_struct('t', " + ts("2024-02-29 13:45:07.123456") + ")",
                   "named_struct('d', " + dbl("1.5") + ", 'n', CAST(NULL AS INT))", "NULL"]


def family_of(function):
    for family, functions in FAMILIES.items():
        if function in functions:
            return family
    return "other"


def calls(seed=SEED, per_function=CALLS_PER_FUNCTION):
    """[(family, function, sql)] in a fixed order, without duplicates."""
    rng = random.Random(seed)
    out = []
    seen = set()
    for family in FAMILIES:
        for function in sorted(FAMILIES[family]):
            signatures = FAMILIES[family][function]
            for _ in range(per_function):
                signature = rng.choice(signatures)
                args = [rng.choice(POOLS[pool]) for pool in signature]
                sql = f"{function}({', '.join(args)})"
                if sql in seen:
                    continue
                seen.add(sql)
                out.append((family, function, sql))
    # The named cases of the issue, whatever the draw gave.
    for family, function, sql in (EXTRA + DECIMAL_CALLS + DATE_CALLS + lambda_calls() + ZONE_CALLS
                                   + PATTERN_CALLS + BITWISE_CALLS + MAP_CALLS + NTZ_CALLS
                                   + TRY_CAST_CALLS + FORMAT_CALLS + YM_CALLS + OPERATOR_CALLS
                                   + INTERVAL_TEXT_CALLS):
        if sql not in seen:
            seen.add(sql)
            out.append((family, function, sql))
    return out


# Time zones: zones with daylight saving (Berlin, Los Angeles, Lord Howe's
# half hour) and without (Kolkata's +05:30), instants and wall-clock times at
# their transitions: in a gap (skipped), in an overlap (repeated), and next to
# them.
ZONES = ["'Europe/Berlin'", "'America/Los_Angeles'", "'Australia/Lord_Howe'", "'Asia/Kolkata'",
         "'UTC'", "'PST'", "'+05:30'", "'-08:00'", "'GMT+1'", "'UTC-03:30'", "'Z'",
         "'Nope/Zone'", "'europe/berlin'", "NULL"]
ZONE_TIMES = ["2024-03-31 00:59:59", "2024-03-31 01:00:00", "2024-03-31 02:30:00",
              "2024-10-27 00:30:00", "2024-10-27 01:30:00", "2024-10-27 02:30:00",
              "2024-03-10 02:30:00", "2024-03-10 10:00:00", "2024-11-03 01:30:00",
              "2024-11-03 09:30:00", "2024-04-06 15:15:00", "2024-04-07 01:45:00",
              "2024-10-06 02:15:00", "1945-06-15 12:00:00", "1890-01-01 00:00:00",
              "2060-07-01 12:00:00", "9999-12-31 23:59:59"]
ZONE_PATTERNS = ["'z'", "'zzzz'", "'VV'", "'O'", "'OOOO'", "'X'", "'XX'", "'XXX'", "'XXXX'",
                 "'XXXXX'", "'x'", "'xx'", "'xxx'", "'xxxx'", "'xxxxx'", "'Z'", "'ZZZZ'",
                 "'ZZZZZ'", "'yyyy-MM-dd HH:mm:ss XXX'", "'yyyy-MM-dd HH:mm z'"]


def _zone_calls():
    rng = random.Random(4343)
    out = []
    for t in ZONE_TIMES:
        for zone in rng.sample(ZONES, 5):
            out.append(("datetime", "from_utc_timestamp", f"from_utc_timestamp({ts(t)}, {zone})"))
        for zone in rng.sample(ZONES, 5):
            out.append(("datetime", "to_utc_timestamp", f"to_utc_timestamp({ts(t)}, {zone})"))
        src, dst = rng.sample(ZONES[:10], 2)
        out.append(("datetime", "convert_timezone",
                    f"convert_timezone({src}, {dst}, CAST('{t}' AS TIMESTAMP_NTZ))"))
        date, time_of_day = t.split(" ")
        y, mo, d = (int(x) for x in date.split("-"))
        h, mi, sec = (int(x) for x in time_of_day.split(":"))
        zone = rng.choice(ZONES)
        out.append(("datetime", "make_timestamp",
                    f"make_timestamp({y}, {mo}, {d}, {h}, {mi}, {sec}, {zone})"))
    out.append(("datetime", "convert_timezone",
                "convert_timezone('Asia/Kolkata', CAST('2024-03-31 02:30:00' AS TIMESTAMP_NTZ))"))
    for p in ZONE_PATTERNS:
        out.append(("datetime", "date_format", f"date_format({ts('2024-02-29 13:45:07')}, {p})"))
    return out


ZONE_CALLS = _zone_calls()

# Calls evaluated with a session time zone other than UTC (SET TIME ZONE):
# (family, function, sql, zone). A TIMESTAMP's text, fields and parsing are
# those of the zone's wall clock.
SESSION_ZONES = ["Europe/Berlin", "America/Los_Angeles", "Australia/Lord_Howe", "Asia/Kolkata"]


def session_zone_calls():
    rng = random.Random(4344)
    out = []
    instants = ["2024-03-31 00:30:00Z", "2024-03-31 01:30:00Z", "2024-10-27 00:30:00Z",
                "2024-10-27 01:30:00Z", "2024-03-10 10:30:00Z", "2024-11-03 08:30:00Z",
                "2024-11-03 09:30:00Z", "2024-04-06 15:15:00Z", "2024-10-05 15:45:00Z",
                "1945-06-15 12:00:00Z", "2060-07-01 12:00:00Z", "2024-12-31 23:30:00Z"]
    walls = ["2024-03-31 02:30:00", "2024-10-27 02:30:00", "2024-03-10 02:30:00",
             "2024-11-03 01:30:00", "2024-10-06 02:15:00", "2024-04-07 01:45:00",
             "2024-06-15 12:00:00", "2024-01-01 00:00:00"]
    for zone in SESSION_ZONES:
        for i in instants:
            t = f"CAST('{i}' AS TIMESTAMP)"
            for f in ["hour", "minute", "dayofmonth", "to_date"]:
                out.append(("datetime", f, f"{f}({t})", zone))
            out.append(("datetime", "string", f"string({t})", zone))
            for p in rng.sample(ZONE_PATTERNS, 4):
                out.append(("datetime", "date_format", f"date_format({t}, {p})", zone))
            for unit in ["'HOUR'", "'DAY'", "'MONTH'"]:
                out.append(("datetime", "date_trunc", f"date_trunc({unit}, {t})", zone))
        for w in walls:
            out.append(("datetime", "timestamp", f"timestamp('{w}')", zone))
            out.append(("datetime", "unix_timestamp", f"unix_timestamp('{w}')", zone))
            out.append(("datetime", "to_timestamp",
                        f"to_timestamp('{w}', 'yyyy-MM-dd HH:mm:ss')", zone))
            date, time_of_day = w.split(" ")
            y, mo, d = (int(x) for x in date.split("-"))
            h, mi, sec = (int(x) for x in time_of_day.split(":"))
            out.append(("datetime", "make_timestamp",
                        f"make_timestamp({y}, {mo}, {d}, {h}, {mi}, {sec})", zone))
            out.append(("datetime", "convert_timezone",
                        f"convert_timezone('UTC', CAST('{w}' AS TIMESTAMP_NTZ))", zone))
            out.append(("datetime", "from_unixtime",
                        f"from_unixtime(unix_timestamp('{w}', 'yyyy-MM-dd HH:mm:ss'))", zone))
    # TIMESTAMP_NTZ in a session zone: shown and read as it is; casts to and
    # from TIMESTAMP go through the zone.
    for zone in SESSION_ZONES:
        for w in walls[:4]:
            n = f"TIMESTAMP_NTZ '{w}'"
            for sql, f in [(f"hour({n})", "hour"), (f"unix_timestamp({n})", "unix_timestamp"),
                           (f"CAST({n} AS TIMESTAMP)", "cast"), (f"date_trunc('DAY', {n})", "date_trunc"),
                           (f"CAST(CAST('{w}Z' AS TIMESTAMP) AS TIMESTAMP_NTZ)", "cast"),
                           (f"to_timestamp_ntz(CAST('{w}Z' AS TIMESTAMP))", "to_timestamp_ntz"),
                           (f"{n} = CAST('{w}' AS TIMESTAMP)", "=")]:
                out.append(("datetime", f, sql, zone))
    # A TIMESTAMP plus a year-month interval moves its wall clock in the
    # zone: into a gap (2024-01-31 02:30 in Berlin and 2 months is the
    # skipped 2024-03-31 02:30), across a change, and at a month's end.
    for zone in SESSION_ZONES[:2]:
        for i, months in [("2024-01-31 01:30:00Z", 2), ("2024-03-30 01:30:00Z", 1),
                          ("2024-10-31 12:00:00Z", -1), ("2024-02-29 23:30:00Z", 12)]:
            out.append(("interval", "+", f"CAST('{i}' AS TIMESTAMP) + INTERVAL '{months}' MONTH", zone))
    return out


# TIMESTAMP_NTZ: literals, casts, comparisons and arithmetic, and the
# functions over one.
_NTZ = "TIMESTAMP_NTZ '2024-02-29 13:45:07.123456'"
NTZ_CALLS = [("datetime", f, sql) for f, sql in [
    ("cast", "CAST('2024-01-01 10:00:00+05:00' AS TIMESTAMP_NTZ)"),
    ("cast", "CAST('2024-01-01T10:00Z' AS TIMESTAMP_NTZ)"), ("cast", "CAST('2024' AS TIMESTAMP_NTZ)"),
    ("cast", f"CAST({_NTZ} AS STRING)"), ("cast", f"CAST({_NTZ} AS DATE)"),
    ("cast", "CAST(DATE '2024-02-29' AS TIMESTAMP_NTZ)"), ("cast", f"CAST({_NTZ} AS TIMESTAMP)"),
    ("cast", f"CAST({ts('2024-02-29 13:45:07')} AS TIMESTAMP_NTZ)"),
    ("+", f"{_NTZ} + INTERVAL '1' HOUR"), ("-", f"{_NTZ} - INTERVAL '2' DAY"),
    ("-", f"{_NTZ} - TIMESTAMP_NTZ '2024-01-01 00:00:00'"), ("-", f"{_NTZ} - DATE '2024-02-28'"),
    ("<", f"{_NTZ} < '2024-03-01'"), ("=", f"{_NTZ} = {ts('2024-02-29 13:45:07.123456')}"),
    ("<", f"DATE '2024-02-29' < {_NTZ}"), ("coalesce", f"coalesce({_NTZ}, DATE '2024-01-01')"),
    ("coalesce", f"coalesce({_NTZ}, {ts('2024-02-29 13:45:07')})"),
    ("hour", f"hour({_NTZ})"), ("minute", f"minute({_NTZ})"), ("second", f"second({_NTZ})"),
    ("year", f"year({_NTZ})"), ("dayofweek", f"dayofweek({_NTZ})"), ("weekofyear", f"weekofyear({_NTZ})"),
    ("dayofyear", f"dayofyear({_NTZ})"), ("quarter", f"quarter({_NTZ})"), ("dayname", f"dayname({_NTZ})"),
    ("date_format", f"date_format({_NTZ}, 'yyyy-MM-dd HH:mm:ss.SSS')"),
    ("date_trunc", f"date_trunc('HOUR', {_NTZ})"), ("to_date", f"to_date({_NTZ})"),
    ("date_add", f"date_add({_NTZ}, 1)"), ("last_day", f"last_day({_NTZ})"),
    ("unix_timestamp", f"unix_timestamp({_NTZ})"), ("unix_micros", f"unix_micros({_NTZ})"),
    ("to_timestamp", f"to_timestamp({_NTZ})"), ("to_timestamp_ntz", f"to_timestamp_ntz({_NTZ})"),
    ("to_timestamp_ntz", "to_timestamp_ntz('2024-01-01 10:00:00+05:00', 'yyyy-MM-dd HH:mm:ssXXX')"),
    ("make_timestamp_ntz", "make_timestamp_ntz(2024, 2, 29, 13, 45, 7.5)"),
    ("to_json", f"to_json(named_struct('a', {_NTZ}))"), ("typeof", f"typeof({_NTZ})"),
]]

EXTRA = [
    ("string", "trim", "trim('xxhixx', 'x')"), ("string", "ltrim", "ltrim('xxhixx', 'x')"),
    ("string", "rtrim", "rtrim('xxhixx', 'x')"), ("string", "trim", "trim('x', 'xxhixx')"),
    ("string", "printf", "printf('%.2f', 0.125)"),
    ("string", "printf", "printf('%.2f', " + dbl("0.125") + ")"),
    ("string", "upper", "upper('straße')"),
    ("string", "substring", "substring(CAST('é日' AS BINARY), 3, 3)"),
    ("datetime", "date_format", "date_format(" + ts("2024-02-29 13:45:07") + ", 'kk:mm')"),
    ("datetime", "date_format", "date_format(" + ts("2024-02-29 13:45:07") + ", 'Q')"),
    ("datetime", "date_format", "date_format(" + ts("2024-02-29 13:45:07") + ", 'D')"),
    ("json", "get_json_object", "get_json_object('[{\"a\":1},{\"a\":2}]', '$[*].a')"),
    ("json", "to_json", "to_json(named_struct('t', " + ts("2024-02-29 13:45:07.123456") + "))"),
    ("conversion", "tinyint", "tinyint(2147483647)"),
]

# try_cast(x AS type): NULL where ANSI mode's CAST raises.
TRY_CAST_CALLS = [("conversion", "try_cast", f"try_cast({x} AS {t})") for x, t in [
    ("'abc'", "INT"), ("'1.9'", "BIGINT"), ("' 42 '", "INT"), ("'2023-02-29'", "DATE"),
    ("'2024-02-29'", "DATE"), ("9223372036854775807", "INT"), (dbl("'NaN'"), "BIGINT"),
    ("'1e3'", "DOUBLE"), ("''", "DOUBLE"), ("'x'", "BOOLEAN"), ("'yes'", "BOOLEAN"),
    ("'1234.5'", "DECIMAL(5,2)"), ("'12.345'", "DECIMAL(5,2)"), ("NULL", "INT"),
    ("'-3.5'", "TINYINT"), ("300", "TINYINT"), ("'2024-02-29 13:45:07'", "TIMESTAMP"),
    ("'not a timestamp'", "TIMESTAMP"), ("array('1', 'x')", "ARRAY<INT>"),
    (dbl("1e10"), "INT"), (dbl("2.5"), "INT"), ("'7'", "SMALLINT"),
]]

# DECIMAL(p, s) through operators, CAST and the functions that keep its
# digits: result types, HALF_UP rounding, the 38-digit bound.
def _dec(x, p, s):
    return f"CAST({x} AS DECIMAL({p},{s}))"


DECIMAL_CALLS = [("decimal", op, sql) for op, sql in [
    ("+", "0.1BD + 0.2BD"), ("*", "1.50BD * 3"), ("/", "1BD / 3BD"), ("%", "-7.5BD % 2BD"),
    ("/", _dec(1, 10, 2) + " / 3"), ("-", "2.5BD - 10"), ("+", "1.5BD + " + dbl("1.0")),
    ("*", _dec("12.345BD", 10, 3) + " * " + _dec("2.5BD", 4, 1)),
    ("*", _dec(1, 38, 18) + " * " + _dec(1000, 38, 18)),
    ("/", _dec(1, 38, 18) + " / " + _dec(3, 38, 18)),
    ("/", "2BD / 0BD"), ("+", _dec("99999999999999999999999999999999999999BD", 38, 0) + " + 1"),
    ("-", "-(1.25BD)"), ("%", "10.5BD % 3"),
    ("cast", _dec("'123.456'", 5, 2)), ("cast", _dec("'-0.005'", 5, 2)),
    ("cast", _dec(dbl("0.125"), 5, 2)), ("cast", _dec("'1234.5'", 5, 2)),
    ("cast", _dec("'abc'", 5, 2)), ("cast", _dec("true", 3, 1)), ("cast", _dec(2147483647, 10, 0)),
    ("cast", _dec(9223372036854775807, 20, 0)), ("cast", _dec(dbl("1e308"), 38, 0)),
    ("cast", "CAST(-12.5BD AS INT)"), ("cast", "CAST(12.5BD AS STRING)"),
    ("cast", "CAST(12.5BD AS DOUBLE)"), ("cast", "CAST(1.5BD AS BOOLEAN)"),
    ("cast", "CAST(0.0000001BD AS STRING)"), ("cast", "CAST(-0.50BD AS BIGINT)"),
    ("=", "1.50BD = 1.5BD"), ("<", "1.5BD < 2"), (">", "2.5BD > " + dbl("2.4")),
    ("typeof", "typeof(1.5BD)"), ("typeof", "typeof(1.5BD * 2)"), ("typeof", "typeof(1BD / 3BD)"),
    ("decimal", "decimal('12.7')"), ("decimal", "decimal(7)"),
    ("hash", "hash(1.5BD)"), ("xxhash64", "xxhash64(" + _dec("12345678901234567890.5BD", 38, 1) + ")"),
    ("coalesce", "coalesce(NULL, 1.25BD)"), ("greatest", "greatest(1.5BD, 2)"),
]]

# The bitwise operators & | ^ ~: INT and BIGINT (and their mix), the bounds,
# NULL, the precedence among them and against arithmetic and comparison, and
# the operand types Spark refuses.
_BIG = "CAST(4294967296 AS BIGINT)"
BITWISE_CALLS = [("bitwise", op, sql) for op, sql in [
    ("&", "12 & 10"), ("|", "12 | 10"), ("^", "12 ^ 10"), ("~", "~5"), ("~", "~0"),
    ("&", "-1 & 255"), ("|", "-8 | 3"), ("|", "2147483647 | -2147483648"),
    ("^", "-2147483648 ^ -1"), ("~", "~2147483647"), ("~", "~-2147483648"),
    ("&", "9223372036854775807 & -1"), ("|", "-9223372036854775808 | 1"),
    ("^", "9223372036854775807 ^ -9223372036854775808"), ("~", "~9223372036854775807"),
    ("&", _BIG + " & 4294967297"), ("|", "1 | " + _BIG), ("^", _BIG + " ^ 7"),
    ("~", "~" + _BIG), ("&", "CAST(6 AS SMALLINT) & 3"), ("|", "CAST(6 AS TINYINT) | 1"),
    ("&", "NULL & 1"), ("|", "1 | NULL"), ("^", "NULL ^ NULL"), ("~", "~NULL"),
    ("&", "CAST(NULL AS BIGINT) & 1"), ("~", "~CAST(NULL AS INT)"),
    ("^", "2 ^ 3 & 1"), ("|", "6 | 1 ^ 3"), ("|", "1 | 2 & 3"), ("&", "4 + 2 & 3"),
    ("|", "2 * 3 | 1"), ("~", "~1 + 1"), ("~", "-~5"), ("~", "~-5"), ("&", "5 & 4 = 4"),
    ("&", "1.5BD & 1"), ("|", dbl("1.5") + " | 1"), ("^", "true ^ 1"), ("~", "~" + dbl("2.5")),
    ("&", "'3' & 1"),
]]

# DATE: literals, casts, operators and the date functions over DATE values,
# at the leap day and the ends of the calendar.
def _d(x):
    return f"DATE '{x}'"


_DAYS = ["2024-02-29", "0001-01-01", "9999-12-31", "1970-01-01", "2023-12-31"]
DATE_CALLS = [("date", fn, sql) for fn, sql in [
    *[("literal", _d(x)) for x in _DAYS],
    ("cast", "CAST('2024-02-29' AS DATE)"), ("cast", "CAST(' 2024-3-5 ' AS DATE)"),
    ("cast", "CAST('2024-03-05 10:11:12' AS DATE)"), ("cast", "CAST('2024-03-05T10:11:12Z' AS DATE)"),
    ("cast", "CAST('2024' AS DATE)"), ("cast", "CAST('2024-07' AS DATE)"),
    ("cast", "CAST('2023-02-29' AS DATE)"), ("cast", "CAST('' AS DATE)"),
    ("cast", "CAST(" + ts("2024-02-29 23:59:59.999999") + " AS DATE)"),
    ("cast", "CAST(" + ts("1969-12-31 23:59:59") + " AS DATE)"),
    ("cast", "CAST(" + _d("2024-02-29") + " AS TIMESTAMP)"),
    ("cast", "CAST(" + _d("0001-01-01") + " AS STRING)"),
    ("cast", "CAST(NULL AS DATE)"),
    ("+", _d("2024-02-28") + " + 1"), ("-", _d("2024-03-01") + " - 1"),
    ("+", "1 + " + _d("2023-12-31")), ("-", _d("2024-03-01") + " - " + _d("2024-02-01")),
    ("+", _d("9999-12-31") + " + 1"), ("-", _d("0001-01-01") + " - 1"),
    ("=", _d("2024-02-29") + " = '2024-02-29'"), ("<", _d("2024-02-29") + " < " + _d("2024-03-01")),
    ("=", _d("2024-02-29") + " = " + ts("2024-02-29 00:00:00")),
    ("<", _d("2024-02-29") + " < " + ts("2024-02-29 00:00:01")),
    ("typeof", "typeof(" + _d("2024-02-29") + ")"), ("typeof", "typeof(" + _d("2024-02-29") + " + 1)"),
    ("typeof", "typeof(to_date('2024-02-29'))"),
    *[(f, f"{f}({_d(x)})") for f in ["year", "month", "day", "dayofweek", "dayofyear", "weekofyear",
                                     "quarter", "weekday", "last_day", "unix_date", "hour",
                                     "dayname", "monthname", "to_date"]
      for x in _DAYS[:3]],
    *[(f, f"{f}({_d(x)}, {n})") for f in ["date_add", "date_sub", "add_months"]
      for x, n in [("2024-02-29", 1), ("2024-01-31", 1), ("9999-12-31", -12), ("0001-01-01", 365)]],
    *[("datediff", f"datediff({_d(a)}, {_d(b)})") for a, b in
      [("2024-03-01", "2024-02-01"), ("0001-01-01", "9999-12-31"), ("2024-02-29", "2024-02-29")]],
    *[("next_day", f"next_day({_d(x)}, {w})") for x, w in
      [("2024-02-29", "'MO'"), ("2015-01-14", "'TU'"), ("9999-12-31", "'FRI'")]],
    *[("trunc", f"trunc({_d('2024-08-17')}, {u})") for u in ["'YEAR'", "'Q'", "'MM'", "'WEEK'", "'DAY'"]],
    *[("date_trunc", f"date_trunc({u}, {_d('2024-08-17')})") for u in ["'YEAR'", "'MONTH'", "'DAY'", "'HOUR'"]],
    *[("date_format", f"date_format({_d('2024-02-29')}, {p})") for p in
      ["'yyyy-MM-dd'", "'yyyy/MM/dd EEE'", "'D'", "'HH:mm'", "'MMMM d, yyyy'"]],
    ("make_date", "make_date(2024, 2, 29)"), ("make_date", "make_date(2023, 2, 29)"),
    ("date_from_unix_date", "date_from_unix_date(19782)"),
    ("date_from_unix_date", "date_from_unix_date(-719162)"),
    ("months_between", "months_between(" + _d("2024-03-31") + ", " + _d("2024-02-29") + ")"),
    ("to_date", "to_date('2024-02-29 13:45:07')"), ("to_date", "to_date('15.06.2000', 'dd.MM.yyyy')"),
    ("to_timestamp", "to_timestamp(" + _d("2024-02-29") + ")"),
    ("unix_timestamp", "unix_timestamp(" + _d("2024-02-29") + ")"),
    ("coalesce", "coalesce(NULL, " + _d("2024-02-29") + ")"),
    ("greatest", "greatest(" + _d("2024-02-29") + ", " + _d("2023-01-01") + ")"),
    ("to_json", "to_json(named_struct('d', " + _d("2024-02-29") + "))"),
    ("hash", "hash(" + _d("2024-02-29") + ")"),
]]

# Higher-order functions: each array of a pool (NULL, empty, bounds, NULL
# elements) with two lambdas drawn for it, then the cases a draw would miss:
# nested lambdas, shadowing, indexes, errors.
_INT_ARRAYS = ["NULL", "array()", "array(1, 2, 3)", "array(3, NULL, -1)", "array(2147483647, 1)",
               "array(-2147483648)", "CAST(NULL AS ARRAY<INT>)", "array(5, 5, 1, 4)"]
_STR_ARRAYS = ["array('b', 'a', NULL, 'straße')", "array('')", "CAST(array() AS ARRAY<STRING>)",
               "array('é日本', 'abc', 'ab')"]
_INT_LAMBDAS = {
    "transform": ["x -> x + 1", "x -> x * 2", "(x, i) -> x + i", "x -> x IS NULL",
                  "x -> CAST(x AS STRING)", "(x, i) -> i", "x -> NULL", "x -> array(x)"],
    "filter": ["x -> x > 1", "x -> x IS NOT NULL", "(x, i) -> i % 2 = 0", "x -> NULL",
               "x -> x % 2 = 1"],
    "exists": ["x -> x > 2", "x -> x IS NULL", "x -> x = 1", "x -> NULL"],
    "forall": ["x -> x > 2", "x -> x IS NOT NULL", "x -> x < 10", "x -> NULL"],
    "aggregate": ["0, (acc, x) -> acc + x", "0, (acc, x) -> acc + x, acc -> acc * 10",
                  "CAST(0 AS BIGINT), (acc, x) -> acc + x", "0, (acc, x) -> acc + coalesce(x, 0)",
                  "1, (acc, x) -> acc * x"],
    "reduce": ["0, (acc, x) -> acc + x", "0, (acc, x) -> greatest(acc, x), acc -> acc + 1"],
    "array_sort": ["(l, r) -> CASE WHEN l < r THEN 1 WHEN l > r THEN -1 ELSE 0 END", "(l, r) -> 0",
                   "(l, r) -> CASE WHEN l IS NULL THEN -1 WHEN r IS NULL THEN 1 "
                   "WHEN l < r THEN -1 WHEN l > r THEN 1 ELSE 0 END"],
    "zip_with": ["array(10, 20), (x, y) -> x + y", "array(), (x, y) -> coalesce(x, y)",
                 "array('a', NULL, 'c', 'd'), (x, y) -> concat(CAST(x AS STRING), y)"],
}
_STR_LAMBDAS = {
    "transform": ["x -> upper(x)", "x -> length(x)", "(x, i) -> concat(x, CAST(i AS STRING))"],
    "filter": ["x -> length(x) > 1", "x -> x LIKE 'a%'"],
    "exists": ["x -> x = 'a'", "x -> x IS NULL"],
    "forall": ["x -> length(x) >= 0"],
    "aggregate": ["'', (acc, x) -> concat(acc, x)", "0, (acc, x) -> acc + length(x)"],
    "array_sort": ["(l, r) -> length(l) - length(r)",
                   "(l, r) -> CASE WHEN l < r THEN -1 WHEN l > r THEN 1 ELSE 0 END"],
    "zip_with": ["array(1), (x, y) -> concat(x, CAST(y AS STRING))"],
}
_LAMBDA_EXTRA = [
    ("transform", "transform(array(array(1, 2), array(3)), a -> transform(a, x -> x * 10))"),
    ("transform", "transform(array(1, 2), x -> aggregate(array(10, 20), 0, (acc, y) -> acc + x * y))"),
    ("transform", "transform(array(1, 2), x -> transform(array(10), x -> x + 1))"),
    ("transform", "transform(array(named_struct('a', 1), named_struct('a', 2)), s -> s.a)"),
    ("transform", "transform(array(1), X -> x + 1)"),
    ("transform", "transform(array(1, 2), (x, i) -> x * i)"),
    ("transform", "transform(1, x -> x)"),
    ("transform", "transform(array(1), (x, y, z) -> x)"),
    ("transform", "transform(array(CAST(1.5 AS DOUBLE), CAST('NaN' AS DOUBLE)), x -> x * 2)"),
    ("transform", "transform(array(9223372036854775807), x -> x + 1)"),
    ("filter", "filter(array(1, 2, 3), x -> exists(array(2, 3), y -> y = x))"),
    ("filter", "filter(array(1), x -> x + 1)"),
    ("filter", "filter(array(NULL, NULL), x -> x IS NULL)"),
    ("exists", "exists(array(NULL, 1), x -> x = 1)"),
    ("exists", "exists(array(NULL, 1), x -> x = 2)"),
    ("forall", "forall(array(NULL, 1), x -> x = 2)"),
    ("forall", "forall(array(NULL, 1), x -> x = 1)"),
    ("aggregate", "aggregate(array(CAST(1.5 AS DOUBLE)), 0, (acc, x) -> acc + x)"),
    ("aggregate", "aggregate(array(CAST(1.5 AS DOUBLE), CAST(2 AS DOUBLE)), CAST(0 AS DOUBLE), "
                  "(acc, x) -> acc + x)"),
    ("aggregate", "aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x, acc -> CAST(acc AS STRING))"),
    ("aggregate", "aggregate(array(1, 2), 0, (acc, acc) -> acc)"),
    ("aggregate", "aggregate(array(array(1), array(2, 3)), 0, (acc, a) -> acc + size(a))"),
    ("zip_with", "zip_with(array(1, 2), NULL, (x, y) -> x)"),
    ("zip_with", "zip_with(array(1, 2, 3), array('a'), (x, y) -> named_struct('x', x, 'y', y))"),
    ("array_sort", "array_sort(array(3, 1, 2), (l, r) -> NULL)"),
    ("array_sort", "array_sort(array(3, 1, 2), (l, r) -> CAST(r - l AS BIGINT))"),
    ("array_sort", "array_sort(array('bb', 'a', 'ccc', 'dd'), (l, r) -> length(r) - length(l))"),
]


def lambda_calls(seed=4343):
    rng = random.Random(seed)
    out = []
    for arrays, lambdas in [(_INT_ARRAYS, _INT_LAMBDAS), (_STR_ARRAYS, _STR_LAMBDAS)]:
        for function in sorted(lambdas):
            for arr in arrays:
                for body in sorted(set(rng.sample(lambdas[function], min(2, len(lambdas[function]))))):
                    out.append(("lambda", function, f"{function}({arr}, {body})"))
    out += [("lambda", f, sql) for f, sql in _LAMBDA_EXTRA]
    return out


# Functions never called: their value differs from run to run.
NON_DETERMINISTIC = {"rand", "randn", "random", "uuid", "shuffle", "current_date",
                     "current_timestamp", "curdate", "now", "localtimestamp", "current_timezone",
                     "version", "aes_encrypt", "aes_decrypt", "try_aes_decrypt", "window_time"}


if __name__ == "__main__":
    all_calls = calls()
    print(len(all_calls), "calls of", len({f for _, f, _ in all_calls}), "functions")


# Functions and forms added after the seeded draw above, listed here rather
# than in FAMILIES so the draw (and so every recorded call) stays as it was:
# format_number with a DecimalFormat pattern, hmac with each algorithm, and
# initcap's full title case.
_NUMBERS = [dbl("1234567.891"), dbl("-0.005"), dbl("0.125"), dbl("'NaN'"), dbl("'-Infinity'"),
            "0", "-7", "9223372036854775807", "NULL", dbl("2.5"), dbl("0.5")]
_NUMBER_PATTERNS = ["'#,##0.00'", "'0.0'", "'#.##'", "'000000'", "'$#,##0.00 USD'", "''",
                    "'#,####'", "'0.###'", "'#'", "'0.'", "'#%'", "'0.0E0'", "NULL"]
PATTERN_CALLS = [("string", "format_number", f"format_number({x}, {p})")
                 for x in _NUMBERS for p in _NUMBER_PATTERNS]
_HMAC_ARGS = ["'key', 'message'", "'key', 'message', 'SHA-1'", "'key', 'message', 'sha-512'",
              "'key', 'message', 'SHA256'", "'key', 'message', 'SHA-224'",
              "'key', 'message', 'SHA-384'", "X'00FF', CAST('é日' AS BINARY), 'MD5'",
              "'key', 'message', 'bogus'", "NULL, 'message'", "'key', NULL", "'key', 'm', NULL",
              "'', ''", "'k', ''", "1, 2", "'key', 'message', 'sha1'", "'key', 'message', 'HmacSHA256'"]
PATTERN_CALLS += [("hash", "hmac", f"hex(hmac({a}))") for a in _HMAC_ARGS]
PATTERN_CALLS += [("hash", "hmac", "typeof(hmac('key', 'message'))")]
# initcap of the characters whose title case is several (SpecialCasing).
PATTERN_CALLS += [("string", "initcap", f"initcap('{s}')") for s in
                  ["ßa", "ﬀ ﬃx ﬆ", "ŉ x", "ǰ", "և", "ﬓ", "ǆa", "ΐ", "ẖ", "a ﬁ", "straße ßB"]]

# Spark's number format patterns: to_char/to_varchar of INT, BIGINT, DOUBLE and
# DECIMAL values (bounds, zero, negatives, more digits than the format) in
# valid and invalid formats, to_char of DATE, TIMESTAMP and BINARY, and
# to_number/try_to_number of matching and mismatching text. A seeded draw of its
# own, so the calls above stay as they were.
_NF_RNG = random.Random(4343)
_NF_VALUES = ["0", "-7", "454", "12454", "2147483647", "-2147483648", "9223372036854775807",
              "NULL", "0.5BD", "-12.5BD", "78.12BD", "-12454.8BD", "0.005BD", "12.34BD",
              "99999999999999999999999999999999999999BD", "-0.0BD", dbl("1.5"), dbl("-0.125"),
              dbl("1e20"), dbl("'NaN'"), dbl("123456.789"), "CAST(123 AS BIGINT)"]
_NF_FORMATS = ["'999'", "'000D00'", "'99G999'", "'$99.99'", "'99G999D9S'", "'99.99PR'",
               "'MI99.99'", "'S999.9'", "'99'", "'9.99'", "'000'", "'9,999'", "'S.9'", "'9.'",
               "'0.00'", "'s9g999d99mi'", "'$9,999,999,999.99'", "'00000000000000000000'",
               "'.99'", "'9999999999999999999999999999999999999.9'", "''", "'abc'", "'9$'",
               "'99.9.9'", "'9,'", "'9.9,9'", "'S9S'", "'99MI9'", "'x99'", "'PR99'", "NULL"]
_NF_TEXTS = ["'454'", "'454.00'", "'12,454'", "'$78.12'", "'12,454.8-'", "'<12.5>'", "'-12'",
             "' 12 '", "'12.'", "'1234'", "'12'", "'abc'", "''", "NULL", "'+5'", "'-0.5'",
             "'1,2,3'", "'$1,234.56'", "'.5'", "'0012'"]
NUMBER_FORMAT_CALLS = []
for _fn in ("to_char", "to_varchar"):
    for _ in range(60):
        NUMBER_FORMAT_CALLS.append(
            ("conversion", _fn, f"{_fn}({_NF_RNG.choice(_NF_VALUES)}, {_NF_RNG.choice(_NF_FORMATS)})"))
for _fn in ("to_number", "try_to_number"):
    for _ in range(60):
        NUMBER_FORMAT_CALLS.append(
            ("conversion", _fn, f"{_fn}({_NF_RNG.choice(_NF_TEXTS)}, {_NF_RNG.choice(_NF_FORMATS)})"))
NUMBER_FORMAT_CALLS += [
    ("conversion", "to_char", f"to_char({x}, {f})")
    for x in ["X'4142'", "CAST('é日' AS BINARY)", "X''"]
    for f in ["'base64'", "'hex'", "'utf-8'", "'HEX'", "'utf8'"]]
NUMBER_FORMAT_CALLS += [
    ("conversion", "to_char", f"to_char({x}, {f})")
    for x in ["DATE '2024-02-29'", ts("2024-02-29 13:45:07.123456"), ts("0001-01-01 00:00:00")]
    for f in ["'yyyy/MM/dd'", "'HH:mm'", "'EEE, d MMM yyyy'"]]
_nf_seen = set()
PATTERN_CALLS += [c for c in NUMBER_FORMAT_CALLS if not (c[2] in _nf_seen or _nf_seen.add(c[2]))]

# Maps: each function over maps drawn from a pool (NULL, empty, NULL values,
# unicode and integer keys), then the cases a draw would miss: NULL and
# duplicate keys, missing keys, the delimiters of str_to_map, the lambdas.
_MAPS = ["map('a', 1, 'b', 2)", "map()", "CAST(NULL AS MAP<STRING, INT>)", "map('x', NULL, 'é日', 3)",
         "map('a', -2147483648)", "map_from_arrays(array('k', 'a'), array(10, 20))"]
_MAP_KEYS = ["'a'", "'z'", "'é日'", "NULL", "''"]
_MAP_LAMBDAS = {
    "map_filter": ["(k, v) -> v > 1", "(k, v) -> k = 'a'", "(k, v) -> v IS NULL", "(k, v) -> NULL"],
    "transform_values": ["(k, v) -> v + 1", "(k, v) -> concat(k, CAST(v AS STRING))",
                         "(k, v) -> v IS NULL"],
    "transform_keys": ["(k, v) -> upper(k)", "(k, v) -> concat(k, '!')", "(k, v) -> length(k)"],
}


def _map_calls(seed=4344):
    rng = random.Random(seed)
    out = []
    for m in _MAPS:
        for f in ["map_keys", "map_values", "map_entries", "size", "cardinality", "to_json"]:
            out.append(("map", f, f"{f}({m})"))
        for k in rng.sample(_MAP_KEYS, 2):
            out.append(("map", "element_at", f"element_at({m}, {k})"))
            out.append(("map", "map_contains_key", f"map_contains_key({m}, {k})"))
        out.append(("map", "map_concat", f"map_concat({m}, map('c', 3))"))
        for f in sorted(_MAP_LAMBDAS):
            for body in sorted(rng.sample(_MAP_LAMBDAS[f], 2)):
                out.append(("map", f, f"{f}({m}, {body})"))
    return out


MAP_CALLS = _map_calls() + [("map", f, sql) for f, sql in [
    ("map", "map('a', 1, 'b', 2)"), ("map", "map(1, 'x', 2, NULL)"), ("map", "map()"),
    ("map", "map('a', 1, 'a', 2)"), ("map", "map(NULL, 1)"), ("map", "map('a', 1, 'b')"),
    ("map", "map(1, 'a', CAST(2 AS BIGINT), 'b')"), ("map", "map(CAST(1.5 AS DOUBLE), true)"),
    ("map", "typeof(map('a', CAST(1 AS BIGINT)))"),
    ("map", "map('a', 1)['a']"), ("map", "map('a', 1)['z']"), ("map", "map(1, 'x')[1]"),
    ("map_from_arrays", "map_from_arrays(array('a', 'b'), array(1, 2))"),
    ("map_from_arrays", "map_from_arrays(array('a', 'b'), array(1))"),
    ("map_from_arrays", "map_from_arrays(array('a', 'a'), array(1, 2))"),
    ("map_from_arrays", "map_from_arrays(array('a', NULL), array(1, 2))"),
    ("map_from_arrays", "map_from_arrays(NULL, array(1))"),
    ("map_from_entries", "map_from_entries(array(struct('a', 1), struct('b', 2)))"),
    ("map_from_entries", "map_from_entries(array(named_struct('k', 1, 'v', 'x')))"),
    ("map_from_entries", "map_from_entries(array(struct('a', 1), NULL))"),
    ("map_from_entries", "map_from_entries(array(struct('a', 1), struct('a', 2)))"),
    ("str_to_map", "str_to_map('a:1,b:2')"), ("str_to_map", "str_to_map('a=1&b=2', '&', '=')"),
    ("str_to_map", "str_to_map('a')"), ("str_to_map", "str_to_map('')"),
    ("str_to_map", "str_to_map('a:1,a:2')"), ("str_to_map", "str_to_map(NULL)"),
    ("str_to_map", "str_to_map('k:v:w,x:')"), ("str_to_map", "str_to_map('é:日;b:2', ';')"),
    ("str_to_map", "str_to_map('a:1,b:2', ',', NULL)"),
    ("map_concat", "map_concat(map('a', 1), map('a', 2))"),
    ("map_concat", "map_concat(map('a', 1), NULL)"),
    ("map_concat", "map_concat(map('a', 1), map('b', CAST(2 AS BIGINT)))"),
    ("map_contains_key", "map_contains_key(map(1, 'a'), CAST(1 AS BIGINT))"),
    ("element_at", "element_at(map(1, 'a'), 2)"), ("try_element_at", "try_element_at(map('a', 1), 'z')"),
    ("map_zip_with", "map_zip_with(map('a', 1, 'b', 2), map('b', 20, 'c', 30), "
                     "(k, x, y) -> coalesce(x, 0) + coalesce(y, 0))"),
    ("map_zip_with", "map_zip_with(map('a', 1), map(), (k, x, y) -> y)"),
    ("map_zip_with", "map_zip_with(map('a', 1), NULL, (k, x, y) -> x)"),
    ("map_zip_with", "map_zip_with(map(1, 'a'), map(2, 'b'), (k, x, y) -> concat(x, y))"),
    ("transform_keys", "transform_keys(map('a', 1, 'b', 2), (k, v) -> 'same')"),
    ("transform_keys", "transform_keys(map('a', 1), (k, v) -> NULL)"),
    ("map_filter", "map_filter(map('a', 1), (k, v) -> v)"),
    ("to_json", "to_json(map(1, array(true), 2, NULL))"),
    ("to_json", "to_json(named_struct('m', map('a', named_struct('x', NULL))))"),
    ("size", "size(map('a', NULL))"),
]]


# from_avro and to_avro (Spark's spark-avro package, which record.py adds):
# datums of literal schemas, undecodable bytes in both modes, and a schema
# that is none. (spark-protobuf is not in the registry: from_protobuf and
# to_protobuf are checked against python3-protobuf's bytes in
# tests/sql/format_functions.test.)
_AVRO_RECORD = ('{"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}, '
                '{"name": "b", "type": ["null", "string"]}, {"name": "c", "type": '
                '{"type": "array", "items": "long"}}]}')
FORMAT_CALLS = [("avro", fn, sql) for fn, sql in [
    ("to_avro", "to_avro(1, '\"int\"')"), ("to_avro", "to_avro('hi', '\"string\"')"),
    ("to_avro", "to_avro(CAST(5 AS BIGINT), '[\"null\", \"long\"]')"),
    ("to_avro", "to_avro(named_struct('a', -3, 'b', 'x', 'c', array(CAST(1 AS BIGINT), 300)), '"
     + _AVRO_RECORD + "')"),
    ("to_avro", "to_avro(CAST(NULL AS INT), '\"int\"')"),
    ("from_avro", "from_avro(X'02', '\"int\"')"),
    ("from_avro", "from_avro(X'046869', '\"string\"')"),
    ("from_avro", "from_avro(X'000A', '[\"int\", \"null\"]')"),
    ("from_avro", "from_avro(X'050202780402D80400', '" + _AVRO_RECORD + "')"),
    ("from_avro", "from_avro(X'FF', '\"int\"')"),
    ("from_avro", "from_avro(X'0202', '\"int\"')"),
    ("from_avro", "from_avro(X'FF', '\"int\"', map('mode', 'PERMISSIVE'))"),
    ("from_avro", "from_avro(X'02', '{\"type\": \"nope\"}')"),
    ("from_avro", "from_avro(CAST(NULL AS BINARY), '\"int\"')"),
]]

# Year-month intervals (INTERVAL YEAR, INTERVAL MONTH, INTERVAL YEAR TO
# MONTH): literals, make_ym_interval, arithmetic with numbers, DATEs and
# TIMESTAMPs, comparisons, casts, extract, to_json/to_csv and hash, at the
# int32 bounds (178956970-7 and -178956970-8), negative, NULL, month ends and
# leap days; then a seeded draw of make_ym_interval and of DATE + interval.
# A few day-time range literals (DAY TO SECOND) ride along.
_YM = "INTERVAL '1-2' YEAR TO MONTH"
_YM_MAX = "INTERVAL '178956970-7' YEAR TO MONTH"
_YM_MIN = "INTERVAL '-178956970-8' YEAR TO MONTH"
YM_CALLS = [("interval", f, sql) for f, sql in [
    ("literal", "INTERVAL '1' MONTH"), ("literal", "INTERVAL '2' YEAR"), ("literal", _YM),
    ("literal", "INTERVAL -'1-2' YEAR TO MONTH"), ("literal", "INTERVAL '-1-2' YEAR TO MONTH"),
    ("literal", "INTERVAL -'-1-2' YEAR TO MONTH"), ("literal", "INTERVAL '+1-2' YEAR TO MONTH"),
    ("literal", _YM_MAX), ("literal", _YM_MIN), ("literal", "INTERVAL '178956970-8' YEAR TO MONTH"),
    ("literal", "INTERVAL '1-12' YEAR TO MONTH"), ("literal", "INTERVAL '0-0' YEAR TO MONTH"),
    ("literal", "INTERVAL '2147483647' MONTH"), ("literal", "INTERVAL '-2147483648' MONTH"),
    ("literal", "INTERVAL '2147483648' MONTH"), ("literal", "INTERVAL '178956970' YEAR"),
    ("literal", "INTERVAL '178956971' YEAR"), ("literal", "INTERVAL 3 YEARS"),
    ("literal", "INTERVAL 14 MONTHS"), ("literal", "INTERVAL -'5' MONTH"), ("literal", "INTERVAL '1' YEAR TO MONTH"),
    ("literal", "INTERVAL '1 02:03:04' DAY TO SECOND"), ("literal", "INTERVAL '-1 02:03:04.5' DAY TO SECOND"),
    ("literal", "INTERVAL -'1 00:00:01' DAY TO SECOND"), ("literal", "INTERVAL '1 24:00:00' DAY TO SECOND"),
    ("typeof", "typeof(INTERVAL '1' MONTH)"), ("typeof", "typeof(INTERVAL '2' YEAR)"),
    ("typeof", f"typeof({_YM})"), ("typeof", "typeof(INTERVAL '1' YEAR + INTERVAL '1' MONTH)"),
    ("typeof", "typeof(INTERVAL '1' YEAR + INTERVAL '1' YEAR)"), ("typeof", "typeof(INTERVAL '1' YEAR * 2)"),
    ("typeof", "typeof(make_ym_interval(1, 2))"),
    ("make_ym_interval", "make_ym_interval(178956970, 7)"), ("make_ym_interval", "make_ym_interval(178956970, 8)"),
    ("make_ym_interval", "make_ym_interval(-178956970, -8)"), ("make_ym_interval", "make_ym_interval(-178956970, -9)"),
    ("make_ym_interval", "make_ym_interval(0, 2147483647)"), ("make_ym_interval", "make_ym_interval(0, -2147483648)"),
    ("make_ym_interval", "make_ym_interval(2147483647)"), ("make_ym_interval", "make_ym_interval(1, -13)"),
    ("make_ym_interval", "make_ym_interval(9223372036854775807, 0)"),
    ("make_ym_interval", "make_ym_interval(CAST(2 AS BIGINT), CAST(3 AS SMALLINT))"),
    ("+", f"{_YM} + INTERVAL '11' MONTH"), ("-", f"{_YM} - INTERVAL '2' YEAR"),
    ("+", f"{_YM_MAX} + INTERVAL '1' MONTH"), ("-", f"{_YM_MIN} - INTERVAL '1' MONTH"),
    ("+", f"{_YM_MAX} + {_YM_MIN}"), ("+", f"{_YM} + NULL"),
    ("*", f"{_YM} * 2"), ("*", f"2 * {_YM}"), ("*", f"{_YM} * -3"), ("*", f"{_YM} * 1.5"),
    ("*", f"{_YM} * {dbl('1.5')}"), ("*", f"INTERVAL '5' MONTH * {dbl('0.5')}"),
    ("*", f"INTERVAL '7' MONTH * {dbl('0.5')}"), ("*", "INTERVAL '7' MONTH * 0.5"),
    ("*", "INTERVAL '-7' MONTH * 0.5"), ("*", f"INTERVAL '1' MONTH * {dbl(chr(39) + 'NaN' + chr(39))}"),
    ("*", "INTERVAL '1' MONTH * 2147483647"), ("*", "INTERVAL '2' MONTH * 2147483647"),
    ("*", f"{_YM} * CAST(3 AS BIGINT)"), ("*", f"{_YM} * CAST(3000000000 AS BIGINT)"),
    ("*", f"{_YM} * CAST(2 AS TINYINT)"), ("*", f"{_YM} * NULL"),
    ("/", f"{_YM} / 2"), ("/", f"{_YM} / 3"), ("/", "INTERVAL '5' MONTH / 2"), ("/", "INTERVAL '-5' MONTH / 2"),
    ("/", f"{_YM} / 0"), ("/", f"{_YM} / {dbl('0.0')}"), ("/", f"{_YM} / {dbl('4.0')}"),
    ("/", "INTERVAL '5' MONTH / 2.0"), ("/", "INTERVAL '-5' MONTH / 2.0"), ("/", f"{_YM} / 0.0"),
    ("/", "INTERVAL '-2147483648' MONTH / -1"), ("/", f"{_YM} / CAST(-2 AS BIGINT)"),
    ("/", f"{_YM_MIN} / CAST(-1 AS BIGINT)"), ("/", f"{_YM} / {dbl('1e-300')}"),
    ("negative", f"-{_YM}"), ("negative", "-INTERVAL '-2147483648' MONTH"), ("negative", f"- {_YM_MAX}"),
    ("+", f"DATE '2024-01-31' + INTERVAL '1' MONTH"), ("+", "DATE '2024-02-29' + INTERVAL '1' YEAR"),
    ("-", "DATE '2023-03-31' - INTERVAL '1' MONTH"), ("-", "DATE '2024-03-31' - INTERVAL '1' MONTH"),
    ("+", "DATE '2024-02-29' + INTERVAL '4' YEAR"), ("+", f"DATE '2024-01-31' + {_YM}"),
    ("+", "INTERVAL '1' MONTH + DATE '2024-01-31'"), ("+", "DATE '9999-12-31' + INTERVAL '1' MONTH"),
    ("-", "DATE '0001-01-01' - INTERVAL '1' MONTH"), ("+", f"DATE '2024-01-31' + {_YM_MAX}"),
    ("-", f"DATE '2024-01-31' - {_YM_MIN}"), ("-", f"DATE '2024-01-31' - {_YM}"),
    ("+", f"{ts('2024-01-31 10:00:00')} + INTERVAL '1' MONTH"),
    ("-", f"{ts('2024-02-29 13:45:07.123456')} - INTERVAL '1-1' YEAR TO MONTH"),
    ("+", f"INTERVAL '12' MONTH + {ts('2024-02-29 13:45:07.123456')}"),
    ("+", f"{ts('9999-12-31 23:59:59.999999')} + {_YM_MAX}"),
    ("+", "TIMESTAMP_NTZ '2024-03-31 01:30:00' + INTERVAL '1' MONTH"),
    ("-", "TIMESTAMP_NTZ '2024-03-31 01:30:00' - INTERVAL '1' MONTH"),
    ("+", "INTERVAL '1' YEAR + TIMESTAMP_NTZ '2024-02-29 00:00:00'"),
    ("+", "'2024-01-31' + INTERVAL '1' MONTH"),
    ("=", "INTERVAL '1' YEAR = INTERVAL '12' MONTH"), (">", f"{_YM} > INTERVAL '1' YEAR"),
    ("<", f"{_YM_MIN} < {_YM_MAX}"), ("<=", "INTERVAL '-1' MONTH <= INTERVAL '0' YEAR"),
    ("=", "INTERVAL '1' YEAR = INTERVAL '1' DAY"),
    ("greatest", f"greatest({_YM}, INTERVAL '2' YEAR, INTERVAL '13' MONTH)"),
    ("least", f"least({_YM}, INTERVAL '2' YEAR, INTERVAL '13' MONTH)"),
    ("coalesce", f"coalesce(NULL, {_YM})"),
    ("cast", f"CAST({_YM} AS STRING)"), ("cast", "CAST(INTERVAL '-5' MONTH AS STRING)"),
    ("cast", "CAST(INTERVAL '3' YEAR AS STRING)"), ("cast", "CAST(INTERVAL '-3' YEAR AS STRING)"),
    ("cast", f"CAST({_YM_MIN} AS STRING)"), ("cast", "CAST(INTERVAL '-2147483648' MONTH AS STRING)"),
    ("cast", "CAST('1-2' AS INTERVAL YEAR TO MONTH)"), ("cast", "CAST(' -1-2 ' AS INTERVAL YEAR TO MONTH)"),
    ("cast", "CAST('1-12' AS INTERVAL YEAR TO MONTH)"), ("cast", "CAST('x' AS INTERVAL YEAR TO MONTH)"),
    ("cast", "CAST('14' AS INTERVAL MONTH)"), ("cast", "CAST('3' AS INTERVAL YEAR)"),
    ("cast", "CAST('1-2' AS INTERVAL YEAR)"), ("cast", "CAST('178956970-8' AS INTERVAL YEAR TO MONTH)"),
    ("cast", f"CAST({_YM} AS INTERVAL YEAR)"), ("cast", "CAST(INTERVAL '-14' MONTH AS INTERVAL YEAR)"),
    ("cast", "CAST(INTERVAL '3' YEAR AS INTERVAL YEAR TO MONTH)"),
    ("cast", "CAST(INTERVAL '3' YEAR AS INT)"), ("cast", "CAST(INTERVAL '14' MONTH AS BIGINT)"),
    ("cast", f"CAST({_YM} AS INT)"), ("cast", "CAST(14 AS INTERVAL MONTH)"), ("cast", "CAST(-3 AS INTERVAL YEAR)"),
    ("cast", "CAST(200000000 AS INTERVAL YEAR)"), ("cast", "CAST(INTERVAL '300' YEAR AS TINYINT)"),
    ("cast", "CAST(NULL AS INTERVAL YEAR TO MONTH)"), ("try_cast", "try_cast('x' AS INTERVAL YEAR TO MONTH)"),
    ("try_cast", "try_cast('2-3' AS INTERVAL YEAR TO MONTH)"),
    ("extract", f"extract(YEAR FROM {_YM})"), ("extract", f"extract(MONTH FROM {_YM})"),
    ("extract", "extract(YEAR FROM INTERVAL '-1-2' YEAR TO MONTH)"),
    ("extract", "extract(MONTH FROM INTERVAL '-1-2' YEAR TO MONTH)"),
    ("extract", f"extract(MONTH FROM {_YM_MIN})"), ("extract", f"extract(YEAR FROM {_YM_MIN})"),
    ("extract", "extract(MONTH FROM INTERVAL '2' YEAR)"), ("extract", "extract(YEAR FROM INTERVAL '14' MONTH)"),
    ("extract", f"extract(DAY FROM {_YM})"),
    ("date_part", f"date_part('YEAR', {_YM})"), ("date_part", "date_part('MONTH', INTERVAL '-14' MONTH)"),
    ("date_part", f"date_part('mon', {_YM})"), ("date_part", f"date_part('yrs', {_YM})"),
    ("typeof", f"typeof(extract(MONTH FROM {_YM}))"),
    ("to_json", f"to_json(named_struct('i', {_YM}))"), ("to_json", "to_json(named_struct('i', INTERVAL '3' YEAR))"),
    ("to_json", "to_json(named_struct('i', INTERVAL '-14' MONTH))"),
    ("to_json", f"to_json(named_struct('i', {_YM_MIN}))"),
    ("to_json", f"to_json(array({_YM}, NULL))"),
    ("to_csv", f"to_csv(named_struct('i', {_YM}, 'n', 1))"),
    ("to_csv", "to_csv(named_struct('i', INTERVAL '-3' YEAR))"),
    ("hash", f"hash({_YM})"), ("hash", "hash(INTERVAL '-1' MONTH)"), ("xxhash64", f"xxhash64({_YM})"),
    ("abs", "abs(INTERVAL '-1-2' YEAR TO MONTH)"), ("abs", f"abs({_YM_MIN})"),
]]


def _ym_draws(seed=4345):
    rng = random.Random(seed)
    parts = ["0", "1", "-1", "11", "12", "-13", "NULL", "2", "100", "-7"]
    days = ["2024-01-31", "2024-02-29", "2023-02-28", "2000-03-31", "1970-01-01", "0001-01-31",
            "9999-12-31", "2024-12-31"]
    out = []
    for _ in range(20):
        y, m = rng.choice(parts), rng.choice(parts)
        out.append(("interval", "make_ym_interval", f"make_ym_interval({y}, {m})"))
    for _ in range(20):
        d, y, m, op = rng.choice(days), rng.choice(parts[:6]), rng.choice(parts[:6]), rng.choice("+-")
        out.append(("interval", op, f"DATE '{d}' {op} make_ym_interval({y}, {m})"))
    return out


YM_CALLS += _ym_draws()


# The operators docs/sql.md lists that no other call covers: null-safe
# equality <=> (literals, NULLs, mixed types, NaN and -0.0, arrays and
# structs, a map), the other spellings of (in)equality, ||, the three-valued
# AND, OR and NOT, IN, BETWEEN, infix LIKE, RLIKE and REGEXP, IS [NOT] NULL,
# both forms of CASE and unary minus.
_NAN = dbl("'NaN'")
OPERATOR_CALLS = [("operator", op, sql) for op, sql in [
    ("<=>", "1 <=> 1"), ("<=>", "1 <=> NULL"), ("<=>", "NULL <=> NULL"), ("<=>", "NULL <=> 2"),
    ("<=>", "1 <=> CAST(1 AS BIGINT)"), ("<=>", "1 <=> '1'"), ("<=>", "'a' <=> 'a'"),
    ("<=>", "'a' <=> NULL"), ("<=>", "CAST(NULL AS STRING) <=> NULL"),
    ("<=>", f"{_NAN} <=> {_NAN}"), ("<=>", f"{_NAN} <=> 1"), ("<=>", f"{dbl('0.0')} <=> {dbl('-0.0')}"),
    ("<=>", "1.5BD <=> " + dbl("1.5")), ("<=>", "true <=> 'true'"),
    ("<=>", "DATE '2024-02-29' <=> " + ts("2024-02-29 00:00:00")),
    ("<=>", "array(1, NULL) <=> array(1, NULL)"), ("<=>", "array(1, 2) <=> array(1, 3)"),
    ("<=>", f"array({_NAN}) <=> array({_NAN})"), ("<=>", "CAST(NULL AS ARRAY<INT>) <=> array(1)"),
    ("<=>", "named_struct('a', 1, 'b', NULL) <=> named_struct('a', 1, 'b', NULL)"),
    ("<=>", "named_struct('a', 1) <=> named_struct('a', 2)"), ("<=>", "map('a', 1) <=> map('a', 1)"),
    ("<=>", "1 + 1 <=> 2"), ("<=>", "NOT NULL <=> NULL"),
    ("==", "1 == 1"), ("==", "1 == NULL"), ("==", "'a' == 'A'"), ("<>", "'a' <> 'b'"),
    ("<>", "NULL <> 1"), ("!=", "1 != 2"), ("!=", f"{_NAN} != {_NAN}"), (">=", "2 >= 2"),
    (">=", f"{_NAN} >= 1"), (">=", "'b' >= 'abc'"),
    ("||", "'abc' || 'd'"), ("||", "'a' || NULL"), ("||", "1 || 2"), ("||", "array(1) || array(2)"),
    ("and", "true AND NULL"), ("and", "false AND NULL"), ("or", "true OR NULL"),
    ("or", "false OR NULL"), ("not", "NOT NULL"), ("not", "NOT true"),
    ("in", "1 IN (1, 2)"), ("in", "3 IN (1, NULL)"), ("in", "NULL IN (1)"), ("in", "1 NOT IN (2, NULL)"),
    ("in", "'a' IN ('a', 'b')"), ("in", "1 IN ('1', 2)"), ("in", f"{_NAN} IN ({_NAN})"),
    ("between", "2 BETWEEN 1 AND 3"), ("between", "NULL BETWEEN 1 AND 2"),
    ("between", "5 NOT BETWEEN 1 AND 3"), ("between", "'b' BETWEEN 'a' AND 'c'"),
    ("between", "2 BETWEEN 3 AND 1"),
    ("like", "'abc' LIKE 'a%'"), ("like", "'abc' NOT LIKE '_b_'"), ("like", "NULL LIKE 'a'"),
    ("rlike", "'abc' RLIKE '^a'"), ("regexp", "'abc' REGEXP 'c$'"),
    ("is null", "NULL IS NULL"), ("is null", "1 IS NOT NULL"),
    ("case", "CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END"),
    ("case", "CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END"),
    ("case", "CASE NULL WHEN NULL THEN 1 ELSE 0 END"), ("case", "CASE WHEN NULL THEN 1 END"),
    ("case", "CASE 1 WHEN 1.5BD THEN 'x' ELSE 'y' END"),
    ("-", "-(5)"), ("-", "-CAST(-2147483648 AS INT)"), ("-", "-" + _NAN),
]]

# An interval inside an ARRAY, MAP or STRUCT cast to STRING, and typeof of
# the day-time ranges: Spark writes and names each by its fields.
INTERVAL_TEXT_CALLS = [("interval", f, sql) for f, sql in [
    ("cast", "CAST(array(INTERVAL '1-2' YEAR TO MONTH) AS STRING)"),
    ("cast", "CAST(array(INTERVAL '2' YEAR, NULL) AS STRING)"),
    ("cast", "CAST(map('k', INTERVAL '-14' MONTH) AS STRING)"),
    ("cast", "CAST(named_struct('i', INTERVAL '-1-2' YEAR TO MONTH) AS STRING)"),
    ("cast", "CAST(array(array(INTERVAL '3' MONTH)) AS STRING)"),
    ("cast", "CAST(array(INTERVAL '1 02:03:04.5' DAY TO SECOND) AS STRING)"),
    ("cast", "CAST(array(INTERVAL '-1 02:03:04.000001' DAY TO SECOND) AS STRING)"),
    ("cast", "CAST(map(1, INTERVAL '0 00:00:00' DAY TO SECOND) AS STRING)"),
    ("cast", "CAST(array(INTERVAL '02:03' HOUR TO MINUTE) AS STRING)"),
    ("cast", "CAST(named_struct('a', INTERVAL '3' HOUR) AS STRING)"),
    ("typeof", "typeof(INTERVAL '02:03' HOUR TO MINUTE)"),
    ("typeof", "typeof(INTERVAL '1 2' DAY TO HOUR)"), ("typeof", "typeof(INTERVAL '1 2:3' DAY TO MINUTE)"),
    ("typeof", "typeof(INTERVAL '2:3:4' HOUR TO SECOND)"),
    ("typeof", "typeof(INTERVAL '10:20' MINUTE TO SECOND)"), ("typeof", "typeof(INTERVAL '3' HOUR)"),
    ("typeof", "typeof(INTERVAL '3' MINUTE)"), ("typeof", "typeof(INTERVAL '3' SECOND)"),
    ("typeof", "typeof(INTERVAL '3' DAY)"), ("typeof", "typeof(INTERVAL '1 02:03:04' DAY TO SECOND)"),
    ("typeof", "typeof(array(INTERVAL '02:03' HOUR TO MINUTE))"),
]]
