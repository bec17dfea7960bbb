"""node-tap's TAP (parsers/node_tap.py): tests are the subtests that hold
assertions, named by their enclosing subtests. The stream is node-tap 21's
``--reporter=tap`` output for the test file quoted below (source excerpts
and the runner's process details shortened)."""

from __future__ import annotations

from greenloop.parsers import RunOutput, parse
from greenloop.parsers.models import Status
from tests.parsers.helpers import by_id, write_files

TEST_FILE = """const t = require('tap')
t.test('adds numbers', t => { t.equal(1+1, 2); t.equal(2+2, 5, 'four'); t.end() })
t.test('group', async t => {
  t.test('inner ok', async t => { t.ok(true) })
  t.test('inner bad', async t => { t.same({a:1}, {a:2}) })
})
t.test('skipped', { skip: 'later' }, t => t.end())
t.test('todo', { todo: true }, t => { t.ok(false); t.end() })
t.ok(false, 'top level assert')
"""
OUTPUT = """TAP version 14
1..1
# Subtest: test/a.js
    # Subtest: adds numbers
        ok 1 - should be equal
        not ok 2 - four
          ---
          compare: ===
          at:
            fileName: test/a.js
            lineNumber: 2
            columnNumber: 50
            typeName: Test
          stack: |
            Test.<anonymous> (test/a.js:2:50)
          diff: |
            --- expected
            +++ actual
            @@ -1,1 +1,1 @@
            -5
            +4
          ...
        
        1..2
    not ok 1 - adds numbers # time=31.382ms
      ---
      at:
        fileName: test/a.js
        lineNumber: 2
        columnNumber: 3
        typeName: Object
      ...
    
    # Subtest: group
        # Subtest: inner ok
            ok 1 - should be equal
            1..1
        ok 1 - inner ok # time=2.705ms
        
        # Subtest: inner bad
            not ok 1 - should be equivalent
              ---
              diff: |
                --- expected
                +++ actual
                @@ -1,3 +1,3 @@
                 Object {
                -  "a": 2,
                +  "a": 1,
                 }
              at:
                fileName: test/a.js
                lineNumber: 5
                columnNumber: 38
                typeName: Test
              ...
            
            1..1
        not ok 2 - inner bad # time=6.481ms
          ---
          at:
            fileName: test/a.js
            lineNumber: 5
            columnNumber: 5
            typeName: Test
          ...
        
        1..2
    not ok 2 - group # time=12.093ms
    
    ok 3 - skipped # SKIP later
    ok 4 - todo # TODO
    not ok 5 - top level assert
      ---
      at:
        fileName: test/a.js
        lineNumber: 9
        columnNumber: 3
        typeName: Object
      ...
    
    1..5
    # time=60.535ms
not ok 1 - test/a.js # time=60.535ms
  ---
  exitCode: 1
  signal: null
  ...

# { total: 7, pass: 2, fail: 3, todo: 1, skip: 1 }
# time=1594.875ms
"""


def run(tmp_path, stdout: str, exit_code: int = 1, command: str = "npx tap --reporter=tap test/a.js"):
    root = write_files(tmp_path, {"test/a.js": TEST_FILE, "package.json": '{"devDependencies": {"tap": "^21"}}'})
    return parse(RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, cwd=root, project_root=root))


def test_tests_are_subtests_with_assertions_named_by_their_parents(tmp_path):
    report = run(tmp_path, OUTPUT)
    assert report.framework == "node-tap"
    assert [(t.id, t.status) for t in report.tests] == [
        ("test/a.js > adds numbers", Status.FAILED),
        ("test/a.js > group > inner ok", Status.PASSED),
        ("test/a.js > group > inner bad", Status.FAILED),
        ("test/a.js > skipped", Status.SKIPPED),
        ("test/a.js > todo", Status.SKIPPED),
        ("test/a.js > top level assert", Status.FAILED),
    ]
    tests = by_id(report)
    assert tests["test/a.js > skipped"].native_status == "skip"
    assert tests["test/a.js > todo"].native_status == "todo"


def test_failures_carry_the_assertion_and_the_tests_place(tmp_path):
    tests = by_id(run(tmp_path, OUTPUT))
    adds = tests["test/a.js > adds numbers"]
    assert adds.message is not None and adds.message.startswith("four\n--- expected")
    assert (adds.file, adds.line) == ("test/a.js", 2)
    assert tests["test/a.js > group > inner bad"].file == "test/a.js"
    # node-tap's "# time=..." is not part of a name.
    assert tests["test/a.js > group > inner ok"].duration_s is None


def test_a_file_that_fails_without_a_failing_test_is_reported_itself(tmp_path):
    out = ("TAP version 14\n# Subtest: test/a.js\n    # Subtest: adds numbers\n        ok 1 - should be equal\n"
           "        1..1\n    ok 1 - adds numbers # time=3ms\n    1..1\nnot ok 1 - test/a.js # time=9ms\n"
           "  ---\n  exitCode: 1\n  ...\n1..1\n")
    report = run(tmp_path, out)
    assert [(t.id, t.status) for t in report.tests] == [
        ("test/a.js > adds numbers", Status.PASSED), ("test/a.js", Status.FAILED)]


def test_a_killed_run_fails_the_subtest_that_was_running(tmp_path):
    cut = OUTPUT.split("    # Subtest: group")[0] + "    # Subtest: group\n        # Subtest: inner ok\n"
    report = run(tmp_path, cut, exit_code=124, command="timeout 5 npx tap --reporter=tap test/a.js")
    last = report.tests[-1]
    assert last.id == "test/a.js > group > inner ok" and last.status == Status.FAILED and last.timed_out
    assert report.timed_out
