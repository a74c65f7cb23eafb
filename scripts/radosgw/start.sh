#!/usr/bin/env bash
# Start a throwaway single-host Ceph radosgw (1 mon, 1 memstore OSD, 1 rgw) on 127.0.0.1.
# Usage: scripts/radosgw/start.sh [DIR] [PORT]   then: set -a; . DIR/env; set +a
# Everything lives under DIR; scripts/radosgw/stop.sh DIR kills exactly the PIDs in DIR/pids.
set -euo pipefail

DIR="${1:-${MINK_RADOSGW_DIR:-/tmp/mink-radosgw}}"
PORT="${2:-${MINK_RADOSGW_PORT:-7480}}"
MON_PORT="${MINK_RADOSGW_MON_PORT:-$((PORT + 10000))}"
BUCKET="${MINK_RADOSGW_BUCKET:-mink-test}"
REGION="us-east-1" # radosgw's default zonegroup accepts any SigV4 scope region; use the S3 default
ACCESS_KEY="minkaccesskey" SECRET_KEY="minksecretkey"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac
DIR="${DIR%/}"
CONF="$DIR/ceph.conf"

log() { echo "radosgw/start: $*" >&2; }

# --- 1. packages (only if missing) ---------------------------------------------------------------
need=()
for b in ceph-mon:ceph-mon ceph-osd:ceph-osd radosgw:radosgw radosgw-admin:radosgw ceph:ceph-common \
  monmaptool:ceph-common curl:curl; do
  command -v "${b%%:*}" >/dev/null 2>&1 || need+=("${b#*:}")
done
if ((${#need[@]})); then
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# --- 2. a previous run in the same dir: stop exactly its PIDs -------------------------------------
if [[ -f "$DIR/pids" || -f "$DIR/ceph.conf" ]]; then
  log "stopping the previous run in $DIR"
  "$HERE/stop.sh" "$DIR"
fi
for p in "$PORT" "$MON_PORT"; do # a connect that succeeds means someone already listens there
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then log "port $p is already in use"; exit 1; fi
done
DEADLINE=$((SECONDS + ${MINK_RADOSGW_TIMEOUT:-90})) # readiness budget, after any install
mkdir -p "$DIR"/{mon.a,osd.0,rgw,run,log,crash}
: >"$DIR/pids"

# On any failure: show the logs, stop what we started (files are kept for inspection).
on_exit() {
  local rc=$?
  ((rc == 0)) && return
  log "FAILED (exit $rc); log tails:"
  for f in "$DIR"/log/*; do [[ -f "$f" ]] && { echo "=== $f" >&2; tail -n 20 "$f" >&2; }; done
  MINK_RADOSGW_KEEP_FILES=1 "$HERE/stop.sh" "$DIR" || true
  exit "$rc"
}
trap on_exit EXIT

FSID="$(cat /proc/sys/kernel/random/uuid)"
cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MON_PORT]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
# No cephx: a throwaway test cluster, and no keyrings to create or distribute.
auth cluster required = none
auth service required = none
auth client required = none
# With auth none there is no session key, so msgr2 "secure" mode (the default first choice
# for clients) cannot be negotiated and radosgw hangs until client_mount_timeout (300 s).
ms mon client mode = crc
ms client mode = crc
# One OSD on one host: size-1 pools, few PGs, replicas chosen per OSD rather than per host.
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
# radosgw creates ~8 pools, one osdmap change each; the default 1 s proposal batching made
# start take ~15 s instead of ~3 s.
paxos propose interval = 0.1
# Keep every path under $DIR so two runs cannot collide and nothing touches /etc or /var/lib/ceph.
run dir = $DIR/run
admin socket = $DIR/run/\$cluster-\$name.asok
log file = $DIR/log/\$name.log
mon cluster log file = default=$DIR/log/\$cluster.\$channel.log cluster=$DIR/log/\$cluster.log
crash dir = $DIR/crash
keyring = $DIR/keyring
mon data = $DIR/mon.\$id
osd data = $DIR/osd.\$id
rgw data = $DIR/rgw
[osd]
# memstore keeps objects in RAM: no disk to prepare, fast, and gone when the process ends.
osd objectstore = memstore
# The capacity it reports (default 1 GiB); RAM is only used as objects are written.
memstore device bytes = 2147483648
# Do not wait up to 5 s on TERM for the monitor to acknowledge: nothing outlives this cluster.
osd fast shutdown notify mon = false
[client.rgw.mink]
# tcp_nodelay: without it a GET's body waits on the client's delayed ACK (p50 44 ms instead of 3 ms here).
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
EOF

# Start a daemon in the foreground (-f) as a background job and record its PID.
spawn() {
  local name="$1"; shift
  "$@" -f -c "$CONF" >>"$DIR/log/$name.out" 2>&1 </dev/null &
  echo "$!" >>"$DIR/pids"
}
# Retry a command until it succeeds or the deadline passes.
wait_for() {
  local what="$1"; shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < DEADLINE)) || { log "timed out waiting for $what"; return 1; }
    sleep 0.5
  done
}
CEPH=(ceph -c "$CONF" --connect-timeout 10)

# --- 3. monitor --------------------------------------------------------------------------------
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null
ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" >"$DIR/log/mkfs-mon.out" 2>&1
spawn mon.a ceph-mon -i a
wait_for "the monitor" "${CEPH[@]}" mon stat

# --- 4. one memstore OSD -------------------------------------------------------------------------
OSD_UUID="$(cat /proc/sys/kernel/random/uuid)"
OSD_ID="$("${CEPH[@]}" osd new "$OSD_UUID")"
[[ "$OSD_ID" == 0 ]] || { log "unexpected OSD id '$OSD_ID'"; exit 1; }
ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$OSD_UUID" >"$DIR/log/mkfs-osd.out" 2>&1
spawn osd.0 ceph-osd -i 0
osd_up() { "${CEPH[@]}" osd dump | grep '^osd\.0 up'; } # no grep -q: SIGPIPE + pipefail
wait_for "the OSD" osd_up

# --- 5. radosgw (creates its pools on first start) -----------------------------------------------
# --client_mount_timeout 30: fail in 30 s instead of 300 s if the monitor is unreachable.
spawn rgw radosgw -n client.rgw.mink --client_mount_timeout 30
rgw_up() { [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")" == 200 ]]; }
wait_for "radosgw on port $PORT" rgw_up

radosgw-admin -c "$CONF" user create --uid mink --display-name mink \
  --access-key "$ACCESS_KEY" --secret "$SECRET_KEY" >"$DIR/log/user-create.out" 2>&1

# --- 6. the bucket (path-style URL, SigV4) ---------------------------------------------------------
put_bucket() {
  local code
  # curl 7.88 does not send x-amz-content-sha256 by itself; radosgw then answers 403
  # SignatureDoesNotMatch. With the header present curl signs it.
  code="$(curl -s -o "$DIR/log/bucket-create.out" -w '%{http_code}' -X PUT \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
    --aws-sigv4 "aws:amz:$REGION:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
    "http://127.0.0.1:$PORT/$BUCKET")"
  [[ "$code" == 200 ]]
}
wait_for "bucket $BUCKET" put_bucket

cat >"$DIR/env" <<EOF
MINK_TEST_S3_ENDPOINT=http://127.0.0.1:$PORT
MINK_TEST_S3_BUCKET=$BUCKET
MINK_TEST_S3_REGION=$REGION
MINK_TEST_S3_ACCESS_KEY_ID=$ACCESS_KEY
MINK_TEST_S3_SECRET_ACCESS_KEY=$SECRET_KEY
EOF
log "ready in ${SECONDS}s: http://127.0.0.1:$PORT bucket $BUCKET (env in $DIR/env, pids in $DIR/pids)"
