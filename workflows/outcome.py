"""How a run ended, said the same way everywhere (summary, report, CLI, Web UI).

A run is ``completed`` only when its last suite run was read; a suite that
timed out or could not be read (``SuiteRun.unreadable``) names the outcome
and the reason instead. Pure functions: the workflow calls them. The one-line
``headline`` is in ``reports/record.py``, beside the summary it reads, so the
reports and the CLI say it the same way.
"""

from __future__ import annotations

from ..domain.states import RunOutcome
from ..reports.record import RunSummary, headline
from ..runner.runs import SuiteRun


def suite_outcome(run: SuiteRun) -> tuple[RunOutcome, str] | None:
    """The outcome a suite run forces on the run (and why), or None when it was read."""
    if run.timed_out:
        return RunOutcome.SUITE_TIMED_OUT, run.unreadable or "the suite was killed at its time limit"
    if run.unreadable:
        return RunOutcome.SUITE_UNREADABLE, run.unreadable
    return None


def details(summary: RunSummary) -> str:
    """The run's last current details in the Web UI (Markdown)."""
    text = f"**finished: {summary.state.value}**"
    if summary.reason:
        text += f"\n\n```text\n{summary.reason.strip()}\n```"
    text += f"\n\n{headline(summary)}"
    text += "".join(f"\n\n**caution**: {c}" for c in summary.caveats)
    if summary.report_html:
        text += f"\n\nreport: [{summary.report_html}](file://{summary.report_html})"
    return text
