"""Whether a suite run was read: a run says what state the suite is in only when
its tests reported and its exit code agrees with them.

A run is unreadable when it found no tests, died before any test reported,
gave no per-test results (an exit code alone), or exited non-zero although
every test it reported passed (part of the suite never reported: a crash
after the last result, an error outside any test, a runner that lies). A run
stopped at the output cap says so, whatever its exit code; one that read a
failing test before the cap is read, with that caveat (``caveats``).
"""

from __future__ import annotations

import signal

from ..parsers.models import TestReport

TAIL_CHARS = 800


def _tail(report: TestReport) -> str:
    tail = (report.output_tail or "").strip()
    return f"; the output ends with:\n{tail[-TAIL_CHARS:]}" if tail else ""


def _signal(code: int | None) -> str:
    """How an exit code past 128 says the process died: by which signal."""
    if code is None or not 128 < code < 128 + 65:
        return ""
    try:
        return f" (killed by {signal.Signals(code - 128).name})"
    except ValueError:
        return ""


def _size(n: int) -> str:
    return f"{n / 2**20:g} MB" if n >= 2**20 else f"{n} bytes"


def output_cut(report: TestReport) -> str | None:
    """What a run stopped at the output cap did, None when it was not."""
    if report.output_cut_bytes is None:
        return None
    command = f"`{report.command}`" if report.command else "the test command"
    return (f"{command} printed more than the output cap ({_size(report.output_cut_bytes)}, "
            f"setting output_bytes, --output-bytes) and was stopped there")


def caveats(report: TestReport) -> list[str]:
    """Why a read run's counts may not be the runner's: its tests error at import because
    the checkout lacks a file the project's build generates; they disagree with its own
    total; its output was cut (tests after the cut are not counted)."""
    cut = output_cut(report)
    return [c for c in (report.setup_explains, report.miscount,
                        cut and f"{cut}: the tests after the cut are not counted") if c]


def unreadable_reason(report: TestReport) -> str | None:
    """Why ``report`` does not say the suite's state (None: it does)."""
    command = f"`{report.command}`" if report.command else "the test command"
    code = report.exit_code
    if cut := output_cut(report):
        if not report.tests:
            return f"{cut}, before any test reported{_tail(report)}"
        if not report.totals.problems:
            return f"{cut}; every test that reported before it passed{_tail(report)}"
        return None
    if report.timed_out:
        return f"{command} was killed after its time limit before the suite finished"
    if not report.tests:
        if code in (0, 5, None) and not report.build_error:  # pytest exits 5 when it collects nothing
            return f"{command} found no tests (exit {code})"
        what = "the build failed" if report.build_error else f"{command} exited {code}{_signal(code)}"
        return f"{what} before any test reported{_tail(report)}"
    if not report.per_test:
        return f"{command} exited {code} and no per-test results could be read{_tail(report)}"
    if code not in (0, None) and not report.totals.problems:
        return (f"every test that reported passed, but {command} exited {code}: "
                f"part of the suite did not report{_tail(report)}")
    return None
