# The one home of what the scripts running a test service (kafka.sh,
# apicurio.sh, kinesalite.sh) do alike: a process known by its pid file, and
# stopped with SIGTERM, a bounded wait, then SIGKILL. Sourced, not run; the
# caller sets PIDFILE and defines log().

# The pid in PIDFILE when that process is alive; else returns 1.
running_pid() {
  if [ -f "$PIDFILE" ]; then
    local pid
    pid="$(cat "$PIDFILE")"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      echo "$pid"
      return 0
    fi
  fi
  return 1
}

# stop_service NAME SECONDS: SIGTERM to the running process, up to SECONDS for
# it to exit, then SIGKILL; the pid file is removed either way.
stop_service() {
  local name="$1" seconds="$2" pid i
  pid="$(running_pid)" || { rm -f "$PIDFILE"; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < seconds * 5; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "${name} did not stop in ${seconds}s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
}
