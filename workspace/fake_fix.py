"""No fake fixes. Fixers are known to "fix" a test by deleting, skipping or
weakening it. This check compares each edited file before and after and
names what an edit set does to tests: test files deleted, test definitions
removed, skip/xfail/ignore markers added, assertions removed.

It is the static half; the dynamic half is the validation, which compares
the full suite's per-test results before and after (fewer tests passing, or
tests gone, is a regression).
"""

from __future__ import annotations

import re

from .policy import is_test_path

# A line that defines a test, across the frameworks Greenloop parses.
TEST_DEF = re.compile(
    r"^\s*(async\s+)?def\s+test\w*\s*\(|"                      # pytest / unittest
    r"\b(it|test|specify|example)(\.each\b[^(]*)?\s*\(\s*['\"`]|"  # Jest/Vitest/Mocha/node:test/RSpec
    r"\bit\s+['\"]|"                                            # RSpec without parentheses
    r"^\s*func\s+(Test|Example|Benchmark)\w*\s*\(|"             # Go
    r"#\[test\]|#\[tokio::test\]|"                              # Rust
    r"@(Test|ParameterizedTest|RepeatedTest|TestFactory)\b|"    # JUnit
    r"\bfunction\s+test\w*\s*\(|@test\b|"                       # PHPUnit
    r"\bTEST(_F|_P)?\s*\("                                      # googletest
)

SKIP_MARKER = re.compile(
    r"@pytest\.mark\.(skip|skipif|xfail)\b|pytest\.(skip|xfail)\s*\(|@unittest\.(skip\w*|expectedFailure)\b|"
    r"self\.skipTest\s*\(|\b(it|test|describe|context)\.(skip|todo|failing)\s*\(|\b(xit|xdescribe|xtest|xcontext|"
    r"xspecify)\s*[\s(]|\bt\.(Skip|SkipNow|Skipf)\s*\(|#\[ignore\]|@(Disabled|Ignore)\b|"
    r"Assume\.assume|assumeTrue\s*\(|markTestSkipped|markTestIncomplete|GTEST_SKIP|\bDISABLED_\w+|"
    r"\bpending\s*[\s(]|\bskip\s*\(\s*['\"]|this\.skip\s*\("
)

ASSERTION = re.compile(
    r"\bassert\w*\b|\bexpect\s*\(|\.should\b|\bt\.(Error|Errorf|Fatal|Fatalf|Fail)\b|"
    r"\bassert(_eq|_ne)?!|\bEXPECT_\w+|\bASSERT_\w+|\$this->assert\w+|\bassertThat\b"
)


def _count(pattern: re.Pattern[str], text: str) -> int:
    return sum(1 for line in text.splitlines() if pattern.search(line))


def fake_fix_reasons(changes: list[tuple[str, str | None, str | None]], target_test_file: str | None) -> list[str]:
    """Why an edit set looks like a fake fix; empty when it does not.

    ``changes`` holds (path, before, after) for every edited file; ``None``
    before means created, ``None`` after means deleted.
    """
    reasons: list[str] = []
    for path, before, after in changes:
        tests_here = is_test_path(path) or path == target_test_file
        if before is not None and after is None and (tests_here or _count(TEST_DEF, before)):
            reasons.append(f"deletes the test file {path}")
            continue
        before, after = before or "", after or ""
        removed_defs = _count(TEST_DEF, before) - _count(TEST_DEF, after)
        if removed_defs > 0:
            reasons.append(f"removes {removed_defs} test definition(s) from {path}")
        added_skips = _count(SKIP_MARKER, after) - _count(SKIP_MARKER, before)
        if added_skips > 0:
            reasons.append(f"adds {added_skips} skip/xfail/ignore marker(s) in {path}")
        if tests_here:
            removed_asserts = _count(ASSERTION, before) - _count(ASSERTION, after)
            if removed_asserts > 0:
                reasons.append(f"removes {removed_asserts} assertion(s) from {path}")
    return reasons
