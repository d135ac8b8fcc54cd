#!/usr/bin/env bash
# `npm run test:contract`: Schemathesis (pinned in scripts/provision/schemathesis.sh) against the API's own
# OpenAPI document, every phase, a fixed seed and a case budget (docs/reliability.md). The API runs as its
# own process on a free port, on a database and Redis db of its own (messaging_contract, db 3), with a task
# queue prefix of its own so no worker of another run picks up the workflows its sends start; no worker runs,
# so accepted messages wait in Temporal and nothing leaves the machine. Arguments go to Schemathesis.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/test-stack.sh
source scripts/lib/test-stack.sh
bash scripts/provision/schemathesis.sh

pg="postgres://messaging@127.0.0.1:${PG_PORT:-55432}"
# Dropped and created each run: the fuzzer's rows (contacts, templates, webhooks) would otherwise pile up and
# change what list routes answer from one run to the next.
psql "$pg/postgres" -qc 'DROP DATABASE IF EXISTS messaging_contract WITH (FORCE)' -c 'CREATE DATABASE messaging_contract' >/dev/null

export NODE_ENV=test LOG_LEVEL="${LOG_LEVEL:-silent}" MIGRATE_ON_START=false
export DATABASE_URL="$pg/messaging_contract"
export REDIS_URL="redis://127.0.0.1:${REDIS_PORT:-56379}/3"
export TEMPORAL_ADDRESS="${CONTRACT_TEMPORAL_ADDRESS:-127.0.0.1:7244}" TASK_QUEUE_PREFIX=contract-
# The per-key rate limit (10/s by default) would answer most generated cases 429 and hide what the route
# itself answers; its own behaviour is covered by test/integration.
export RATE_LIMIT_PER_SECOND=100000
# Every test client is 127.0.0.1, so the per-address limits of the public edge (tracking, unsubscribe,
# callbacks, docs, unknown keys) would answer generated cases 429 as well; they are
# covered by test/integration/public-edge.test.ts.
export TRACKING_PER_IP_PER_MINUTE=1000000 UNSUBSCRIBE_PER_IP_PER_MINUTE=1000000 CALLBACKS_PER_IP_PER_MINUTE=1000000
export DOCS_PER_IP_PER_MINUTE=1000000 UNKNOWN_KEYS_PER_IP_PER_MINUTE=1000000
# The same for the workspace budget and its slots of heavy work (docs/security.md, noisy neighbours).
export WORKSPACE_RATE_LIMIT_PER_SECOND=100000000 WORKSPACE_HEAVY_CONCURRENCY=1000
# The fuzzer creates keys by the hundred in one workspace; the key cap (402 quota_exceeded past 20) is
# proven by test/integration/workspace-budgets.test.ts.
export MAX_API_KEYS_PER_WORKSPACE=1000000
redis-cli -u "$REDIS_URL" flushdb >/dev/null

# The API starts workflows for every accepted send, so it needs a Temporal server to answer 202; attachments
# go to the S3 stand-in (moto), in a bucket of the suite's own.
start_temporal_if_absent temporal-contract
start_moto_if_absent moto-contract
export S3_BUCKET=messaging-contract

# The Telegram Bot API and Twilio stand-ins, accepting any well-formed credentials, so the integration routes
# answer from a provider rather than 503 (the real ones are not reachable from CI, nor should the fuzzer call them).
stand_ins=.data/contract-stand-ins.env
rm -f "$stand_ins"
tsx test/helpers/provider-stand-ins-main.ts "$stand_ins" >.data/logs/stand-ins-contract.log 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do [ -s "$stand_ins" ] && break; sleep 0.1; done
[ -s "$stand_ins" ] || { echo "the provider stand-ins did not start; see .data/logs/stand-ins-contract.log" >&2; exit 1; }
set -a
# shellcheck source=/dev/null
source "$stand_ins"
set +a

tsx scripts/migrate.ts >/dev/null
api_key=$(tsx scripts/admin.ts workspace:create --name contract-fuzz --plan pro | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).apiKey))')

wait_port "$moto_port" "the AWS stand-in"
port=$(node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
PORT="$port" node --import tsx api/main.ts >.data/logs/api-contract.log 2>&1 &
pids+=($!)
wait_port "${TEMPORAL_ADDRESS##*:}" "the Temporal dev server"
wait_port "$port" "the API"

started=$(date +%s)
status=0
# Schemathesis keeps past failures in .schemathesis/ under its working directory and replays them first;
# a fresh directory each run keeps a run a function of the seed alone, and the cache out of the repository.
# The settings (NUL bytes off, the refusals each operation may answer to schema-valid input, and why) are
# in scripts/contract/schemathesis.toml. One worker: with two, Schemathesis's threads parse Python source at
# the same time, which CPython 3.11's ast module does not survive ("AST constructor recursion depth mismatch",
# a runtime error in 2 of 6 runs); on two cores one worker is as fast, the API being the bottleneck.
config="$PWD/scripts/contract/schemathesis.toml"
work="$PWD/.data/contract"
rm -rf "$work" && mkdir -p "$work"
(cd "$work" && exec "$TOOLS_DIR/bin/schemathesis" --config-file "$config" \
  run "http://127.0.0.1:$port/api/v1/openapi.json" \
  --url "http://127.0.0.1:$port" \
  --header "Authorization: Bearer $api_key" \
  --phases examples,coverage,fuzzing,stateful \
  --checks not_a_server_error,status_code_conformance,response_schema_conformance,positive_data_acceptance,unsupported_method,allow_header_conformance \
  --seed "${CONTRACT_SEED:-20261125}" \
  --max-examples "${CONTRACT_MAX_EXAMPLES:-25}" \
  --workers "${CONTRACT_WORKERS:-1}" \
  --report junit,ndjson --report-dir "$work" \
  "$@") || status=$?
echo "contract: schemathesis exited $status after $(( $(date +%s) - started )) s; reports in .data/contract" >&2
exit "$status"
