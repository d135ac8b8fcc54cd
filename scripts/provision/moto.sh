#!/usr/bin/env bash
# Provision moto's server (local stand-in for AWS SES v2, S3 and SNS) into
# $TOOLS_DIR/moto and expose it as $TOOLS_DIR/bin/moto-server.
# Idempotent: a stamp file records the installed version, so re-runs exit
# silently without touching pip. Run from the repo root.
set -euo pipefail

# Pinned so every machine gets the same emulator behaviour; bump deliberately.
MOTO_VERSION="5.2.5"

TOOLS_DIR="${TOOLS_DIR:-$PWD/.tools}"
VENV="$TOOLS_DIR/moto"
STAMP="$VENV/.moto-version"
WRAPPER="$TOOLS_DIR/bin/moto-server"

# Fast path: pinned version installed and wrapper present -> print nothing.
# bin/python is a symlink to the interpreter that built the venv; if that
# interpreter went away (e.g. pyenv upgrade) -x fails and we rebuild.
if [[ -f "$STAMP" && "$(<"$STAMP")" == "$MOTO_VERSION" && -x "$WRAPPER" && -x "$VENV/bin/python" ]]; then
  exit 0
fi

# Debian's python3 ships without venv/ensurepip; they come from python3-venv.
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "moto.sh: python3 lacks the venv/ensurepip modules." >&2
  echo "         On Debian/Ubuntu: apt-get install python3-venv (or python3.X-venv matching 'python3 --version')." >&2
  exit 1
fi

echo "moto.sh: installing moto[server]==$MOTO_VERSION into $VENV" >&2
# No stamp means a missing, outdated or half-finished install: start clean
# rather than upgrading in place, so the venv only ever holds the pinned set.
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"

# Wrapper instead of a symlink: moto_server's shebang points into the venv,
# and exec keeps the PID the same so callers can signal/kill the server directly.
mkdir -p "$TOOLS_DIR/bin"
cat >"$WRAPPER" <<EOF
#!/usr/bin/env bash
exec "$VENV/bin/moto_server" "\$@"
EOF
chmod +x "$WRAPPER"

# Written last so an interrupted install is retried on the next run.
echo "$MOTO_VERSION" >"$STAMP"
echo "moto.sh: done ($("$VENV/bin/python" -c 'import moto; print(moto.__version__)'))" >&2
