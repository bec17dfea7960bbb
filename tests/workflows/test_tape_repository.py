"""End to end: an npm package tested with tape, whose ``npm test`` lints
first (``pretest``) and audits after (``posttest``), both of which fail
offline. The real workflow finds tape, runs only the tests, validates the
scripted fix with the failing test run alone (found by its ``# name``), and
ends completed with the original code restored."""

from __future__ import annotations

import json
from pathlib import Path

from tests.live.conftest import npm_install, require
from tests.live.test_tape_project import BUGGY, FIXED, MATH_TEST, PACKAGE, STRING_TEST
from tests.workflows.conftest import drive, fix_request, replays

FAILING = "add sums two numbers"
SCENARIO = {
    "name": "tape-add",
    "description": "restores add() of a tape-tested package",
    "rules": [
        {"name": "analyzer", "trigger": {"role": "analyzer"},
         "response": {"text": "## Root Cause\nadd() subtracts.\n## Recommended Fix\nAdd instead, in index.js."}},
        {"name": "fix", "trigger": {"role": "fixer", "context": FAILING, "turn": 1},
         "response": {"tool_calls": [{"name": "replace_in_file", "input": {
             "path": "index.js", "old_text": "return a - b;", "new_text": "return a + b;"}}]}},
        {"name": "done", "trigger": {"role": "fixer", "context": FAILING, "turn": 2},
         "response": {"text": "add() now adds."}},
    ],
    "default": {"text": "I have no scripted answer for this request."},
}


async def test_a_tape_package_with_lint_and_audit_hooks_is_driven_to_green(temporal_env, scripted, tmp_path):
    require("node", "npm")
    repo = tmp_path / "tiny-math"
    (repo / "test").mkdir(parents=True)
    (repo / "package.json").write_text(json.dumps(PACKAGE, indent=2))
    (repo / "index.js").write_text(BUGGY)
    (repo / "test" / "math.js").write_text(MATH_TEST)
    (repo / "test" / "strings.js").write_text(STRING_TEST)
    npm_install(repo)
    server = scripted(SCENARIO)

    request = fix_request(repo, tmp_path)
    summary, handle = await drive(temporal_env, request)

    assert summary.state == "completed" and summary.framework == "tape", summary
    assert summary.fixed == [FAILING] and summary.attempts == 1
    assert summary.initial.failed == 1 and summary.final.failed == 0 and summary.final.passed == 3
    assert any("'tests-only' runs tape" in n and "pretest (npm run lint)" in n for n in summary.notes)
    ws = Path(request.run_dir) / "workspace"
    assert (ws / "index.js").read_text() == FIXED
    assert (repo / "index.js").read_text() == BUGGY  # the user's checkout is untouched
    assert any(r.role == "fixer" for r in server.requests)
    await replays(temporal_env.client, handle)
