"""The JSON report reader the Jest, Vitest, pytest and googletest parsers share."""

from __future__ import annotations

from pathlib import Path

import pytest

from greenloop.parsers.json_report import first_json_object, read_json_file


def test_a_whole_document_is_read(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_text('{"tests": [{"id": 1}]}')
    assert read_json_file(tmp_path / "r.json") == ({"tests": [{"id": 1}]}, None)


def test_missing_truncated_and_oversized_reports_give_a_reason(tmp_path: Path) -> None:
    assert read_json_file(tmp_path / "none.json") == (None, "not written")
    (tmp_path / "cut.json").write_text('{"tests": [{"id": 1}, {"id"')
    data, why = read_json_file(tmp_path / "cut.json")
    assert data is None and why and why.startswith("truncated or malformed (JSONDecodeError")
    (tmp_path / "big.json").write_text('{"a": "' + "x" * 100 + '"}')
    assert read_json_file(tmp_path / "big.json", max_bytes=50) == (None, "too large to read")


def test_the_document_after_the_tests_own_output() -> None:
    text = "console.log from a test {not json\n  {\"numTotalTests\": 2, \"x\": {\"y\": [1]}}\ntrailing"
    assert first_json_object(text) == {"numTotalTests": 2, "x": {"y": [1]}}
    with pytest.raises(ValueError):
        first_json_object("no document here\n{broken")
