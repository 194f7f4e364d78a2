#!/usr/bin/env bash
# The stateless benchmark: a filter + projection flow, its end-to-end latency at
# 1,000 and 10,000 records/s next to the broker's floor. Kept as a name of its
# own; it is `bench/scenarios/scenario.sh stateless` with the same arguments:
#
#   bench/scenarios/stateless.sh [--bootstrap HOST:PORT] [--rates "1000 10000"]
#                      [--seconds S] [--warmup S] [--size BYTES] [--keys K]
exec "$(dirname "$0")/scenario.sh" stateless "$@"
