#!/usr/bin/env bash
# System packages Greenloop's sandboxes and tests need (run as root; idempotent):
# bubblewrap (the light sandbox), git (workspaces, branches, patches).
set -euo pipefail
bash "$(dirname "$0")/install-section.sh" sandbox
