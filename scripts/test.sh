#!/usr/bin/env bash
# `npm test`: type check, lint, then every jest project against real services: the project-local
# PostgreSQL and Redis (a separate database and Redis db) and a throwaway in-memory Temporal dev server
# for integration tests. Workflow test files each start their own Java time-skipping test server (see
# test/helpers/time-skipping.ts). Arguments go to jest; docs in the README's "Tests" section.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/test-stack.sh
source scripts/lib/test-stack.sh

export NODE_ENV=test LOG_LEVEL="${LOG_LEVEL:-silent}"
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://messaging@127.0.0.1:${PG_PORT:-55432}/messaging_test}"
export REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:${REDIS_PORT:-56379}/1}"
export TEMPORAL_ADDRESS="${TEST_TEMPORAL_ADDRESS:-127.0.0.1:7244}"
# The AWS stand-in (moto, scripts/lib/test-stack.sh) for S3, SES and SNS; each test uses its own bucket or identities.
export S3_BUCKET=messaging-test
# Every test client is 127.0.0.1, so the per-address limits of the public edge (tracking, unsubscribe,
# callbacks, docs, unknown keys) would be shared by every test file at once; the tests of those limits set
# their own (test/integration/public-edge.test.ts).
export TRACKING_PER_IP_PER_MINUTE=1000000 UNSUBSCRIBE_PER_IP_PER_MINUTE=1000000 CALLBACKS_PER_IP_PER_MINUTE=1000000
export DOCS_PER_IP_PER_MINUTE=1000000 UNKNOWN_KEYS_PER_IP_PER_MINUTE=1000000
# The workspace budgets (docs/security.md, noisy neighbours) would refuse the suite's back-to-back previews and
# parallel exports; test/integration/workspace-budgets.test.ts and noisy-neighbour.test.ts set their own.
export WORKSPACE_RATE_LIMIT_PER_SECOND="${WORKSPACE_RATE_LIMIT_PER_SECOND:-1000000}" WORKSPACE_HEAVY_CONCURRENCY="${WORKSPACE_HEAVY_CONCURRENCY:-1000}"

start_temporal_if_absent temporal-test
start_moto_if_absent moto-test

# The static checks, side by side (each mostly waits on one core). Each keeps what it learnt under .data/cache
# and redoes only what changed since, judged by file contents, not times (a fresh clone or CI has no cache and
# checks everything): tsc's build info, ESLint's per-file results (its rules read one file at a time), and
# dependency-cruiser's graph (lint:imports).
mkdir -p .data/cache
checks=()
tsc --noEmit --incremental --tsBuildInfoFile .data/cache/tsc.tsbuildinfo -p tsconfig.json & checks+=($!)
eslint --max-warnings 0 --cache --cache-strategy content --cache-location .data/cache/eslint/ . & checks+=($!)
# Import cycles (type-only ones included), activities importing workflows/ or temporal/, Node builtins in what
# the workflow bundle reaches: rules over the whole import graph, which per-file ESLint cannot see (scripts/lint/).
npm run --silent lint:imports & checks+=($!)
# Meanwhile the test database's migrations and its template copy (test/helpers/isolated-database.ts).
(tsx scripts/migrate.ts >/dev/null && tsx scripts/test-template-db.ts) & checks+=($!)
failed=0
for check in "${checks[@]}"; do wait "$check" || failed=1; done
[ "$failed" = 0 ] || exit 1
wait_port "${TEMPORAL_ADDRESS##*:}" "the Temporal dev server"
# A dev server that was already running may predate a search attribute (scripts/search-attributes.ts).
tsx scripts/search-attributes.ts
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
