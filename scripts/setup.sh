#!/usr/bin/env bash
# Provides everything `npm start` and `npm test` need, installing only what is missing, so a second run
# takes seconds. Called by `npm start`, `npm test` and `.ci/run`. Tools land in .tools/ (git-ignored);
# PostgreSQL and Redis come from Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/.."
export TOOLS_DIR="${TOOLS_DIR:-$PWD/.tools}"
mkdir -p "$TOOLS_DIR/bin"

TEMPORAL_CLI_VERSION=1.5.1
say() { printf '[setup] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }

apt_install() {
  say "installing Debian packages: $*"
  # Quiet on success; the log is shown only if apt fails.
  if ! { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"; } >"$TOOLS_DIR/apt.log" 2>&1; then
    cat "$TOOLS_DIR/apt.log" >&2
    say "could not install $* (run as root, or install them yourself)"
    exit 1
  fi
}

# npm dependencies: reinstalled only when package-lock.json changed since the last install.
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.setup-lock-hash 2>/dev/null)" != "$lock_hash" ]; then
  say "installing npm dependencies"
  # `npm install`, not `npm ci`: npm 11 writes only this platform's optional native packages into the
  # lock and then `npm ci` rejects that same lock as out of sync. Against the committed lock, install
  # resolves the same versions and leaves the lock untouched.
  npm install --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > node_modules/.setup-lock-hash
fi

# PostgreSQL and Redis servers (run as project-local instances by scripts/services.sh).
missing=()
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
command -v redis-server >/dev/null || missing+=(redis-server)
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# Temporal CLI: the dev server of the integration tests (and of `TEMPORAL_PERSISTENCE=sqlite npm start`), and the
# operator commands scripts/temporal-postgres.sh uses on the server `npm start` runs on PostgreSQL.
if [ -z "${TEMPORAL_CLI_PATH:-}" ] && ! temporal --version 2>/dev/null | grep -q '^temporal version 1\.' \
  && ! "$TOOLS_DIR/bin/temporal" --version 2>/dev/null | grep -q "^temporal version $TEMPORAL_CLI_VERSION "; then
  command -v go >/dev/null || { say "Go is needed to build the Temporal CLI (or set TEMPORAL_CLI_PATH)"; exit 1; }
  say "building the Temporal CLI $TEMPORAL_CLI_VERSION with go install (a few minutes the first time)"
  GOBIN="$TOOLS_DIR/bin" go install \
    -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$TEMPORAL_CLI_VERSION" \
    "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_CLI_VERSION"
fi

# The Java time-skipping test server (workflow tests), the AWS stand-in (SES, S3, SNS) and the OpenAPI
# fuzzer (`npm run test:contract`).
bash scripts/provision/temporal-test-server.sh
bash scripts/provision/moto.sh
bash scripts/provision/schemathesis.sh
