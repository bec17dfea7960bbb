#!/usr/bin/env bash
# Idempotent set-up of a development or CI machine: system packages (when
# root and missing), the virtualenv with Greenloop and its dev tools.
#   scripts/setup.sh        what `make demo` needs (bubblewrap, git)
#   scripts/setup.sh test   everything the test suite needs too (a running
#                           dockerd, the sample projects' toolchains, Debian's
#                           chromium for the Web UI test)
#
# On a fresh machine the two slow halves overlap: the virtualenv is installed
# (with uv, pip as the fallback) while apt installs every missing Debian
# package with one `apt-get update` and one `apt-get install
# --no-install-recommends` (the list: .ci/packages.sh). Either failing fails
# the set-up.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "Greenloop needs Python 3.11 (found $("$PY" --version))" >&2
  exit 1
fi
profile=${1:-}

install_venv() {
  if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv || return 1
  fi
  local stamp=.venv/.greenloop-installed
  if [ -f "$stamp" ] && [ ! pyproject.toml -nt "$stamp" ]; then
    return 0
  fi
  # uv resolves and installs the dev extras several times faster than pip. Bytecode is
  # compiled here, once (pip does it by default), not by each process that imports.
  if { [ -x .venv/bin/uv ] || .venv/bin/pip install -q uv; } &&
     .venv/bin/uv pip install -q --compile-bytecode --python .venv/bin/python -e ".[dev]"; then
    :
  else
    echo "setup: uv could not install the virtualenv; using pip" >&2
    .venv/bin/pip install -q --upgrade pip || return 1
    .venv/bin/pip install -q -e ".[dev]" || return 1
  fi
  touch "$stamp"
}

# Called as `install_system || ...`, where errexit does not apply: every step checks.
install_system() {
  local missing
  missing=$(bash .ci/packages.sh "$profile") || return 1
  if [ -n "$missing" ]; then
    echo "setup: installing $(echo "$missing" | tr '\n' ' ')"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || return 1
    # shellcheck disable=SC2086 # one package per word
    # force-unsafe-io: dpkg skips its fsyncs (a crash mid-install means a fresh machine anyway).
    apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io $missing >/dev/null || return 1
  fi
  # Nothing is left to install: the steps start and configure what they own.
  bash .ci/setup-sandbox.sh || return 1
  if [ "$profile" = test ]; then
    for step in .ci/setup-docker.sh .ci/setup-toolchains.sh .ci/setup-browser.sh; do
      if [ -f "$step" ]; then bash "$step" || return 1; fi
    done
  fi
}

if [ "$(id -u)" = 0 ] && [ "${GREENLOOP_SKIP_SYSTEM:-0}" != 1 ]; then
  install_venv > >(sed 's/^/venv: /') 2>&1 &
  venv_pid=$!
  system_status=0
  install_system || system_status=$?
  venv_status=0
  wait "$venv_pid" || venv_status=$?
  if [ "$system_status" != 0 ] || [ "$venv_status" != 0 ]; then
    echo "setup failed (system packages: exit $system_status, virtualenv: exit $venv_status)" >&2
    exit 1
  fi
else
  install_venv
fi
