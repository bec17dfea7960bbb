"""The run's human report (Markdown) and its JSON twin."""

from __future__ import annotations

from ..domain.states import SUITE_NOT_READ
from .record import FixOneTestResult, RunSummary, duration, outcome_label


def _totals_line(t, read: bool = True) -> str:
    if t is None:
        return "-"
    parts = [f"{getattr(t, k)} {k}" for k in ("passed", "failed", "errored", "skipped", "xfailed", "xpassed")
             if getattr(t, k)]
    counted = ", ".join(parts) or "no tests"
    return counted if read else f"not read ({counted} reported; see the outcome)"


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= 300 else first[:300] + "..."


def render_markdown(summary: RunSummary, results: list[FixOneTestResult]) -> str:
    """A Markdown report a team can read and share."""
    u = summary.usage
    lines = [
        f"# Greenloop run {summary.run_id}",
        "",
        f"- repository: `{summary.repo}`" + (f" (framework {summary.framework})" if summary.framework else ""),
        f"- outcome: **{outcome_label(summary)}**" + (f": {_one_line(summary.reason)}" if summary.reason else ""),
        f"- duration: {duration(summary.duration_s)}" + (f" (from {summary.started_at} UTC)" if summary.started_at else ""),
        f"- before: {_totals_line(summary.initial, read=summary.baseline_read)}",
        *(f"- caution: {c}" for c in summary.caveats),
        f"- after: {_totals_line(summary.final, read=summary.state not in SUITE_NOT_READ)}",
        f"- fixed {len(summary.fixed)}, skipped {len(summary.skipped)}, escalated {len(summary.escalated)}, "
        f"aborted {len(summary.aborted)}, flaky {len(summary.flaky)}, still failing {len(summary.still_failing)}",
        f"- attempts {summary.attempts}, regressions prevented {summary.regressions_prevented}"
        + (f", fixes rebased {summary.rebased}, re-asked after a conflict {summary.reasked}"
           if summary.rebased or summary.reasked else ""),
        f"- LLM: {u.calls} calls, {u.input_tokens} input + {u.output_tokens} output tokens "
        f"({u.cache_read_input_tokens} read from cache), ${u.cost_usd:.4f}",
    ]
    if summary.aborted:
        lines.append("- aborted: " + ", ".join(f"`{t}`" for t in summary.aborted))
    if summary.base_commit:
        lines.append(f"- base commit: `{summary.base_commit}`" + (f", rebased onto `{summary.rebased_onto}`"
                                                                  if summary.rebased_onto else ""))
    if summary.branch:
        lines.append(f"- branch: `{summary.branch}`")
    if summary.patch:
        lines.append(f"- patch: `{summary.patch}`")
    for note in summary.notes:
        lines.append(f"- note: {note}")
    if summary.state in SUITE_NOT_READ and summary.reason:
        lines += ["", f"## Why the run is {summary.state.value}", "", "```text", summary.reason.rstrip(), "```"]
    if summary.flaky:
        lines += ["", "## Flaky tests (failed, then passed on a re-run; not fixed)", ""]
        lines += [f"- `{t}`" for t in summary.flaky]
    for r in results:
        lines += ["", f"## `{r.test_id}`: {r.state.value}", ""]
        if r.batch is not None:
            lines.append(f"Fix accepted in validation batch {r.batch}.")
        lines += [f"Attempt {a.number} {a.reason} (its model calls: ${a.usage.cost_usd:.4f})." for a in r.remade]
        if r.answer:
            lines.append(f"Answer: {r.answer.choice.value} by {r.answer.by}" + (f" ({r.answer.note})" if r.answer.note else ""))
        for a in r.attempts:
            verdict = a.verdict.value if a.verdict else "-"
            lines.append(f"### Attempt {a.number}: {verdict}")
            if a.usage.calls or a.usage.cost_usd:
                lines.append(f"Cost: {a.usage.input_tokens} input + {a.usage.output_tokens} output tokens, "
                             f"${a.usage.cost_usd:.4f}")
            if a.ran():
                lines.append(a.ran())
            if a.candidates:
                lines += ["", "Candidates (smallest passing kept):", ""] + [f"- {c.line()}" for c in a.candidates] + [""]
            if a.reason:
                lines.append(f"Why: {a.reason}")
            if a.analysis:
                lines += ["", "Analysis:", "", "> " + a.analysis.replace("\n", "\n> ")]
            if a.suspects:
                lines += ["", "Suspects (fault localization, most likely first):", ""]
                lines += [f"{n}. `{s.file}:{s.start}-{s.end}` {s.function} — {'; '.join(s.reasons)}"
                          for n, s in enumerate(a.suspects, 1)]
            if a.rationale:
                lines += ["", f"Rationale: {a.rationale}"]
            if a.diff:
                lines += ["", "```diff", a.diff.rstrip(), "```"]
            lines.append("")
    if summary.still_failing:
        lines += ["", "## Still failing", ""] + [f"- `{t}`" for t in summary.still_failing[:100]]
    return "\n".join(lines).rstrip() + "\n"
