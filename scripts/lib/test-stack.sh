# Sourced by scripts/test.sh and scripts/test-contract.sh (run from the repository root): the start-up both
# share. Starts the project-local PostgreSQL and Redis if they are not running (and stops them on exit only
# if this run started them), and kills every process a run records in `pids` when it exits.
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

# A throwaway in-memory Temporal dev server on TEMPORAL_ADDRESS, unless one already answers there.
# usage: start_temporal_if_absent <log name>; wait for it with wait_port "${TEMPORAL_ADDRESS##*:}" ...
start_temporal_if_absent() {
  port_open "${TEMPORAL_ADDRESS##*:}" && return
  local temporal_cli="${TEMPORAL_CLI_PATH:-$TOOLS_DIR/bin/temporal}" args
  [ -x "$temporal_cli" ] || temporal_cli=temporal
  args=$(tsx -e "import { devServerArgs } from './scripts/temporal-cli'; console.log(devServerArgs({ address: '$TEMPORAL_ADDRESS', namespace: 'default' }).join(' '))")
  # shellcheck disable=SC2086 # the arguments contain no spaces by construction
  "$temporal_cli" $args >".data/logs/$1.log" 2>&1 &
  pids+=($!)
}

# The AWS stand-in (moto) for S3, SES and SNS on AWS_ENDPOINT_URL, unless one already answers there.
export AWS_ENDPOINT_URL="${TEST_AWS_ENDPOINT_URL:-http://127.0.0.1:5056}" AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
moto_port="${AWS_ENDPOINT_URL##*:}"
start_moto_if_absent() {
  port_open "$moto_port" && return
  "$TOOLS_DIR/bin/moto-server" -H 127.0.0.1 -p "$moto_port" >".data/logs/$1.log" 2>&1 &
  pids+=($!)
}

bash scripts/services.sh start
