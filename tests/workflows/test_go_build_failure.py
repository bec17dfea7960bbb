"""A candidate fix that breaks a Go package's build, through the validation queue: the
package's tests cannot run, so the fix is rejected with the compiler's error as the
reason, the fixer's next attempt is told that error, and the run goes on (the other
package's fix is accepted; both tests end fixed). Real workflows on the real dev server,
the go toolchain Debian ships in the real sandbox, the scripted LLM."""

from __future__ import annotations

from pathlib import Path

from tests.live.conftest import require
from tests.workflows.conftest import drive, fix_request, replays
from tests.workflows.test_merge_queue import events, results, verdicts

CENTS = "example.com/shop/price::TestCents"
TWICE = "example.com/shop/count::TestTwice"
FILES = {
    "go.mod": "module example.com/shop\n\ngo 1.19\n",
    "price/price.go": "package price\n\n// Cents is an amount in whole cents.\nfunc Cents(x float64) int {\n"
                      "\treturn int(x * 10)\n}\n",
    "price/price_test.go": "package price\n\nimport \"testing\"\n\nfunc TestCents(t *testing.T) {\n"
                           "\tif got := Cents(1.5); got != 150 {\n\t\tt.Fatalf(\"Cents(1.5) = %d, want 150\", got)\n\t}\n}\n",
    "count/count.go": "package count\n\n// Twice is 2n.\nfunc Twice(n int) int {\n\treturn n + 2\n}\n",
    "count/count_test.go": "package count\n\nimport \"testing\"\n\nfunc TestTwice(t *testing.T) {\n"
                           "\tif got := Twice(3); got != 6 {\n\t\tt.Fatalf(\"Twice(3) = %d, want 6\", got)\n\t}\n}\n",
}
# The first attempt at Cents names a constant that does not exist: price no longer compiles.
BROKEN = "\treturn int(x * hundred)\n"
COMPILER = "undefined: hundred"


def edit(path: str, old: str, new: str) -> dict:
    return {"name": "replace_in_file", "input": {"path": path, "old_text": old, "new_text": new}}


def scenario() -> dict:
    return {"name": "go-build-failure", "default": {"text": "no script"}, "rules": [
        {"trigger": {"role": "analyzer"}, "response": {"text": "## Root Cause\nThe arithmetic is off."}},
        {"priority": 10, "trigger": {"role": "fixer", "turn": 1, "context": "TestCents$", "iteration": 1},
         "response": {"tool_calls": [edit("price/price.go", "\treturn int(x * 10)\n", BROKEN)]}},
        {"trigger": {"role": "fixer", "turn": 1, "context": "TestCents$"},
         "response": {"tool_calls": [edit("price/price.go", "\treturn int(x * 10)\n", "\treturn int(x * 100)\n")]}},
        {"trigger": {"role": "fixer", "turn": 1, "context": "TestTwice$"},
         "response": {"tool_calls": [edit("count/count.go", "return n + 2", "return n * 2")]}},
        {"trigger": {"role": "fixer", "turn": 2}, "response": {"text": "Fixed."}},
    ]}


async def test_a_fix_that_breaks_the_packages_build_is_rejected_with_the_compiler_error(
        temporal_env, scripted, tmp_path):
    require("go")
    repo = tmp_path / "shop"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    server = scripted(scenario())
    request = fix_request(repo, tmp_path, concurrency=2, max_batch=4, validation="queue",
                          test_command="go test -json ./...")
    summary, handle = await drive(temporal_env, request)
    await replays(temporal_env.client, handle)

    run_dir = Path(request.run_dir)
    assert summary.state == "completed", summary
    assert sorted(summary.fixed) == sorted([CENTS, TWICE]) and summary.final.failed == 0
    by_test = results(run_dir)
    cents = by_test[CENTS]
    assert len(verdicts(cents)) == 2 and verdicts(cents)[1] == "PASS", cents["attempts"]
    # The rejection's reason is the compiler's, with the file and line it points at.
    reason = cents["attempts"][0]["reason"]
    assert COMPILER in reason and "price.go:5" in reason, reason
    assert verdicts(by_test[TWICE]) == ["PASS"]
    # The fixer's second attempt was told the compiler's error.
    retry = [r for r in server.requests if r.role == "fixer" and r.context.endswith(CENTS) and r.iteration == 2]
    assert retry and COMPILER in str(retry[0].body["messages"])
    # The check holding the broken edit failed on it alone; Twice's fix, checked with it, was not blamed.
    checks = events(run_dir, "batch_checked")
    failed = [c for c in checks if not c["ok"]]
    assert failed and all(c["still_failing"] == [CENTS] and c["regressions"] == [] for c in failed), checks
    assert any(c["ok"] and TWICE in c["tests"] for c in checks)
    workspace = run_dir / "workspace"
    assert (workspace / "price" / "price.go").read_text().count("x * 100") == 1
    assert "hundred" not in (workspace / "price" / "price.go").read_text()
    assert "n * 2" in (workspace / "count" / "count.go").read_text()
