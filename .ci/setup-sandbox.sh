#!/usr/bin/env bash
# System packages Greenloop's sandboxes and tests need (run as root; idempotent):
# bubblewrap (the light sandbox), git (workspaces, branches, patches).
set -euo pipefail
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v git >/dev/null || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
