#!/usr/bin/env bash
# Idempotent set-up of a development or CI machine: system packages (when
# root and missing), the virtualenv with Greenloop and its dev tools.
#   scripts/setup.sh        what `make demo` needs (bubblewrap, git)
#   scripts/setup.sh test   everything the test suite needs too (a running
#                           dockerd, the sample projects' toolchains, Debian's
#                           chromium for the Web UI test)
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "Greenloop needs Python 3.11 (found $("$PY" --version))" >&2
  exit 1
fi

if [ "$(id -u)" = 0 ] && [ "${GREENLOOP_SKIP_SYSTEM:-0}" != 1 ]; then
  bash .ci/setup-sandbox.sh
  if [ "${1:-}" = test ]; then
    for step in .ci/setup-docker.sh .ci/setup-toolchains.sh .ci/setup-browser.sh; do
      if [ -f "$step" ]; then bash "$step"; fi
    done
  fi
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
