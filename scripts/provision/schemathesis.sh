#!/usr/bin/env bash
# Provision Schemathesis (the OpenAPI fuzzer behind `npm run test:contract`) into $TOOLS_DIR/schemathesis
# and expose it as $TOOLS_DIR/bin/schemathesis.
# Idempotent: a stamp file records the installed version, so re-runs exit
# silently without touching pip. Run from the repo root.
set -euo pipefail

# Pinned so every machine generates the same cases from the same seed; bump deliberately.
SCHEMATHESIS_VERSION="4.32.5"

TOOLS_DIR="${TOOLS_DIR:-$PWD/.tools}"
VENV="$TOOLS_DIR/schemathesis"
STAMP="$VENV/.schemathesis-version"
WRAPPER="$TOOLS_DIR/bin/schemathesis"

# Fast path: pinned version installed and wrapper present -> print nothing.
# bin/python is a symlink to the interpreter that built the venv; if that
# interpreter went away -x fails and we rebuild.
if [[ -f "$STAMP" && "$(<"$STAMP")" == "$SCHEMATHESIS_VERSION" && -x "$WRAPPER" && -x "$VENV/bin/python" ]]; then
  exit 0
fi

# Debian's python3 ships without venv/ensurepip; they come from python3-venv.
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "schemathesis.sh: python3 lacks the venv/ensurepip modules." >&2
  echo "                 On Debian/Ubuntu: apt-get install python3-venv (or python3.X-venv matching 'python3 --version')." >&2
  exit 1
fi

echo "schemathesis.sh: installing schemathesis==$SCHEMATHESIS_VERSION into $VENV" >&2
# No stamp means a missing, outdated or half-finished install: start clean
# rather than upgrading in place, so the venv only ever holds the pinned set.
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"

# Wrapper instead of a symlink: the console script's shebang points into the venv.
mkdir -p "$TOOLS_DIR/bin"
cat >"$WRAPPER" <<EOF
#!/usr/bin/env bash
exec "$VENV/bin/schemathesis" "\$@"
EOF
chmod +x "$WRAPPER"

# Written last so an interrupted install is retried on the next run.
echo "$SCHEMATHESIS_VERSION" >"$STAMP"
echo "schemathesis.sh: done ($("$VENV/bin/schemathesis" --version))" >&2
