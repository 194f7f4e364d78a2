# Generates the SQL parser from the grammar with the ANTLR tool, through a cache
# of earlier outputs: the tool is a Java program that takes 10 to 30 seconds on
# a loaded machine, the largest part of a rebuild from an empty build directory
# when ccache holds every object. The cache is keyed by the grammar's text, the
# tool's options and the tool itself (its launcher and the jars it names, so a
# new ANTLR version misses), and an entry holds exactly what the tool wrote.
#
# Run as a script (cmake -P) by grammar/CMakeLists.txt, with:
#   ANTLR4_TOOL   the tool's launcher
#   GRAMMAR       the .g4 file
#   OUT           the directory the generated files go to
#   OUTPUTS       the generated files the build needs (;-separated paths in OUT)
#   OPTIONS       the tool's options (;-separated)
#   CACHE_DIR     the cache's directory; empty: no cache, the tool always runs
cmake_minimum_required(VERSION 3.25)

foreach(var ANTLR4_TOOL GRAMMAR OUT OUTPUTS)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "GenerateParser.cmake: ${var} is not set")
  endif()
endforeach()

# At most this many grammars are kept; the least recently used go first.
set(RTSQL_PARSER_CACHE_ENTRIES 16)

# Runs the tool into `dir`. On failure (the tool prints the grammar's errors) a
# directory of the cache's own (`remove_on_failure`) is removed first.
function(run_tool dir remove_on_failure)
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  execute_process(
    COMMAND "${ANTLR4_TOOL}" ${OPTIONS} -Xexact-output-dir -o "${dir}" "${GRAMMAR}"
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    if(remove_on_failure)
      file(REMOVE_RECURSE "${dir}")
    endif()
    message(FATAL_ERROR "the ANTLR tool failed on ${GRAMMAR} (${result})")
  endif()
endfunction()

# Copies every file of `from` to `to` and gives each the current time, so that
# the build sees outputs newer than the grammar.
function(copy_outputs from to)
  file(MAKE_DIRECTORY "${to}")
  file(GLOB files LIST_DIRECTORIES false "${from}/*")
  foreach(f IN LISTS files)
    get_filename_component(name "${f}" NAME)
    if(name STREQUAL ".used")
      continue()
    endif()
    file(COPY_FILE "${f}" "${to}/${name}")
    file(TOUCH_NOCREATE "${to}/${name}")
  endforeach()
endfunction()

if("${CACHE_DIR}" STREQUAL "")
  run_tool("${OUT}" FALSE)
  return()
endif()

# The key: the grammar, the options, and the tool with every jar its launcher
# names (Debian's antlr4 is a shell script that puts jars on a class path).
file(SHA256 "${GRAMMAR}" grammar_hash)
file(SHA256 "${ANTLR4_TOOL}" tool_hash)
set(key_text "grammar ${grammar_hash}\noptions ${OPTIONS}\ntool ${tool_hash}\n")
file(READ "${ANTLR4_TOOL}" launcher LIMIT 65536)
string(REGEX MATCHALL "[^ \t\n:=\"']+\\.jar" jars "${launcher}")
list(REMOVE_DUPLICATES jars)
foreach(jar IN LISTS jars)
  if(EXISTS "${jar}" AND NOT IS_DIRECTORY "${jar}")
    file(SHA256 "${jar}" jar_hash)
    string(APPEND key_text "jar ${jar} ${jar_hash}\n")
  endif()
endforeach()
string(SHA256 key "${key_text}")
set(entry "${CACHE_DIR}/${key}")

set(complete TRUE)
foreach(output IN LISTS OUTPUTS)
  get_filename_component(name "${output}" NAME)
  if(NOT EXISTS "${entry}/${name}")
    set(complete FALSE)
  endif()
endforeach()

if(complete)
  message(STATUS "The SQL parser for this grammar is in the cache (${entry})")
  copy_outputs("${entry}" "${OUT}")
  # Marks the entry as used, for the pruning below.
  file(TOUCH "${entry}/.used")
  return()
endif()

# A miss: the tool writes into a directory of this run's own, which then
# becomes the entry with one rename, so that another build reading or filling
# the same entry at the same time never sees half of it.
string(RANDOM LENGTH 12 suffix)
set(staging "${CACHE_DIR}/.tmp-${key}-${suffix}")
file(MAKE_DIRECTORY "${CACHE_DIR}")
run_tool("${staging}" TRUE)
copy_outputs("${staging}" "${OUT}")
file(TOUCH "${staging}/.used")
file(RENAME "${staging}" "${entry}" RESULT renamed)
if(NOT renamed EQUAL 0)
  # Another build stored the same entry first (a rename never replaces a
  # directory that holds files).
  file(REMOVE_RECURSE "${staging}")
endif()

# Keeps the cache to RTSQL_PARSER_CACHE_ENTRIES entries (about a megabyte each).
file(GLOB entries LIST_DIRECTORIES true "${CACHE_DIR}/*")
set(stamped "")
foreach(e IN LISTS entries)
  if(IS_DIRECTORY "${e}" AND EXISTS "${e}/.used")
    file(TIMESTAMP "${e}/.used" used "%Y%m%d%H%M%S" UTC)
    list(APPEND stamped "${used}|${e}")
  endif()
endforeach()
list(SORT stamped ORDER DESCENDING)
list(LENGTH stamped count)
if(count GREATER RTSQL_PARSER_CACHE_ENTRIES)
  list(SUBLIST stamped ${RTSQL_PARSER_CACHE_ENTRIES} -1 stale)
  foreach(s IN LISTS stale)
    string(REGEX REPLACE "^[0-9]+\\|" "" path "${s}")
    file(REMOVE_RECURSE "${path}")
  endforeach()
endif()
