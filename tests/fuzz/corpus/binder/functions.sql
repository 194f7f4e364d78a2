SELECT abs(-3), abs(-2.5), round(2.567, 2), round(2.5), floor(2.7), ceil(2.1), ceiling(2.1);
SELECT round(-2.5), sqrt(16), exp(0), sign(-2), signum(3.5), ln(1), log10(100), log2(8);
SELECT pow(2, 10), power(2, 0.5), mod(7, 3), mod(-7, 3), pmod(-7, 3);
SELECT sqrt(-1), ln(0), mod(5, 0), pmod(5, 0);
SELECT abs(NULL), round(NULL), floor(NULL), ceil(NULL), sqrt(NULL), exp(NULL), sign(NULL),
       signum(NULL), ln(NULL), log10(NULL), log2(NULL), pow(NULL, 2), power(2, NULL), mod(NULL, 3), pmod(7, NULL);
SELECT ceiling(NULL), round(NULL, 2);
SELECT lower('AbC'), lcase('AB'), upper('ab'), ucase('ab'), length('héllo'), char_length('abc'), character_length('');
SELECT substring('hello', 2, 3), substr('hello', -3), substring('hello', 0), substr('hello', 2), substring('hello', 10);
SELECT concat('a', 'b', 'c'), concat('a', NULL), concat_ws('-', 'a', NULL, 'c'), concat_ws('-', NULL);
SELECT trim('  x  '), btrim('xxaxx', 'x'), ltrim('  x '), rtrim(' x  '), replace('aXbX', 'X', 'y');
SELECT instr('hello', 'l'), instr('hello', 'z'), left('hello', 2), right('hello', 2),
       startswith('hello', 'he'), startswith('hello', 'lo'), endswith('hello', 'lo'), endswith('hello', 'he');
SELECT lower(NULL), lcase(NULL), upper(NULL), ucase(NULL), length(NULL), char_length(NULL), character_length(NULL), substring(NULL, 1, 2);
SELECT substr(NULL, 1), concat(NULL), concat_ws(NULL, 'a'), trim(NULL), btrim(NULL), ltrim(NULL), rtrim(NULL);
SELECT replace(NULL, 'a', 'b'), instr(NULL, 'a'), left(NULL, 1), right(NULL, 1), startswith(NULL, 'a'), endswith('a', NULL);
SELECT regexp_extract('foo123bar', '([0-9]+)', 1), regexp_extract('foo123bar', '([a-z]+)([0-9]+)', 2),
       regexp_extract('abc', '([0-9]+)', 1), regexp_replace('a1b22c', '[0-9]+', '#'), split('a,b,c', ',')[1];
SELECT split('a,b,c', ','), size(split('a1b2c', '[0-9]'));
SELECT rlike('abc', 'b'), regexp_like('abc', '^a'), regexp('abc', 'z'), rlike('abc', '^b');
SELECT regexp_extract(NULL, 'a', 0), regexp_replace(NULL, 'a', 'b'), split(NULL, ','), rlike(NULL, 'a'), regexp_like('a', NULL), regexp(NULL, 'a');
SELECT base64('hi'), CAST(unbase64('aGk=') AS STRING), hex('AB'), hex(255), md5('abc');
SELECT sha1('abc'), sha('abc'), sha2('abc', 256);
SELECT sha2('abc', 0), sha2('abc', 7);
SELECT hash('abc'), hash(1), hash(NULL);
SELECT base64(NULL), unbase64(NULL), hex(NULL), md5(NULL), sha1(NULL), sha(NULL), sha2(NULL, 256);
SELECT current_timestamp() IS NOT NULL, now() IS NOT NULL, localtimestamp() IS NOT NULL, current_timestamp IS NOT NULL;
SELECT now() > TIMESTAMP '2024-01-01 00:00:00', unix_millis(now()) > 1704067200000;
SELECT unix_millis(TIMESTAMP '2024-05-01 10:00:00'), unix_micros(TIMESTAMP '2024-05-01 10:00:00.5'),
       unix_seconds(TIMESTAMP '2024-05-01 10:00:00'), unix_timestamp(TIMESTAMP '2024-05-01 10:00:00'),
       unix_timestamp('2024-05-01 10:00:00');
SELECT timestamp_millis(1714557600000), timestamp_micros(1714557600000001), timestamp_seconds(1714557600);
