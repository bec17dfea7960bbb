"""The one command-line reader every parser uses."""

from __future__ import annotations

from pathlib import Path

from greenloop.parsers.command import (
    command_words,
    env_assignments,
    option_values,
    plain_words,
    segments,
    tool_words,
    with_package_scripts,
)


def test_words_survive_bad_quoting() -> None:
    assert command_words("pytest -k 'a or b' x.py") == ["pytest", "-k", "a or b", "x.py"]
    assert command_words("pytest -k 'unclosed") == ["pytest", "-k", "'unclosed"]


def test_segments_split_on_shell_operators() -> None:
    assert segments("cmake --build build && ctest -j2 ; echo done | tee x || true") == [
        "cmake --build build", "ctest -j2", "echo done", "tee x", "true"]


def test_tool_words_are_those_of_its_last_invocation_up_to_the_segment_end() -> None:
    words = command_words("pytest -q a.py && python -m pytest -rA b.py; echo x")
    assert tool_words(words, lambda i, w: w == "pytest") == ["-rA", "b.py"]
    assert tool_words(words, lambda i, w: w == "jest") is None


def test_option_values_in_every_spelling() -> None:
    words = command_words("mocha --reporter json --reporter=tap -R dot")
    assert option_values(words, "--reporter", "-R") == ["json", "tap", "dot"]


def test_plain_words_leave_options_and_their_values_out() -> None:
    words = command_words("vitest run -t 'adds' --reporter json src/a.test.ts && echo")
    assert plain_words(words, 1, {"-t"}) == ["run", "json", "src/a.test.ts"]


def test_env_assignments_start_a_segment() -> None:
    assert env_assignments("CI=1 JEST_JUNIT_OUTPUT_DIR=reports npx jest X=y && export A=b; env C=d node") == {
        "CI": "1", "JEST_JUNIT_OUTPUT_DIR": "reports", "A": "b", "C": "d"}


def test_package_scripts_a_command_runs_are_read_too(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(
        '{"scripts": {"test": "mocha --reporter dot", "ci": "JEST_JUNIT_OUTPUT_DIR=out jest --ci"}}')
    assert with_package_scripts("npm t -- --grep 'a b'", tmp_path) == \
        "npm t -- --grep 'a b' ; mocha --reporter dot --grep 'a b'"
    assert with_package_scripts("npm run ci", tmp_path) == "npm run ci ; JEST_JUNIT_OUTPUT_DIR=out jest --ci"
    assert with_package_scripts("npx jest", tmp_path) == "npx jest"
    assert with_package_scripts("npm test", tmp_path / "elsewhere") == "npm test"
