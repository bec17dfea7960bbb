#!/usr/bin/env bash
# THE list of Debian packages Greenloop's set-up installs: prints those still
# missing on this machine, one per line.
#   .ci/packages.sh            what `make demo` needs (the `sandbox` section)
#   .ci/packages.sh test       everything the test suite needs (every section)
#   .ci/packages.sh SECTION    one step's own: sandbox, docker, toolchains, browser
# scripts/setup.sh installs the `test` list with ONE apt-get update and ONE
# apt-get install; each .ci/setup-<section>.sh step asks for its section (so it
# still works alone) and then starts or configures what it owns.
set -euo pipefail

pkg_missing() { ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
need=()

sandbox() {  # bubblewrap (the light sandbox), git (workspaces, branches, patches)
  command -v bwrap >/dev/null || need+=(bubblewrap)
  command -v git >/dev/null || need+=(git)
}
docker() {
  if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then need+=(docker.io); fi
}
toolchains() {  # the live runs' sample projects and the crash tests (see .ci/setup-toolchains.sh)
  command -v javac >/dev/null || need+=(default-jdk-headless)
  command -v mvn >/dev/null || need+=(maven)
  local pkg
  for pkg in junit5 junit4 libhamcrest-java maven-debian-helper libsurefire-java \
             libmaven-compiler-plugin-java libmaven-resources-plugin-java libgtest-dev; do
    if pkg_missing "$pkg"; then need+=("$pkg"); fi
  done
  command -v node >/dev/null || need+=(nodejs)
  command -v npm >/dev/null || need+=(npm)
  command -v cargo >/dev/null || need+=(cargo)
  command -v go >/dev/null || need+=(golang-go)
  command -v cmake >/dev/null || need+=(cmake g++)
  command -v bundle >/dev/null || need+=(ruby-bundler rake)  # Bundler's offline setup (tests/projectenv)
}
browser() {  # Debian's chromium: the Web UI tests and the rendered report.html
  [ -x /usr/bin/chromium ] || need+=(chromium)
}

case "${1:-demo}" in
  demo) sandbox ;;
  test) sandbox; docker; toolchains; browser ;;
  sandbox|docker|toolchains|browser) "$1" ;;
  *) echo "packages.sh: unknown section '$1' (demo, test, sandbox, docker, toolchains, browser)" >&2; exit 2 ;;
esac

if [ ${#need[@]} -gt 0 ]; then printf '%s\n' "${need[@]}" | sort -u; fi
