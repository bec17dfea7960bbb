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

bash "$(dirname "$0")/install-section.sh" toolchains

# rustup installs carry no default toolchain on some images: cargo then fails
# with "no default is configured". Pick stable when one is installed.
if command -v rustup >/dev/null && ! cargo --version >/dev/null 2>&1; then
  rustup default stable
fi

mkdir -p "${HOME}/.cache/greenloop-live/npm"
