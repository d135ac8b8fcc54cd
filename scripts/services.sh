#!/usr/bin/env bash
# Starts or stops the project-local PostgreSQL and Redis under .data/, on their own ports so they do not
# clash with servers already on the machine.   usage: services.sh start|stop|status
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="$PWD/.data"
PG_PORT="${PG_PORT:-55432}"
REDIS_PORT="${REDIS_PORT:-56379}"
PG_DATA="$DATA/postgres"
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
DATABASES=(messaging messaging_test messaging_bench)

# PostgreSQL refuses to run as root; on machines where we are root it runs as the `postgres` user.
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_running() { as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; }
redis_running() { redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; }

start_postgres() {
  mkdir -p "$DATA"
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    mkdir -p "$PG_DATA"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PG_DATA"
    # Local trust over loopback only: a development database, never reachable from another host.
    as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U messaging --auth=trust -E UTF8 >"$DATA/initdb.log"
  fi
  if ! pg_running; then
    # shared_buffers: PostgreSQL's 128 MB default cannot hold a million contacts and their identities
    # (about 250 MB), so every campaign estimate read them again through the kernel (1.6-1.9 s against
    # 1.3-1.4 s with 1 GB, docs/benchmarks.md).
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories='' -c max_connections=300 -c fsync=${PG_FSYNC:-on} -c shared_buffers=${PG_SHARED_BUFFERS:-1GB}" >/dev/null
  fi
  for db in "${DATABASES[@]}"; do
    if ! psql -h 127.0.0.1 -p "$PG_PORT" -U messaging -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
      psql -h 127.0.0.1 -p "$PG_PORT" -U messaging -d postgres -qc "CREATE DATABASE $db" >/dev/null
    fi
  done
}

start_redis() {
  mkdir -p "$DATA/redis"
  redis_running && return
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$DATA/redis" --daemonize yes \
    --pidfile "$DATA/redis/redis.pid" --logfile "$DATA/redis/redis.log" --save '' --appendonly no
  for _ in $(seq 1 50); do redis_running && return; sleep 0.1; done
  echo "redis did not start; see $DATA/redis/redis.log" >&2; exit 1
}

case "${1:-}" in
  start) start_postgres; start_redis ;;
  stop)
    pg_running && as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null || true
    redis_running && redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true ;;
  status)
    pg_running && echo "postgres: running on $PG_PORT" || echo "postgres: stopped"
    redis_running && echo "redis: running on $REDIS_PORT" || echo "redis: stopped" ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
