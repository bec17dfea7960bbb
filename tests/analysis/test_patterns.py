"""Pattern classification, expected/actual, error sites and grouping."""

from __future__ import annotations

import pytest

from greenloop.analysis.grouping import group_failures, message_signature
from greenloop.analysis.patterns import FailureKind, classify
from greenloop.parsers.models import Status, TestResult


def failing(message: str, details: str = "", **kw) -> TestResult:
    return TestResult(id=kw.pop("id", "t"), status=Status.FAILED, message=message, details=details, **kw)


@pytest.mark.parametrize("message, kind", [
    ("AssertionError: assert 4 == 5", FailureKind.ASSERTION),
    ("expect(received).toBe(expected)\n\nExpected: 3\nReceived: 4", FailureKind.ASSERTION),
    ("TypeError: 'NoneType' object is not subscriptable", FailureKind.NULL_REFERENCE),
    ("panic: runtime error: invalid memory address or nil pointer dereference", FailureKind.NULL_REFERENCE),
    ("TypeError: Cannot read properties of undefined (reading 'price')", FailureKind.NULL_REFERENCE),
    ("IndexError: list index out of range", FailureKind.INDEX_OUT_OF_RANGE),
    ("panic: runtime error: index out of range [5] with length 3", FailureKind.INDEX_OUT_OF_RANGE),
    ("KeyError: 'kiwi'", FailureKind.KEY_ERROR),
    ("TypeError: unsupported operand type(s) for +: 'int' and 'str'", FailureKind.TYPE_MISMATCH),
    ("ModuleNotFoundError: No module named 'requests'", FailureKind.IMPORT_ERROR),
    ("Error: Cannot find module './missing'", FailureKind.IMPORT_ERROR),
    ("thrown: \"Exceeded timeout of 100 ms for a test.", FailureKind.TIMEOUT),
    ("error[E0308]: mismatched types", FailureKind.BUILD_ERROR),
    ("ERROR at setup of test_report\nConnectionError: db down", FailureKind.FIXTURE_ERROR),
    ("Segmentation fault (core dumped)", FailureKind.CRASH),
    ("something odd happened", FailureKind.OTHER),
])
def test_kinds(message, kind):
    assert classify(failing(message)).kind is kind


@pytest.mark.parametrize("message, details", [
    ("AssertionError: IndexError not raised", ""),                                    # unittest's assertRaises
    ("", "    def test_pop():\n>       assert 'IndexError' in str(err)\nE       AssertionError: assert 'IndexError' in "
         "'KeyError: 3'\n"),                                                          # pytest, the quote in details
    ("AssertionError [ERR_ASSERTION]: Missing expected exception (RangeError).", ""),  # Node's assert.throws
    ("java.lang.AssertionError: expected KeyNotFound, got nothing", ""),
])
def test_an_assertion_quoting_an_error_is_an_assertion(message, details):
    """The assertion's own message may name any error: the failure is the assertion that was raised."""
    c = classify(failing(message, details))
    assert c.kind is FailureKind.ASSERTION
    assert "AssertionError" in c.evidence


@pytest.mark.parametrize("message, details, kind", [
    # The error raised is named first: an assertion in its details (a library's own check) does not change it.
    ("IndexError: list index out of range", "E   AssertionError: in a helper", FailureKind.INDEX_OUT_OF_RANGE),
    ("ERROR at setup of test_report\nAssertionError: KeyError", "", FailureKind.FIXTURE_ERROR),
])
def test_the_raised_error_still_decides(message, details, kind):
    assert classify(failing(message, details)).kind is kind


def test_timed_out_flag_wins():
    assert classify(failing("assert x", timed_out=True)).kind is FailureKind.TIMEOUT


@pytest.mark.parametrize("message, expected, actual", [
    ("assert 4 == 5", "5", "4"),
    ("Expected: \"b\"\nReceived: \"a\"", '"b"', '"a"'),
    ("expected: <12> but was: <10>", "12", "10"),
    ("Price(3) = 700, got 700, want 900", "900", "700"),
    ("assertion `left == right` failed\n  left: 3\n right: 4", "4", "3"),
])
def test_expected_actual(message, expected, actual):
    c = classify(failing(message))
    assert (c.expected, c.actual) == (expected, actual)


def test_error_site_is_the_first_project_frame_outside_the_test():
    details = (
        'File "/abs/proj/tests/test_cart.py", line 9, in test_total\n'
        '    assert cart.total() == 5\n'
        'File "/abs/proj/shop/cart.py", line 14, in total\n'
        'File "/usr/lib/python3.11/functools.py", line 3, in wrapper\n'
    )
    c = classify(failing("ZeroDivisionError", details, file="tests/test_cart.py"),
                 {"tests/test_cart.py", "shop/cart.py"})
    assert [(f.file, f.line) for f in c.project_frames] == [("tests/test_cart.py", 9), ("shop/cart.py", 14)]
    assert (c.error_site.file, c.error_site.line) == ("shop/cart.py", 14)
    assert "shop/cart.py:14" in c.suggestion


def test_grouping_by_site_and_by_masked_message_with_build_errors_first():
    files = {"src/price.js", "test/a.test.js"}
    classified = [
        classify(failing("TypeError: x is not a function", "at price (src/price.js:10:3)", id="a"), files),
        classify(failing("TypeError: y is not a function", "at price (src/price.js:10:3)", id="b"), files),
        classify(failing("KeyError: 'kiwi' at 0x7f00", id="c"), files),
        classify(failing("KeyError: 'plum' at 0x7f99", id="d"), files),
        classify(failing("SyntaxError: Unexpected token", id="e"), files),
    ]
    groups = group_failures(classified)
    assert [g.tests for g in groups] == [["e"], ["a", "b"], ["c", "d"]]
    assert groups[1].root_test == "a" and "src/price.js:10" in groups[1].reason


def test_message_signature_masks_volatile_parts():
    assert message_signature("KeyError: 'a' at 0xdead line 12") == message_signature("KeyError: 'b' at 0xbeef line 99")
