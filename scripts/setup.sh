#!/usr/bin/env bash
# One-time, idempotent set-up of a development or CI machine: system packages
# (when root and missing), the virtualenv with Greenloop and its dev tools.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "Greenloop needs Python 3.11 (found $("$PY" --version))" >&2
  exit 1
fi

if [ "$(id -u)" = 0 ] && [ -x .ci/setup-sandbox.sh ] && [ "${GREENLOOP_SKIP_SYSTEM:-0}" != 1 ]; then
  bash .ci/setup-sandbox.sh
fi

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.greenloop-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".[dev]"
  touch "$stamp"
fi
