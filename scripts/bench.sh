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
export DATABASE_URL="${BENCH_DATABASE_URL:-postgres://messaging@127.0.0.1:${PG_PORT:-55432}/messaging_test}"
export REDIS_URL="${BENCH_REDIS_URL:-redis://127.0.0.1:${REDIS_PORT:-56379}/1}"
tsx scripts/migrate.ts >/dev/null
echo "bench $name on $(nproc) cores, $(node --version), $(date -u +%Y-%m-%dT%H:%MZ)"
tsx "bench/$name.ts" "$@"
