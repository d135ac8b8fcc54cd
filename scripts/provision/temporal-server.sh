#!/usr/bin/env bash
# Provisions a standalone Temporal server (go.temporal.io/server/cmd/server) and its SQL schema tool
# (cmd/tools/sql) into $TOOLS_DIR/bin as temporal-server and temporal-sql-tool, and its Web UI
# (github.com/temporalio/ui-server/v2/cmd/server) as temporal-ui-server, for running Temporal on PostgreSQL
# (scripts/temporal-postgres.sh, which `npm start` uses). The versions are the ones the Temporal CLI of
# scripts/setup.sh embeds (cli v1.5.1 -> server v1.29.1, ui-server v2.42.1), so they behave like the dev server.
#
# Run from the repo root. Idempotent: a no-op while the stamps match. The first build takes minutes
# (the binaries share most packages, and Go's build cache is warm when the CLI was built before).
set -euo pipefail

# Bump together with TEMPORAL_CLI_VERSION in scripts/setup.sh (see the CLI's go.mod).
SERVER_VERSION="1.29.1"
MODULE="go.temporal.io/server"

TOOLS_DIR="${TOOLS_DIR:-$PWD/.tools}"
DEST="$TOOLS_DIR/temporal-server"
STAMP="$DEST/.version"
SERVER="$TOOLS_DIR/bin/temporal-server"
SQL_TOOL="$TOOLS_DIR/bin/temporal-sql-tool"
# Bump with the CLI too (its go.mod requires github.com/temporalio/ui-server/v2).
UI_VERSION="2.42.1"
UI_MODULE="github.com/temporalio/ui-server/v2"
UI_DEST="$TOOLS_DIR/temporal-ui-server"
UI_STAMP="$UI_DEST/.version"
UI_SERVER="$TOOLS_DIR/bin/temporal-ui-server"
UI_FAILED="$UI_DEST/.failed"

server_ready() { [[ -x "$SERVER" && -x "$SQL_TOOL" && "$(cat "$STAMP" 2>/dev/null)" == "$SERVER_VERSION" ]]; }
ui_ready() { [[ -x "$UI_SERVER" && "$(cat "$UI_STAMP" 2>/dev/null)" == "$UI_VERSION" ]]; }
server_ready && { ui_ready || [[ "$(cat "$UI_FAILED" 2>/dev/null)" == "$UI_VERSION" ]]; } && exit 0

GO="$(command -v go || echo /usr/local/go/bin/go)"
if [[ ! -x "$GO" ]] && server_ready; then
  mkdir -p "$UI_DEST" && echo "$UI_VERSION" >"$UI_FAILED"
  echo "temporal-server: Go is needed to build the Web UI; Temporal runs without it" >&2
  exit 0
fi
[[ -x "$GO" ]] || { echo "temporal-server: Go is needed to build the Temporal server" >&2; exit 1; }

build_server() {
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
}

# The UI's assets are embedded in its module (ui/assets), so the binary serves them with nothing else installed.
# Its go.mod has no replace directives either; its package is also named "server", hence its own GOBIN.
# Chained with &&: errexit does not apply inside a function called on the left of ||.
build_ui() {
  echo "temporal-server: building $UI_MODULE v$UI_VERSION, the Web UI (a minute or two the first time)" >&2
  mkdir -p "$UI_DEST/bin" "$TOOLS_DIR/bin" \
    && GOBIN="$UI_DEST/bin" GOFLAGS="${GOFLAGS:--buildvcs=false}" "$GO" install "$UI_MODULE/cmd/server@v$UI_VERSION" \
    && mv -f "$UI_DEST/bin/server" "$UI_SERVER" \
    && echo "$UI_VERSION" >"$UI_STAMP" \
    && echo "temporal-server: Web UI ready at $UI_SERVER" >&2
}

server_ready || build_server
# Temporal runs without its UI: a failed UI build is reported once and not tried again on every start (npm
# start restarts the server through here), until the marker is deleted.
if ! ui_ready && [[ "$(cat "$UI_FAILED" 2>/dev/null)" != "$UI_VERSION" ]] && ! build_ui; then
  echo "$UI_VERSION" >"$UI_FAILED"
  echo "temporal-server: the Web UI could not be built; Temporal runs without it (rm $UI_FAILED to try again)" >&2
fi
