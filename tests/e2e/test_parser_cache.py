"""The generated parser's cache (cmake/GenerateParser.cmake): an unchanged
grammar is restored without running the ANTLR tool, and anything the output
depends on (the grammar, the tool's options, the tool and its jars) runs it
again. A stand-in tool, a shell script that writes the files and counts its
runs, takes the place of the Java one, so the test needs neither Java nor a
build."""

import os
import pathlib
import subprocess

SOURCE = pathlib.Path(os.environ.get("RTSQL_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
SCRIPT = SOURCE / "cmake" / "GenerateParser.cmake"
OUTPUTS = ["RtSqlParser.cpp", "RtSqlParser.h"]


def make_tool(tmp, jar_text="v1"):
    """A launcher like Debian's antlr4: names a jar on its class path, writes
    each output with the grammar's text in it, counts its runs, and fails when
    the grammar says FAIL."""
    jar = tmp / "antlr-stand-in.jar"
    jar.write_text(jar_text)
    tool = tmp / "antlr4"
    tool.write_text(
        "#!/bin/sh\n"
        f"CLASSPATH={jar}:/nonexistent/other.jar\n"
        f'echo run >>"{tmp}/runs"\n'
        'for last; do :; done\n'  # the grammar is the last argument
        'grep -q FAIL "$last" && exit 3\n'
        'while [ "$1" != "-o" ]; do shift; done; out="$2"\n'
        f'for f in {" ".join(OUTPUTS)} RtSql.tokens; do\n'
        '  { echo "$f"; cat "$last"; } >"$out/$f"\n'
        "done\n")
    tool.chmod(0o755)
    return tool


def generate(tmp, tool, grammar, cache, out, options="-Dlanguage=Cpp;-visitor"):
    outputs = ";".join(str(out / f) for f in OUTPUTS)
    return subprocess.run(
        ["cmake", f"-DANTLR4_TOOL={tool}", f"-DGRAMMAR={grammar}", f"-DOUT={out}",
         f"-DOUTPUTS={outputs}", f"-DOPTIONS={options}", f"-DCACHE_DIR={cache}",
         "-P", str(SCRIPT)],
        capture_output=True, text=True, timeout=120)


def runs(tmp):
    path = tmp / "runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def entries(cache):
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def test_unchanged_grammar_is_restored_without_the_tool(tmp_path):
    tool = make_tool(tmp_path)
    grammar = tmp_path / "RtSql.g4"
    grammar.write_text("grammar RtSql; one: 'a';\n")
    cache = tmp_path / "cache"

    first = generate(tmp_path, tool, grammar, cache, tmp_path / "out1")
    assert first.returncode == 0, first.stderr
    assert runs(tmp_path) == 1
    assert len(entries(cache)) == 1

    # A build directory removed and made again: the same files, no tool run.
    second = generate(tmp_path, tool, grammar, cache, tmp_path / "out2")
    assert second.returncode == 0, second.stderr
    assert runs(tmp_path) == 1
    for f in OUTPUTS + ["RtSql.tokens"]:
        assert (tmp_path / "out2" / f).read_text() == (tmp_path / "out1" / f).read_text()
    assert not (tmp_path / "out2" / ".used").exists()


def test_grammar_options_and_tool_each_key_the_cache(tmp_path):
    tool = make_tool(tmp_path)
    grammar = tmp_path / "RtSql.g4"
    grammar.write_text("grammar RtSql; one: 'a';\n")
    cache = tmp_path / "cache"
    assert generate(tmp_path, tool, grammar, cache, tmp_path / "o").returncode == 0
    assert runs(tmp_path) == 1

    grammar.write_text("grammar RtSql; one: 'b';\n")
    assert generate(tmp_path, tool, grammar, cache, tmp_path / "o").returncode == 0
    assert runs(tmp_path) == 2
    assert "'b'" in (tmp_path / "o" / "RtSqlParser.h").read_text()

    assert generate(tmp_path, tool, grammar, cache, tmp_path / "o",
                    options="-Dlanguage=Cpp;-no-visitor").returncode == 0
    assert runs(tmp_path) == 3

    # Another ANTLR version: the launcher is the same, one of its jars is not.
    make_tool(tmp_path, jar_text="v2")
    assert generate(tmp_path, tool, grammar, cache, tmp_path / "o").returncode == 0
    assert runs(tmp_path) == 4
    assert len(entries(cache)) == 4

    # Back to the first grammar: still in the cache.
    grammar.write_text("grammar RtSql; one: 'a';\n")
    make_tool(tmp_path, jar_text="v1")
    assert generate(tmp_path, tool, grammar, cache, tmp_path / "o").returncode == 0
    assert runs(tmp_path) == 4
    assert "'a'" in (tmp_path / "o" / "RtSqlParser.h").read_text()


def test_a_failing_tool_leaves_nothing_in_the_cache(tmp_path):
    tool = make_tool(tmp_path)
    grammar = tmp_path / "RtSql.g4"
    grammar.write_text("grammar RtSql; FAIL\n")
    cache = tmp_path / "cache"
    result = generate(tmp_path, tool, grammar, cache, tmp_path / "o")
    assert result.returncode != 0
    assert "the ANTLR tool failed" in result.stderr
    assert entries(cache) == []


def test_the_cache_keeps_the_sixteen_grammars_used_last(tmp_path):
    tool = make_tool(tmp_path)
    grammar = tmp_path / "RtSql.g4"
    cache = tmp_path / "cache"
    for i in range(18):
        grammar.write_text(f"grammar RtSql; one: '{i}';\n")
        assert generate(tmp_path, tool, grammar, cache, tmp_path / "o").returncode == 0
    assert runs(tmp_path) == 18
    assert len(entries(cache)) == 16


def test_no_cache_directory_runs_the_tool_every_time(tmp_path):
    tool = make_tool(tmp_path)
    grammar = tmp_path / "RtSql.g4"
    grammar.write_text("grammar RtSql; one: 'a';\n")
    for _ in range(2):
        assert generate(tmp_path, tool, grammar, "", tmp_path / "o").returncode == 0
    assert runs(tmp_path) == 2
    assert (tmp_path / "o" / "RtSqlParser.cpp").exists()
