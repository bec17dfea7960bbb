"""AVA through its TAP reporter (parsers/ava.py). The stream is AVA 6's
``ava --tap`` output for two files (``test/a.js``: a failing, a passing, a
skipped and a todo test; ``test/b.js``: one passing test)."""

from __future__ import annotations

from greenloop.parsers import RunOutput, parse
from greenloop.parsers.models import Status

OUTPUT = """TAP version 13
ok 1 - b › bee
ok 2 - a › later # SKIP
not ok 3 - a › someday # TODO
not ok 4 - a › adds
  ---
    name: AssertionError
    assertion: t.is()
    details:
      'Difference (- actual, + expected):': |-
        - 2
        + 3
    message: ''
    at: >-
      ExecutionContext.is
      (file:///work/node_modules/ava/lib/assert.js:309:16)
  ...
ok 5 - a › passes

1..5
# tests 4
# pass 2
# skip 2
# fail 1

"""


def test_ava_tap_points_are_tests_named_by_file_and_title():
    report = parse(RunOutput(command="npx ava --tap", exit_code=1, stdout_text=OUTPUT))
    assert report.framework == "ava", report.detection
    assert [(t.id, t.status, t.native_status) for t in report.tests] == [
        ("b › bee", Status.PASSED, None), ("a › later", Status.SKIPPED, "skip"),
        ("a › someday", Status.SKIPPED, "todo"), ("a › adds", Status.FAILED, None),
        ("a › passes", Status.PASSED, None)]
