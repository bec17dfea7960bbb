"""The streaming TAP reader (parsers/tap.py), on synthetic streams written
from the TAP 12/13/14 rules and node:test's TAP reporter."""

from __future__ import annotations

from greenloop.parsers.tap import TapReader, parse_description, parse_yaml, unescape


def read(text: str) -> tuple[TapReader, list]:
    reader = TapReader(text.splitlines())
    return reader, list(reader)


def test_tap12_points_numbers_and_descriptions() -> None:
    reader, points = read("1..4\nok 1 first\nnot ok 2 - second one\nok third\nok 4 -\n")
    assert [(p.ok, p.number, p.description) for p in points] == [
        (True, 1, "first"), (False, 2, "second one"), (True, None, "third"), (True, 4, "")]
    assert reader.version is None and reader.effective_version == 12
    assert reader.plan is not None and reader.plan.count == 4


def test_version_and_plan_at_the_end() -> None:
    reader, points = read("TAP version 14\nok 1 - a\nok 2 - b\n1..2\n")
    assert reader.version == 14
    assert reader.plan is not None and (reader.plan.start, reader.plan.end) == (1, 2)
    assert len(points) == 2


def test_skip_all_plan_keeps_its_reason() -> None:
    reader, points = read("1..0 # SKIP no database here\n")
    assert points == []
    assert reader.plan is not None and reader.plan.count == 0
    assert reader.plan.comment == "SKIP no database here"


def test_directives_with_and_without_reasons() -> None:
    _, points = read(
        "ok 1 - cache warm # SKIP redis missing\n"
        "not ok 2 - parser handles emoji # TODO later\n"
        "ok 3 - plain # skipped\n"
        "ok 4 - mocha style # SKIP -\n"
        "not ok 5 - issue #todoList is not a directive\n"
    )
    assert [(p.directive, p.reason) for p in points] == [
        ("skip", "redis missing"), ("todo", "later"), ("skip", None), ("skip", "-"), (None, None)]
    assert points[1].passed and not points[4].passed
    assert points[4].description == "issue #todoList is not a directive"


def test_escaped_hash_and_backslash_in_descriptions() -> None:
    desc, directive, reason = parse_description(r"costs \#1 and C:\\dir # SKIP see \#7")
    assert desc == r"costs #1 and C:\dir"
    assert (directive, reason) == ("skip", "see #7")
    assert unescape(r"two\nlines") == "two\nlines"


def test_yaml_diagnostics_block_is_parsed() -> None:
    _, points = read(
        "TAP version 13\n"
        "not ok 1 - adds numbers\n"
        "  ---\n"
        "  duration_ms: 1.5\n"
        "  failureType: 'testCodeFailure'\n"
        "  error: |-\n"
        "    expected 3\n"
        "    got 4\n"
        "  expected:\n"
        "    total: 3\n"
        "  ...\n"
        "ok 2 - other\n"
    )
    first = points[0]
    assert first.diag("duration_ms") == 1.5
    assert first.diag("error") == "expected 3\ngot 4"
    assert first.diag("expected") == {"total": 3}
    assert "failureType" in (first.yaml_text or "")
    assert points[1].diagnostics is None


def test_invalid_yaml_falls_back_to_a_key_scan() -> None:
    data = parse_yaml("message: it broke: badly [\nstack: |-\n  at x (a.js:1:2)\n")
    assert data is not None
    assert data["message"].startswith("it broke")
    assert data["stack"] == "at x (a.js:1:2)"


def test_node_subtests_carry_their_ancestry() -> None:
    text = (
        "TAP version 13\n"
        "# Subtest: inventory\n"
        "    # Subtest: restock\n"
        "        # Subtest: adds items\n"
        "        ok 1 - adds items\n"
        "          ---\n"
        "          duration_ms: 0.2\n"
        "          ...\n"
        "        1..1\n"
        "    ok 1 - restock\n"
        "      ---\n"
        "      type: 'suite'\n"
        "      ...\n"
        "    # Subtest: sells out\n"
        "    not ok 2 - sells out\n"
        "    1..2\n"
        "not ok 1 - inventory\n"
        "# Subtest: standalone\n"
        "ok 2 - standalone\n"
        "1..2\n"
    )
    reader, points = read(text)
    got = [(p.ancestry, p.description, p.depth, p.has_children) for p in points]
    assert got == [
        (("inventory", "restock"), "adds items", 2, False),
        (("inventory",), "restock", 1, True),
        (("inventory",), "sells out", 1, False),
        ((), "inventory", 0, True),
        ((), "standalone", 0, False),
    ]
    assert points[1].diag("type") == "suite"
    assert reader.unfinished == ()


def test_indented_child_stream_without_subtest_lines_gets_parent_names() -> None:
    text = (
        "    ok 1 - child a\n"
        "        not ok 1 - grandchild\n"
        "    not ok 2 - child b\n"
        "    1..2\n"
        "not ok 1 - parent\n"
        "    ok 1 - second child\n"
        "ok 2 - second parent\n"
    )
    _, points = read(text)
    assert [(p.ancestry, p.description) for p in points] == [
        (("parent",), "child a"),
        (("parent", "child b"), "grandchild"),
        (("parent",), "child b"),
        ((), "parent"),
        (("second parent",), "second child"),
        ((), "second parent"),
    ]


def test_comments_counters_and_garbage_lines() -> None:
    text = (
        "> pkg@1.0.0 test\n"
        "# starting\n"
        "ok 1 - one\n"
        "console output from a test\n"
        "# tests 1\n"
        "# pass 1\n"
        "# duration_ms 12.5\n"
    )
    reader, points = read(text)
    assert points[0].comments == ["> pkg@1.0.0 test", "starting"]
    assert points[0].trailing == ["console output from a test", "tests 1", "pass 1", "duration_ms 12.5"]
    assert reader.counters == {"tests": 1.0, "pass": 1.0, "duration_ms": 12.5}


def test_tap12_failure_lines_follow_the_point() -> None:
    _, points = read("not ok 1 suite adds\n  expected 1\n  Error: boom\n      at f (x.js:1:1)\nok 2 suite b\n")
    assert points[0].trailing == ["  expected 1", "  Error: boom", "      at f (x.js:1:1)"]
    assert points[1].comments == points[0].trailing


def test_bail_out_is_recorded() -> None:
    reader, points = read("ok 1 - a\nBail out! database is down\n")
    assert reader.bail_out == "database is down"
    assert len(points) == 1


def test_killed_stream_reports_the_unfinished_subtest() -> None:
    reader, points = read("# Subtest: slow suite\n    # Subtest: hangs\n    ok 0 - warm\n    # Subtest: hangs forever\n")
    assert [p.description for p in points] == ["warm"]
    assert points[0].ancestry == ("slow suite",)
    assert reader.unfinished == ("slow suite", "hangs forever")


def test_truncated_yaml_block_warns_and_keeps_the_point() -> None:
    reader, points = read("not ok 1 - a\n  ---\n  error: 'cut'\n")
    assert len(points) == 1 and points[0].diag("error") == "cut"
    assert any("YAML" in w for w in reader.warnings)


def test_unterminated_yaml_block_ends_at_a_line_to_its_left() -> None:
    reader, points = read("not ok 1 - a\n  ---\n  error: 'x'\nok 2 - b\n")
    assert [p.description for p in points] == ["a", "b"]
    assert points[0].diag("error") == "x"
    assert reader.warnings


def test_empty_and_binary_garbage_input() -> None:
    reader, points = read("")
    assert points == [] and not reader.saw_tap
    reader, points = read("\x00\x01\xff garbage\n\ufffd\ufffd\n--- not yaml\n...\n")
    assert points == [] and not reader.saw_tap


def test_comments_are_bounded() -> None:
    text = "\n".join(f"log line {i}" for i in range(10_000)) + "\nok 1 - after noise\n"
    _, points = read(text)
    assert 0 < len(points[0].comments) <= 200
