#!/usr/bin/env bash
# Provisions a standalone Temporal server (go.temporal.io/server/cmd/server) and its SQL schema tool
# (cmd/tools/sql) into $TOOLS_DIR/bin as temporal-server and temporal-sql-tool, for running Temporal
# on PostgreSQL (scripts/temporal-postgres.sh). The version is the one the Temporal CLI of
# scripts/setup.sh embeds (cli v1.5.1 -> server v1.29.1), so it behaves like the dev server.
#
# Run from the repo root. Idempotent: a no-op while the stamp matches. The first build takes minutes
# (both binaries share most packages, and Go's build cache is warm when the CLI was built before).
set -euo pipefail

# Bump together with TEMPORAL_CLI_VERSION in scripts/setup.sh (see the CLI's go.mod).
SERVER_VERSION="1.29.1"
MODULE="go.temporal.io/server"

TOOLS_DIR="${TOOLS_DIR:-$PWD/.tools}"
DEST="$TOOLS_DIR/temporal-server"
STAMP="$DEST/.version"
SERVER="$TOOLS_DIR/bin/temporal-server"
SQL_TOOL="$TOOLS_DIR/bin/temporal-sql-tool"

if [[ -x "$SERVER" && -x "$SQL_TOOL" && "$(cat "$STAMP" 2>/dev/null)" == "$SERVER_VERSION" ]]; then
  exit 0
fi

GO="$(command -v go || echo /usr/local/go/bin/go)"
[[ -x "$GO" ]] || { echo "temporal-server: Go is needed to build the Temporal server" >&2; exit 1; }

echo "temporal-server: building $MODULE v$SERVER_VERSION with go install (minutes the first time)" >&2
mkdir -p "$DEST/bin" "$TOOLS_DIR/bin"
# go install names binaries after their package directory ("server", "sql"): too generic for
# .tools/bin, so install into a private GOBIN and rename. `go install pkg@version` works here because
# the server's go.mod has no replace directives (else: go build -o from a copy of the module cache
# directory). temporal-sql-tool embeds the module's schema/ directory, so the PostgreSQL schemas it applies
# always match this server version.
GOBIN="$DEST/bin" GOFLAGS="${GOFLAGS:--buildvcs=false}" "$GO" install \
  "$MODULE/cmd/server@v$SERVER_VERSION" "$MODULE/cmd/tools/sql@v$SERVER_VERSION"
mv -f "$DEST/bin/server" "$SERVER"
mv -f "$DEST/bin/sql" "$SQL_TOOL"

# Written last so an interrupted build is retried on the next run.
echo "$SERVER_VERSION" >"$STAMP"
echo "temporal-server: ready at $SERVER and $SQL_TOOL" >&2
