"""End to end: an npm workspace whose bug is in one package (`lib`) and whose
failing tests are in another (`app`, which imports lib by its workspace name).
The setup installs every member from the root (app's own dependency, the
links to the members), the members' tests run from the root rather than the
root's build/lint/coverage chain, and the scripted fix of lib turns app's
tests green."""

from __future__ import annotations

from pathlib import Path

from tests.live.conftest import require
from tests.projectenv.conftest import LIB_BUGGY, LIB_FIXED, make_npm_workspace
from tests.workflows.conftest import drive, fix_request, replays

FAILING = ("a bill adds its prices", "a bill skips what is not a price")
SCENARIO = {
    "name": "npm-workspace-lib",
    "description": "restores total() of the workspace's lib, which app's tests use",
    "rules": [
        {"name": "analyzer", "trigger": {"role": "analyzer"},
         "response": {"text": "## Root Cause\n@mono/lib's total() drops the first price.\n"
                              "## Recommended Fix\nSum every price, in packages/lib/index.js."}},
        {"name": "fix", "trigger": {"role": "fixer", "turn": 1},
         "response": {"tool_calls": [{"name": "replace_in_file", "input": {
             "path": "packages/lib/index.js", "old_text": "prices.slice(1).reduce", "new_text": "prices.reduce"}}]}},
        {"name": "done", "trigger": {"role": "fixer", "turn": 2}, "response": {"text": "total() sums every price."}},
    ],
    "default": {"text": "I have no scripted answer for this request."},
}


async def test_a_bug_in_one_workspace_package_is_fixed_from_the_tests_of_another(
        temporal_env, scripted, tmp_path):
    require("node", "npm")
    npm_workspace = make_npm_workspace(tmp_path / "mono")
    server = scripted(SCENARIO)

    request = fix_request(npm_workspace, tmp_path)
    summary, handle = await drive(temporal_env, request)

    assert summary.state == "completed" and summary.framework == "node-test", summary
    assert sorted(summary.fixed) == sorted(FAILING)
    assert summary.initial.failed == 2 and summary.initial.passed == 1
    assert summary.final.failed == 0 and summary.final.passed == 3
    ws = Path(request.run_dir) / "workspace"
    assert (ws / "packages" / "lib" / "index.js").read_text() == LIB_FIXED
    assert (npm_workspace / "packages" / "lib" / "index.js").read_text() == LIB_BUGGY  # the user's checkout
    assert any(r.role == "fixer" for r in server.requests)
    await replays(temporal_env.client, handle)
