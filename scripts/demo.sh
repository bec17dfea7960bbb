#!/usr/bin/env bash
# The README's main command: drive the bundled sample project (three real
# failing pytest tests) back to green on the embedded defaults: a local
# Temporal dev server with its Web UI, an in-process worker, the bwrap
# sandbox, and Claude when ANTHROPIC_API_KEY is set — otherwise the scripted
# LLM replaying samples/scenarios/demo-python.yaml. The sample itself is never
# edited: the fixes land in the run's workspace, patch and branch.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(run samples/demo-python)
if [ -z "${ANTHROPIC_API_KEY:-}" ]; then
  echo "ANTHROPIC_API_KEY is not set: using the scripted LLM (samples/scenarios/demo-python.yaml)"
  args+=(--scripted samples/scenarios/demo-python.yaml)
fi
exec .venv/bin/greenloop "${args[@]}" "$@"
