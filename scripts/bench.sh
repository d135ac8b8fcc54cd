#!/usr/bin/env bash
# `npm run bench -- <name>`: runs bench/<name>.ts against the project-local PostgreSQL and Redis
# (the test database), and prints its figures. Temporal-backed benchmarks start what they need.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:-}"
if [ -z "$name" ] || [ ! -f "bench/$name.ts" ]; then
  echo "usage: npm run bench -- <name>   (one of: $(ls bench | grep -v stats | sed 's/\.ts$//' | tr '\n' ' '))" >&2
  exit 2
fi
shift
bash scripts/setup.sh
bash scripts/services.sh start
export NODE_ENV=test LOG_LEVEL=silent
export DATABASE_URL="${BENCH_DATABASE_URL:-postgres://messaging@127.0.0.1:${PG_PORT:-55432}/messaging_bench}"
export REDIS_URL="${BENCH_REDIS_URL:-redis://127.0.0.1:${REDIS_PORT:-56379}/1}"
export TEMPORAL_ADDRESS="${BENCH_TEMPORAL_ADDRESS:-127.0.0.1:7244}"
export AWS_ENDPOINT_URL="${BENCH_AWS_ENDPOINT_URL:-http://127.0.0.1:5056}" AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench S3_BUCKET=messaging-bench
# Throughput benchmarks drive one workspace far past a deployment's workspace budget (docs/security.md, noisy
# neighbours), as they lift the per-key limit; noisy-neighbour measures that budget, so it keeps the defaults.
if [ "$name" != noisy-neighbour ]; then
  export WORKSPACE_RATE_LIMIT_PER_SECOND="${WORKSPACE_RATE_LIMIT_PER_SECOND:-1000000}" WORKSPACE_HEAVY_CONCURRENCY="${WORKSPACE_HEAVY_CONCURRENCY:-1000}"
fi
mkdir -p .data/logs
pids=()
trap 'for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Benchmarks that send need Temporal and the AWS stand-in; throwaway ones are started unless already there.
if ! port_open "${TEMPORAL_ADDRESS##*:}"; then
  args=$(tsx -e "import { devServerArgs } from './scripts/temporal-cli'; console.log(devServerArgs({ address: '$TEMPORAL_ADDRESS', namespace: 'default' }).join(' '))")
  # shellcheck disable=SC2086 # no spaces in the arguments by construction
  "${TEMPORAL_CLI_PATH:-.tools/bin/temporal}" $args >.data/logs/temporal-bench.log 2>&1 &
  pids+=($!)
fi
if ! port_open "${AWS_ENDPOINT_URL##*:}"; then
  .tools/bin/moto-server -H 127.0.0.1 -p "${AWS_ENDPOINT_URL##*:}" >.data/logs/moto-bench.log 2>&1 &
  pids+=($!)
fi
for _ in $(seq 1 300); do port_open "${TEMPORAL_ADDRESS##*:}" && port_open "${AWS_ENDPOINT_URL##*:}" && break; sleep 0.2; done
tsx scripts/migrate.ts >/dev/null
echo "bench $name on $(nproc) cores, $(node --version), $(date -u +%Y-%m-%dT%H:%MZ)"
tsx "bench/$name.ts" "$@"
