#!/usr/bin/env bash
# The README's main command. Runs the bundled sample project's failing test
# suite and shows Greenloop's parsed per-test report.
set -euo pipefail
cd "$(dirname "$0")/.."
sample=samples/demo-python
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cmd="python -m pytest -p no:cacheprovider -p no:asyncio --junitxml=$out/junit.xml"
echo "\$ (cd $sample && $cmd)"
set +e
(cd "$sample" && PATH="$PWD/../../.venv/bin:$PATH" $cmd >"$out/stdout" 2>"$out/stderr")
code=$?
set -e
.venv/bin/greenloop parse --command "$cmd" --exit-code "$code" \
  --stdout "$out/stdout" --stderr "$out/stderr" --cwd "$sample"
