"""The files people and CI read after a real run (dev server, sandbox, scripted
LLM): report.html (self-contained), junit.xml before and after (valid JUnit
XML, read back with junitparser), summary.json (its versioned schema)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from greenloop.domain.attempts import AttemptRecord
from greenloop.domain.states import FixState, RunOutcome, Verdict
from greenloop.reports.html import highlight_diff, render_html
from greenloop.reports.markdown import render_markdown
from greenloop.reports.record import FixOneTestResult, RunSummary
from greenloop.reports.summary_file import SCHEMA_VERSION, SummaryFile
from greenloop.reports.timeline import Validation, run_time
from greenloop.workflows.outcome import details
from tests.conftest import REPO
from tests.workflows.conftest import DEMO, drive, fix_request

SCENARIOS = DEMO.parent / "scenarios"
TARGET = "tests/test_cart.py::test_discount"


@pytest.mark.parametrize("validation", ["queue", "each"])
async def test_a_run_writes_html_junit_and_summary(temporal_env, demo_repo, scripted, tmp_path, validation):
    scripted(SCENARIOS / "wrong-then-right.yaml")  # attempt 1 FAIL (rolled back / not accepted), attempt 2 PASS
    request = fix_request(demo_repo, tmp_path, select=[TARGET], validation=validation)
    summary, _ = await drive(temporal_env, request)
    run_dir = Path(request.run_dir)
    assert summary.fixed == [TARGET]

    # report.html: one file, nothing fetched, everything a reader needs.
    assert summary.report_html == str(run_dir / "report.html")
    page = Path(summary.report_html).read_text()
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\(|https?://", page, re.I)
    # Only the selected test was driven: the others still fail, and the badge says so (not a green "completed").
    assert "<style>" in page and 'badge left">completed: tests still failing<' in page
    assert re.search(r"<tr><th>duration</th><td>(\d+m )?\d+s <span", page)
    section = page.split(f'<h2 id="{TARGET}">', 1)[1]
    assert section.index("Attempt 1") < section.index("Attempt 2")
    assert 'badge FAIL">FAIL<' in section and 'badge PASS">PASS<' in section
    assert "The discount computation is wrong." in section  # the analysis
    # Fault localization's suspects for each attempt: the discount method first, with why.
    suspects = re.findall(r"<li><code>(shop/cart\.py):(\d+)-\d+</code> ([\w.]+): ([^<]+)</li>", section)
    assert suspects[0][:3] == ("shop/cart.py", "17", "Cart.discount") and "called by the test" in suspects[0][3]
    markdown = Path(summary.report_markdown).read_text()
    assert "Suspects (fault localization, most likely first):" in markdown
    assert "1. `shop/cart.py:17-19` Cart.discount — called by the test" in markdown
    assert '<span class="del">-        return round(self.total() * percent / 100, 2)  # bug' in section
    assert '<span class="add">+        return round(self.total() - percent, 2)  # bug' in section  # attempt 1
    # The timeline: analysed, proposed, applied, run alone, rolled back, then fixed (each mode); analysed,
    # proposed, checked in a batch, not accepted, then checked again and accepted (queue); with times.
    steps = re.findall(r"<tr><td>(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)</td><td><span class=\"badge (\w+)\">", section)
    states = [s for _, s in steps]
    assert states[0] == "ANALYZING" and "FIXING" in states and "VALIDATING" in states
    assert 'end</td><td><span class="badge FIXED">' in section
    if validation == "each":
        assert "edits rolled back" in section
        # The validation's output excerpt, collapsed: pytest's own words about the test run alone.
        assert "1 passed" in section and "1 failed" in section
        assert re.search(r"<details><summary>the end of its output \(\d+ lines\)</summary><pre>", section)
    else:
        checked = re.findall(r"checked in batch-\d+-\d+(?: with \d+ other fix\(es\))?: ([^<]+)</td>", section)
        assert checked == ["the test still fails", "passed"], checked
        assert "fix accepted into the run workspace" in section and "fix accepted in validation batch 2" in section
        # The failed attempt's output excerpt: pytest's own words about the test run alone.
        assert "1 failed" in section
    assert f"${summary.usage.cost_usd:.4f}" in page and f"{summary.usage.input_tokens} input" in page
    # Each attempt says what its model calls cost (the analysis and the fix), and they add up to the run's.
    costs = re.findall(r'<p class="muted">\d+ input \+ \d+ output tokens, \$(\d+\.\d{4})</p>', section)
    assert len(costs) == 2 and all(float(c) > 0 for c in costs), costs
    assert abs(sum(map(float, costs)) - summary.usage.cost_usd) < 0.0002
    # The run's last details in the Web UI name the page.
    assert f"report: [{summary.report_html}](file://{summary.report_html})" in details(summary)

    # junit-before.xml / junit.xml: valid JUnit XML, the suite before (failing) and after (green).
    before, after = JUnitXml.fromfile(summary.junit_before), JUnitXml.fromfile(summary.junit_after)
    assert summary.junit_after == str(run_dir / "junit.xml")
    (suite_before,), (suite_after,) = list(before), list(after)
    assert suite_before.tests == 7 and suite_before.failures == 3 and suite_before.errors == 0
    assert suite_after.tests == 7 and suite_after.failures == 2  # only test_discount was selected
    cases = {(c.classname, c.name): c for c in suite_before}
    discount = cases[("tests/test_cart.py", "test_discount")]
    assert any(isinstance(r, Failure) and "assert" in (r.text or "") for r in discount.result)
    fixed = {(c.classname, c.name): c for c in suite_after}[("tests/test_cart.py", "test_discount")]
    assert not [r for r in fixed.result if isinstance(r, (Failure, Error, Skipped))]

    # summary.json: the versioned document, with every attempt of the driven test.
    doc = SummaryFile.model_validate_json(Path(summary.report_json).read_text())
    assert doc.schema_version == SCHEMA_VERSION and doc.fixed == [TARGET]
    assert [a.verdict.value for a in doc.results[0].attempts] == ["FAIL", "PASS"]
    if validation == "each":
        # Attempt 2 analyses the failure attempt 1's fix left (the test alone), not the first suite run's.
        first, second = (a.analysis.splitlines()[0] for a in doc.results[0].attempts)
        assert first != second, (first, second)
    assert doc.report_html == summary.report_html and doc.junit_before == summary.junit_before

    # What a reader sees: the page rendered offline by headless Chromium, kept as the test's artifact.
    if validation != "queue":  # the default's page is the one kept
        return
    shot = screenshot(Path(summary.report_html), artifacts_dir(tmp_path) / "report-html.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def artifacts_dir(tmp_path: Path) -> Path:
    """Where a test keeps what people look at (CI uploads $GREENLOOP_TEST_ARTIFACTS)."""
    folder = Path(os.environ.get("GREENLOOP_TEST_ARTIFACTS") or tmp_path / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def screenshot(page: Path, dest: Path) -> Path:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing (apt-get install chromium)")
        pytest.skip("chromium is not installed: the page is not rendered")
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--window-size=1200,1700", f"--screenshot={dest}", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and dest.is_file(), done.stderr[-2000:]
    return dest


def test_schema_command_prints_the_summary_schema():
    done = subprocess.run([sys.executable, "-m", "greenloop.cli.main", "schema", "summary"], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    assert {"run_id", "state", "fixed", "still_failing", "usage", "results", "report_html"} <= set(schema["properties"])
    assert "AttemptRecord" in schema["$defs"]
    assert all(p.get("description") for p in schema["properties"].values())  # every field says what it is


def test_diff_highlighting_escapes_and_marks_lines():
    html = highlight_diff("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a < b\n+a <= b\n ctx")
    assert '<span class="meta">--- a/x.py</span>' in html and '<span class="hunk">@@ -1 +1 @@</span>' in html
    assert '<span class="del">-a &lt; b</span>' in html and '<span class="add">+a &lt;= b</span>' in html
    assert " ctx\n" in html


ANALYSIS = ("wrong_value: assertion compares 3 with 5\n## Root Cause\nThe cart **adds** `a < b`.\n\n"
            "<script>alert(1)</script> [x](javascript:alert(1))\n- one\n- two")


def rendered(**fields) -> tuple[str, str]:
    """(report.html, report.md) of a run with one test and two attempts with their own analyses."""
    attempts = [AttemptRecord(number=1, analysis=ANALYSIS, verdict=Verdict.FAIL),
                AttemptRecord(number=2, analysis="other: it now raises KeyError", verdict=Verdict.PASS)]
    summary = RunSummary(run_id="r1", repo="/repo", state=RunOutcome.COMPLETED, fixed=["t::a"], duration_s=245,
                         started_at="2026-11-26T17:00:00", **fields)
    results = [FixOneTestResult(test_id="t::a", state=FixState.FIXED, attempts=attempts)]
    output = "\n".join(f"line {n}" for n in range(50))
    checks = {"t::a": {1: Validation(attempt=1, status="failed", command="pytest t::a", output=output)}}
    return render_html(summary, results, {}, checks), render_markdown(summary, results)


def test_the_analysis_markdown_is_rendered_and_its_html_escaped():
    page, _ = rendered()
    first = page.split("<h3>Attempt 1", 1)[1].split("<h3>Attempt 2", 1)[0]
    assert "<h2>Root Cause</h2>" in first and "<strong>adds</strong>" in first and "<code>a &lt; b</code>" in first
    assert "<li>one</li>" in first and "&lt;script&gt;alert(1)&lt;/script&gt;" in first
    assert "<script" not in page and 'href="javascript' not in page
    # Each attempt shows its own analysis.
    assert "it now raises KeyError" in page.split("<h3>Attempt 2", 1)[1] and "KeyError" not in first


def test_the_header_says_duration_aborted_tests_and_whether_the_suite_is_green():
    page, md = rendered()
    assert 'badge green">completed: all green<' in page and "outcome: **completed: all green**" in md
    assert "<tr><th>duration</th><td>4m 05s" in page and "- duration: 4m 05s (from 2026-11-26T17:00:00 UTC)" in md
    page, md = rendered(skipped=["t::b"], still_failing=["t::b"], aborted=["t::c", "t::d"])
    assert 'badge left">completed: tests still failing<' in page and 'badge green"' not in page
    assert "outcome: **completed: tests still failing**" in md
    assert "<tr><th>aborted</th><td><code>t::c</code>, <code>t::d</code></td></tr>" in page
    assert "- aborted: `t::c`, `t::d`" in md
    page, _ = rendered(escalated=["t::e"])
    assert "completed: tests still failing" in page
    # Long validation output is collapsed.
    assert "<details><summary>the end of its output (50 lines)</summary><pre>line 0\n" in page


def test_run_time_is_from_the_first_logged_step():
    events = [{"timestamp": "2026-11-26T17:00:05"}, {"timestamp": "garbled"}, {"timestamp": "2026-11-26T17:00:00"}]
    start = datetime(2026, 11, 26, 17, tzinfo=UTC).timestamp()
    assert run_time(events, now=start + 3723) == ("2026-11-26T17:00:00", 3723)
    assert run_time([]) == (None, None)
