#!/usr/bin/env bash
# Installs what one section of .ci/packages.sh misses (run as root):
#   .ci/install-section.sh SECTION
# The .ci/setup-*.sh steps call it, so each still works alone; under
# scripts/setup.sh the one apt-get install has already run and it finds nothing.
set -euo pipefail
missing=$(bash "$(dirname "$0")/packages.sh" "$1")
if [ -n "$missing" ]; then
  echo "setup-$1: installing $(echo "$missing" | tr '\n' ' ')"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086 # one package per word
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
