#!/usr/bin/env bash
# Stop the radosgw cluster that scripts/radosgw/start.sh started in DIR, then empty DIR.
# Usage: scripts/radosgw/stop.sh [DIR]
# Kills only the PIDs listed in DIR/pids, and only while their command line still names
# DIR/ceph.conf (so a recycled PID is never hit). Never kills by process name.
# MINK_RADOSGW_KEEP_FILES=1 keeps DIR's files (start.sh uses it on failure, to keep the logs).
set -euo pipefail

DIR="${1:-${MINK_RADOSGW_DIR:-/tmp/mink-radosgw}}"
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
DIR="${DIR%/}"
CONF="$DIR/ceph.conf"
GRACE="${MINK_RADOSGW_STOP_TIMEOUT:-10}"

log() { echo "radosgw/stop: $*" >&2; }

# True while PID runs (not a zombie) and was started with our ceph.conf.
ours() {
  local pid="$1" state arg
  [[ -r "/proc/$pid/stat" ]] || return 1
  state="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [[ -n "$state" && "$state" != Z && "$state" != X ]] || return 1
  while IFS= read -r -d '' arg; do [[ "$arg" == "$CONF" ]] && return 0; done \
    <"/proc/$pid/cmdline" 2>/dev/null
  return 1
}

# Stop one PID: TERM, wait up to GRACE seconds, then KILL.
stop_one() {
  local pid="$1" deadline=$((SECONDS + GRACE))
  kill -TERM "$pid" 2>/dev/null || return 0
  while ours "$pid"; do
    if ((SECONDS >= deadline)); then
      log "$pid still running after ${GRACE}s, sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do ours "$pid" && sleep 0.2; done
      return 0
    fi
    sleep 0.1
  done
}

# Newest first (radosgw, then the OSD, then the monitor): radosgw's shutdown still talks to
# the OSD and hangs if the OSD is already gone.
if [[ -f "$DIR/pids" ]]; then
  mapfile -t listed < <(tac "$DIR/pids")
  for pid in "${listed[@]}"; do
    if [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid"; then
      log "stopping $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-40))"
      stop_one "$pid"
    fi
  done
fi

if [[ "${MINK_RADOSGW_KEEP_FILES:-0}" != 1 && -d "$DIR" ]]; then
  # Only empty a directory that start.sh laid out, never an arbitrary one.
  if [[ -f "$CONF" || -f "$DIR/pids" ]]; then
    find "$DIR" -mindepth 1 -delete
  else
    log "$DIR does not look like a start.sh directory; leaving its files alone"
  fi
elif [[ -f "$DIR/pids" ]]; then
  : >"$DIR/pids" # the processes are gone; a later start.sh need not stop them again
fi
