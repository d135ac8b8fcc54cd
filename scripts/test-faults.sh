#!/usr/bin/env bash
# `npm run test:faults`: the fault suite (test/faults/run.ts, docs/reliability.md). It starts its own
# PostgreSQL, Redis and Temporal dev server on free ports, never the shared ones, plus the API, the worker and
# an SMTP sink, injects one fault after another under load and checks the invariants after each. Arguments
# name scenarios to run (default: all). Prints a closing line `N passed, N failed`; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
FAULTS_DIR="$PWD/.data/faults"
mkdir -p "$FAULTS_DIR"
# One run at a time: a run starts from a fresh data directory and process list, which a second would wipe.
exec 9>"$FAULTS_DIR/lock"
flock -n 9 || { echo "faults: another fault suite run holds $FAULTS_DIR/lock" >&2; exit 1; }
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# Whatever happens to the runner (a failure, Ctrl-C, a kill), every process it started goes with it: each
# child runs in a process group of its own, listed in process-groups; PostgreSQL is stopped through pg_ctl.
runner=""
cleanup() {
  [ -n "$runner" ] && kill -9 "$runner" 2>/dev/null || true
  if [ -f "$FAULTS_DIR/process-groups" ]; then
    while read -r pgid; do
      [ -n "$pgid" ] && kill -9 -- "-$pgid" 2>/dev/null || true
    done <"$FAULTS_DIR/process-groups"
  fi
  if [ -f "$FAULTS_DIR/postgres/postmaster.pid" ]; then
    as_pg "$PG_BIN/pg_ctl" -D "$FAULTS_DIR/postgres" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

temporal_cli="${TEMPORAL_CLI_PATH:-$PWD/.tools/bin/temporal}"
[ -x "$temporal_cli" ] || command -v temporal >/dev/null || { echo "faults: no Temporal CLI (run scripts/setup.sh)" >&2; exit 1; }

started=$(date +%s)
status=0
# In the background, waited for: bash runs a trap only between commands, so a Ctrl-C or a kill of this script
# would otherwise wait for the whole run. The lock stays with this script: nothing the runner starts inherits it.
node --import tsx test/faults/run.ts "$@" 9>&- &
runner=$!
wait "$runner" || status=$?
runner=""
echo "faults: $(( $(date +%s) - started )) s end to end" >&2
exit "$status"
