#!/usr/bin/env bash
# The Debian packages still missing on this machine, one per line:
#   .ci/packages.sh        what `make demo` needs (bubblewrap, git)
#   .ci/packages.sh test   everything the test suite needs too (docker.io, the
#                          sample projects' toolchains, chromium)
# scripts/setup.sh installs them all with ONE apt-get update and ONE apt-get
# install; the .ci/setup-*.sh steps then find nothing to install and only start
# or configure what they own (dockerd, rustup's default toolchain, caches).
# The lists here and in the steps are the same: each step still installs its
# own packages when it is run alone.
set -euo pipefail

pkg_missing() { ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
need=()

# .ci/setup-sandbox.sh
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v git >/dev/null || need+=(git)

if [ "${1:-}" = test ]; then
  # .ci/setup-docker.sh
  if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then need+=(docker.io); fi
  # .ci/setup-toolchains.sh
  command -v javac >/dev/null || need+=(default-jdk-headless)
  command -v mvn >/dev/null || need+=(maven)
  for pkg in junit5 junit4 libhamcrest-java maven-debian-helper libsurefire-java \
             libmaven-compiler-plugin-java libmaven-resources-plugin-java; do
    if pkg_missing "$pkg"; then need+=("$pkg"); fi
  done
  command -v node >/dev/null || need+=(nodejs)
  command -v npm >/dev/null || need+=(npm)
  command -v cargo >/dev/null || need+=(cargo)
  command -v go >/dev/null || need+=(golang-go)
  command -v cmake >/dev/null || need+=(cmake g++)
  if pkg_missing libgtest-dev; then need+=(libgtest-dev); fi
  # .ci/setup-browser.sh (and tests/workflows/test_reports.py)
  command -v chromium >/dev/null || need+=(chromium)
fi

if [ ${#need[@]} -gt 0 ]; then printf '%s\n' "${need[@]}" | sort -u; fi
