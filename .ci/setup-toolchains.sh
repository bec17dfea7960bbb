#!/usr/bin/env bash
# Toolchains the live runs of the corpus's sample projects need (tests/live;
# run as root; idempotent: installs only what is missing).
#   Debian: a JDK, Maven, JUnit 5 (console launcher + Jupiter in Debian's
#     offline maven-repo), JUnit 4 + Hamcrest, and the Maven plugins the
#     Surefire sample uses (Maven Central is not needed: the tests point Maven
#     at /usr/share/maven-repo);
#   Node.js + npm and Rust (cargo) only when absent (the machine's own win);
#   Go, GoogleTest (libgtest-dev) and CMake for the crash tests (tests/runner/test_crash_resume.py);
#   npm packages are installed per project by the tests (cache:
#     ~/.cache/greenloop-live/npm); pytest comes with the venv's dev extras.
set -euo pipefail

need=()
pkg_missing() { ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

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
command -v chromium >/dev/null || need+=(chromium)  # renders report.html in tests/workflows/test_reports.py

if [ ${#need[@]} -gt 0 ]; then
  echo "setup-toolchains: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# rustup installs carry no default toolchain on some images: cargo then fails
# with "no default is configured". Pick stable when one is installed.
if command -v rustup >/dev/null && ! cargo --version >/dev/null 2>&1; then
  rustup default stable
fi

mkdir -p "${HOME}/.cache/greenloop-live/npm"
