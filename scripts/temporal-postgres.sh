#!/usr/bin/env bash
# Runs a Temporal server (go.temporal.io/server, the version the dev server embeds) that keeps its state in the
# project-local PostgreSQL instead of the dev server's SQLite file. All four services run in one process,
# frontend on TEMPORAL_PG_ADDRESS (default 127.0.0.1:7255), beside any dev server.
#   usage: temporal-postgres.sh prepare|run|ui|namespace|start|stop|status
#                                                         (docs/delivery.md#running-temporal-on-postgresql)
#   prepare    builds the server once (scripts/provision/temporal-server.sh), creates the databases temporal and
#              temporal_visibility once, brings their schemas up to date and writes the config files; idempotent,
#              a few seconds on a second run
#   run        prepare, then the server in the FOREGROUND (exec: this process becomes the server, so a supervisor
#              such as `npm start` sees it exit and starts it again)
#   ui         the Temporal Web UI (ui-server) in the foreground on TEMPORAL_PG_UI_PORT (8233), for the frontend
#   namespace  waits for the server, creates the namespace if absent and registers the search attributes
#   start      prepare, the server in the background, then namespace; stop and status act on either mode
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
TOOLS_DIR="${TOOLS_DIR:-$PWD/.tools}"
DATA="$PWD/.data"
STATE="$DATA/temporal-pg"
PID_FILE="$STATE/server.pid"
# The frontend address of the server the pid file names: a supervised one (npm start, 7233) or a background one.
ADDRESS_FILE="$STATE/server.address"
LOG="$DATA/logs/temporal-pg.log"
SCHEMA_LOG="$STATE/schema.log"
PG_HOST=127.0.0.1
PG_PORT="${PG_PORT:-55432}"
PG_USER=messaging
ADDRESS="${TEMPORAL_PG_ADDRESS:-127.0.0.1:7255}"
UI_PORT="${TEMPORAL_PG_UI_PORT:-8233}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
# The dev server's namespaces keep closed workflows for a day (sqlite NewNamespaceConfig in the server).
RETENTION=24h
SERVER="$TOOLS_DIR/bin/temporal-server"
SQL_TOOL="$TOOLS_DIR/bin/temporal-sql-tool"
UI_SERVER="$TOOLS_DIR/bin/temporal-ui-server"
TEMPORAL_CLI="${TEMPORAL_CLI_PATH:-$TOOLS_DIR/bin/temporal}"
[ -x "$TEMPORAL_CLI" ] || TEMPORAL_CLI=temporal

set_address() { ADDRESS=$1; HOST="${ADDRESS%:*}"; PORT="${ADDRESS##*:}"; }
set_address "$ADDRESS"

psql_pg() { psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -v ON_ERROR_STOP=1 -qtA "$@"; }
port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }
# The recorded pid, if that process is still our server (after a reboot the number may name another process).
server_pid() {
  local pid
  pid=$(cat "$PID_FILE" 2>/dev/null) && grep -qa temporal-server "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}
# status and stop speak of the running server, wherever it listens, not of this shell's default address.
use_running_address() {
  if server_pid >/dev/null && [ -s "$ADDRESS_FILE" ]; then set_address "$(cat "$ADDRESS_FILE")"; fi
}
healthy() { "$TEMPORAL_CLI" operator cluster health --address "$ADDRESS" >/dev/null 2>&1; }

# The schemas come from the module's schema/postgresql/v12 directories as embedded in temporal-sql-tool at build
# time (--schema-name), so they always match the server binary and need no Go module cache at run time.
setup_database() { # <database> <schema name>
  local db=$1 schema=$2
  local tool=("$SQL_TOOL" --plugin postgres12_pgx --endpoint "$PG_HOST" --port "$PG_PORT" --user "$PG_USER" --db "$db")
  if [ -z "$(psql_pg -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]; then
    psql_pg -d postgres -c "CREATE DATABASE $db" >/dev/null
  fi
  # setup-schema only on a fresh database: run again it would reset the recorded version to 0.0.
  if [ -z "$(psql_pg -d "$db" -c "SELECT 1 FROM pg_tables WHERE tablename = 'schema_version'")" ]; then
    "${tool[@]}" setup-schema -v 0.0 >>"$SCHEMA_LOG" 2>&1
  fi
  # Applies only the versions the database lacks: a no-op on the second start, an upgrade after a bump.
  "${tool[@]}" update-schema --schema-name "$schema" >>"$SCHEMA_LOG" 2>&1 \
    || { echo "temporal-pg: schema update of $db failed; see $SCHEMA_LOG" >&2; exit 1; }
}

# Fills the ${NAME} placeholders of a template by sed (no envsubst: gettext-base is not on every machine).
render() { # <template> <output> NAME=value...
  local template=$1 output=$2 script=() pair
  shift 2
  for pair in "$@"; do script+=(-e "s|\${${pair%%=*}}|${pair#*=}|g"); done
  mkdir -p "$(dirname "$output")"
  sed "${script[@]}" "$template" >"$output"
  # shellcheck disable=SC2016 # a literal ${NAME}, not an expansion
  if grep -q '\${[A-Z_]*}' "$output"; then echo "temporal-pg: unfilled placeholder in $output" >&2; exit 1; fi
}

write_config() {
  mkdir -p "$STATE/config"
  cp scripts/temporal-postgres/dynamic-config.yaml "$STATE/dynamic-config.yaml"
  # Task-queue priority and fairness: the same keys as the dev server gets, from their one definition.
  tsx -e "import { TASK_QUEUE_FAIRNESS } from './scripts/temporal-cli';
    for (const setting of TASK_QUEUE_FAIRNESS) { const [key, value] = setting.split('='); console.log(key + ':\n  - value: ' + value); }" \
    >>"$STATE/dynamic-config.yaml"
  render scripts/temporal-postgres/config.yaml.tmpl "$STATE/config/development.yaml" \
    HOST="$HOST" PORT="$PORT" HTTP_PORT=$((PORT + 1)) HISTORY_PORT=$((PORT + 2)) \
    MATCHING_PORT=$((PORT + 3)) WORKER_PORT=$((PORT + 4)) METRICS_PORT=$((PORT + 5)) \
    FRONTEND_MEMBERSHIP_PORT=$((PORT + 6)) HISTORY_MEMBERSHIP_PORT=$((PORT + 7)) \
    MATCHING_MEMBERSHIP_PORT=$((PORT + 8)) WORKER_MEMBERSHIP_PORT=$((PORT + 9)) \
    PG_HOST="$PG_HOST" PG_PORT="$PG_PORT" PG_USER="$PG_USER" DYNAMIC_CONFIG="$STATE/dynamic-config.yaml"
}

# Everything the server needs before it starts, each step skipped or quick when already done.
prepare() {
  local pid
  # Two servers on the same databases would join one cluster: refuse, and say which one runs.
  if pid=$(server_pid); then
    echo "temporal-pg: a server on these databases already runs on $(cat "$ADDRESS_FILE" 2>/dev/null || echo '?') (pid $pid):" \
      "stop it (bash scripts/temporal-postgres.sh stop) or point TEMPORAL_ADDRESS at it" >&2
    exit 1
  fi
  if port_open "$PORT"; then echo "temporal-pg: $ADDRESS is taken by another process" >&2; exit 1; fi
  bash scripts/provision/temporal-server.sh
  bash scripts/services.sh start >/dev/null
  mkdir -p "$STATE" "$DATA/logs"
  : >"$SCHEMA_LOG"
  setup_database temporal postgresql/v12/temporal
  setup_database temporal_visibility postgresql/v12/visibility
  write_config
}

record() { # <pid>
  echo "$1" >"$PID_FILE"
  echo "$ADDRESS" >"$ADDRESS_FILE"
}

run() {
  prepare
  record $$
  # exec, not a child: the supervisor's process is the server, so its SIGTERM reaches the server and the
  # server's death is the supervisor's signal to start it again.
  exec "$SERVER" --root "$STATE" --config config --env development --allow-no-auth start </dev/null
}

ui() {
  [ -x "$UI_SERVER" ] || { echo "temporal-pg: no Web UI at $UI_SERVER (bash scripts/provision/temporal-server.sh builds it)" >&2; exit 1; }
  if port_open "$UI_PORT"; then echo "temporal-pg: $HOST:$UI_PORT is taken by another process" >&2; exit 1; fi
  render scripts/temporal-postgres/ui.yaml.tmpl "$STATE/ui/config/development.yaml" \
    HOST="$HOST" PORT="$PORT" UI_PORT="$UI_PORT" NAMESPACE="$NAMESPACE"
  exec "$UI_SERVER" --root "$STATE/ui" --config config --env development start </dev/null
}

# What a new server needs before the workers poll it: the namespace and the project's search attributes.
namespace() {
  for _ in $(seq 1 600); do healthy && break; sleep 0.2; done
  healthy || { echo "temporal-pg: no answer on $ADDRESS after 120 s" >&2; exit 1; }
  if ! "$TEMPORAL_CLI" operator namespace describe --address "$ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1; then
    "$TEMPORAL_CLI" operator namespace create --address "$ADDRESS" --namespace "$NAMESPACE" --retention "$RETENTION" >/dev/null
  fi
  # The project's custom search attributes (scripts/temporal-cli.ts), on the namespace just made sure of.
  # Retried: a namespace created a moment ago reaches the frontend's namespace cache within seconds.
  for attempt in $(seq 1 10); do
    TEMPORAL_ADDRESS="$ADDRESS" TEMPORAL_NAMESPACE="$NAMESPACE" tsx scripts/search-attributes.ts && break
    [ "$attempt" -lt 10 ] || { echo "temporal-pg: could not register the search attributes" >&2; exit 1; }
    sleep 1
  done
}

start() {
  if server_pid >/dev/null; then use_running_address; echo "temporal-pg: already running on $ADDRESS"; return; fi
  prepare
  : >"$LOG"
  # setsid: the server outlives this script and the terminal that ran it, like PostgreSQL and Redis do.
  setsid "$SERVER" --root "$STATE" --config config --env development --allow-no-auth start >>"$LOG" 2>&1 </dev/null &
  record $!
  for _ in $(seq 1 600); do
    healthy && break
    server_pid >/dev/null || { echo "temporal-pg: the server exited; see $LOG" >&2; exit 1; }
    sleep 0.2
  done
  namespace
  echo "temporal-pg: running on $ADDRESS (databases temporal, temporal_visibility on $PG_PORT; log $LOG)"
}

stop() {
  local pid
  pid=$(server_pid) || { rm -f "$PID_FILE"; return; }
  kill "$pid"
  # The server drains its shards on SIGTERM; give it the time its own shutdown takes, then insist.
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  rm -f "$PID_FILE"
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  ui) ui ;;
  namespace) namespace ;;
  start) start ;;
  stop) stop ;;
  status)
    use_running_address
    if server_pid >/dev/null && healthy; then echo "temporal-pg: running on $ADDRESS"
    elif server_pid >/dev/null; then echo "temporal-pg: starting or unhealthy on $ADDRESS (pid $(server_pid))"
    else echo "temporal-pg: stopped"; fi ;;
  *) echo "usage: $0 prepare|run|ui|namespace|start|stop|status" >&2; exit 2 ;;
esac
