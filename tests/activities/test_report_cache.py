"""A suite report is parsed once per worker and shared by the run's children: each
reader gets its own list of tests, and a report rewritten on disk is read again."""

from __future__ import annotations

import os

import pytest

from greenloop.activities.testing import _parsed_report, load_report
from greenloop.domain.errors import GreenloopError
from greenloop.parsers.models import Status, TestReport, TestResult


def write(path, *ids: str) -> None:
    path.write_text(TestReport(framework="pytest", command="pytest",
                               tests=[TestResult(id=i, status=Status.FAILED) for i in ids]).model_dump_json())


def test_a_report_is_parsed_once_and_each_reader_has_its_own_list(tmp_path):
    path = tmp_path / "report.json"
    write(path, "t::a", "t::b")
    _parsed_report.cache_clear()
    first = load_report(str(path))
    first.tests = [t for t in first.tests if t.id != "t::a"]  # what analyze_suite does with the flaky tests
    second = load_report(str(path))
    assert [t.id for t in second.tests] == ["t::a", "t::b"]
    assert _parsed_report.cache_info().misses == 1 and _parsed_report.cache_info().hits == 1


def test_a_report_rewritten_on_disk_is_read_again(tmp_path):
    path = tmp_path / "report.json"
    write(path, "t::a")
    assert [t.id for t in load_report(str(path)).tests] == ["t::a"]
    write(path, "t::a", "t::c")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert [t.id for t in load_report(str(path)).tests] == ["t::a", "t::c"]


def test_a_missing_report_is_a_typed_error(tmp_path):
    with pytest.raises(GreenloopError):
        load_report(str(tmp_path / "gone.json"))
