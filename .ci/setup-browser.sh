#!/usr/bin/env bash
# The browser the Web UI test drives (tests/webui; run as root; idempotent):
# Debian's chromium, used headless through Playwright from PyPI (the venv's dev
# extras). Playwright's own browser downloads are never used.
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  echo "setup-browser: installing chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium
fi
