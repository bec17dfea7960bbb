#!/usr/bin/env bash
# The browser the Web UI test drives (tests/webui; run as root; idempotent):
# Debian's chromium, used headless through Playwright from PyPI (the venv's dev
# extras). Playwright's own browser downloads are never used.
set -euo pipefail
bash "$(dirname "$0")/install-section.sh" browser
