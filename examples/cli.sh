#!/usr/bin/env bash
# The mink CLI in a script: list the nodes, create a stream and append to it, move it to another node
# with a transfer, wait until the move is done, read the stream back from its new owner, and list the
# streams under its prefix.
#
#   bash examples/cli.sh [stream]       # default demo/cli
#
# MINK_URL (default http://127.0.0.1:8787) and MINK_ADMIN_TOKEN (default mink-dev-admin, the token of
# `npm run dev`) are read by the CLI itself; MINK_TOKEN, when set, goes with the stream requests
# (AUTH_MODE=token). MINK_CLI is the command (default `npx mink`, which runs this repository's bin/mink.js;
# `mink` once the package is installed, see the README).
set -euo pipefail
export MINK_URL=${MINK_URL:-http://127.0.0.1:8787}
export MINK_ADMIN_TOKEN=${MINK_ADMIN_TOKEN:-mink-dev-admin}
stream=${1:-demo/cli}
auth=()
if [[ -n ${MINK_TOKEN:-} ]]; then auth=(-H "Authorization: Bearer $MINK_TOKEN"); fi
mink() { ${MINK_CLI:-npx mink} "$@"; }
# One field of a JSON document on stdin, with a JavaScript expression over it (`j`).
field() { node -e 'const j = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(eval(process.argv[1]))' "$1"; }

# #region readme:cli
mink nodes
curl -sSfL "${auth[@]}" -X PUT -H 'Content-Type: text/plain' -o /dev/null "$MINK_URL/v1/stream/$stream"
curl -sSfL "${auth[@]}" -X POST -H 'Content-Type: text/plain' --data 'before the move;' "$MINK_URL/v1/stream/$stream"
mink stream "$stream"

owner=$(mink stream "$stream" --json | field 'j.owner')
target=$(mink nodes --json | field "j.nodes.find((n) => n.live && n.id !== '$owner').id")
mink transfer "$stream" "$target"
# The transfer is pending until the target has opened the stream: follow it, for 30 s at most.
for ((tries = 0; tries < 150; tries++)); do
  [[ $(mink stream "$stream" --json | field 'j.owner + " " + j.pendingTransfer') == "$target null" ]] && break
  sleep 0.2
done
if ((tries == 150)); then echo "the transfer of $stream to $target did not finish in 30 s" >&2; exit 1; fi
mink stream "$stream"

curl -sSfL "${auth[@]}" -X POST -H 'Content-Type: text/plain' --data 'after the move;' "$MINK_URL/v1/stream/$stream"
echo "moved from $owner to $target; read back: $(curl -sSfL "${auth[@]}" "$MINK_URL/v1/stream/$stream?offset=-1")"
mink streams "${stream%%/*}/"
# #endregion readme:cli
