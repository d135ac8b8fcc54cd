#!/usr/bin/env bash
# `npm test`: type check, lint, then every jest project against real services: the project-local
# PostgreSQL and Redis (a separate database and Redis db) and a throwaway in-memory Temporal dev server
# for integration tests. Workflow test files each start their own Java time-skipping test server (see
# test/helpers/time-skipping.ts). Arguments go to jest.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS_DIR="${TOOLS_DIR:-$PWD/.tools}"
mkdir -p .data/logs
pids=()
services_were_running=$(bash scripts/services.sh status | grep -c 'running' || true)

cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ "$services_were_running" = 2 ] || bash scripts/services.sh stop
}
trap cleanup EXIT

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  for _ in $(seq 1 600); do port_open "$1" && return; sleep 0.1; done
  echo "$2 did not open port $1; see .data/logs" >&2; exit 1
}

bash scripts/services.sh start

export NODE_ENV=test LOG_LEVEL="${LOG_LEVEL:-silent}"
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://messaging@127.0.0.1:${PG_PORT:-55432}/messaging_test}"
export REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:${REDIS_PORT:-56379}/1}"
export TEMPORAL_ADDRESS="${TEST_TEMPORAL_ADDRESS:-127.0.0.1:7244}"
# The AWS stand-in (moto) for S3, SES and SNS; each test uses its own bucket or identities.
export AWS_ENDPOINT_URL="${TEST_AWS_ENDPOINT_URL:-http://127.0.0.1:5056}" AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test S3_BUCKET=messaging-test
moto_port="${AWS_ENDPOINT_URL##*:}"

if ! port_open "${TEMPORAL_ADDRESS##*:}"; then
  temporal_cli="${TEMPORAL_CLI_PATH:-$TOOLS_DIR/bin/temporal}"
  [ -x "$temporal_cli" ] || temporal_cli=temporal
  args=$(tsx -e "import { devServerArgs } from './scripts/temporal-cli'; console.log(devServerArgs({ address: '$TEMPORAL_ADDRESS', namespace: 'default' }).join(' '))")
  # shellcheck disable=SC2086 # the arguments contain no spaces by construction
  "$temporal_cli" $args >.data/logs/temporal-test.log 2>&1 &
  pids+=($!)
fi
if ! port_open "$moto_port"; then
  "$TOOLS_DIR/bin/moto-server" -H 127.0.0.1 -p "$moto_port" >.data/logs/moto-test.log 2>&1 &
  pids+=($!)
fi

tsc --noEmit -p tsconfig.json
eslint --max-warnings 0 .
tsx scripts/migrate.ts >/dev/null
tsx scripts/test-template-db.ts
wait_port "${TEMPORAL_ADDRESS##*:}" "the Temporal dev server"
wait_port "$moto_port" "the AWS stand-in"
status=0
# --forceExit: a failing test that leaves a socket open must still end the run (and CI) promptly.
jest --json --outputFile=.data/logs/jest-results.json --forceExit "$@" || status=$?
# A plain closing line that any CI reads, whatever the runner.
node -e '
  const r = require("./.data/logs/jest-results.json");
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
' 2>/dev/null || true
exit "$status"
