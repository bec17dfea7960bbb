"""``report.html``: the run's report as one self-contained page (inline CSS,
no script, no font or image fetched: it opens offline, attached to a CI job
or a ticket). The outcome (``completed`` says whether the suite is green), the
run's duration, a timeline of each test's steps and states, and per attempt
the analysis (its Markdown rendered, any HTML in it escaped), the rationale,
the highlighted diff, the verdict and the end of the validation's output
(collapsed); cost and tokens."""

from __future__ import annotations

from html import escape

from markdown_it import MarkdownIt

from ..domain.attempts import AttemptRecord
from ..domain.states import SUITE_NOT_READ
from .markdown import _totals_line
from .record import FixOneTestResult, RunSummary, duration, headline, outcome_label, tests_left
from .timeline import Step, Validation

CSS = """
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;
color:#1f2328}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}h3{font-size:1rem}
code,pre{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f6f8fa;padding:.6rem;overflow:auto;border-radius:6px;white-space:pre}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:left}
.badge{display:inline-block;border-radius:1em;padding:0 .6em;font-weight:600;font-size:.85em;color:#fff;
background:#6e7781}
.FIXED,.PASS,.completed,.green{background:#1a7f37}.left{background:#9a6700}.FAIL,.REGRESSION,.ABORTED,.aborted,.failed{background:#cf222e}
.ESCALATED,.SKIPPED,.suite_unreadable,.suite_timed_out,.setup_failed{background:#9a6700}
.ANALYZING,.FIXING,.VALIDATING,.PENDING,.running{background:#0969da}
.diff .add{color:#1a7f37;background:#dafbe1;display:block}.diff .del{color:#cf222e;background:#ffebe9;display:block}
.diff .hunk{color:#8250df;display:block}.diff .meta{color:#57606a;font-weight:600;display:block}
blockquote{margin:0;padding-left:1rem;border-left:3px solid #d0d7de;color:#57606a}
blockquote h1,blockquote h2,blockquote h3{font-size:1rem;margin:.6rem 0 .2rem;border:0}
details summary{cursor:pointer;color:#57606a}
.muted{color:#57606a}
"""


def badge(text: str, kind: str | None = None) -> str:
    return f'<span class="badge {escape(kind or text)}">{escape(text)}</span>'


# CommonMark with raw HTML off: HTML in the text shows as text, unsafe link schemes are dropped.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def markdown_html(text: str) -> str:
    """Markdown (the LLM's analysis) as HTML a page can hold: any HTML in it is escaped."""
    return _MARKDOWN.render(text)


def outcome_badge(summary: RunSummary) -> str:
    """``completed`` green only when nothing is left failing."""
    kind = summary.state.value if summary.state.value != "completed" else "left" if tests_left(summary) else "green"
    return badge(outcome_label(summary), kind)


def highlight_diff(diff: str) -> str:
    """A unified diff with added, removed, hunk and file lines marked (escaped)."""
    rows = []
    for line in diff.rstrip().splitlines():
        kind = ("meta" if line.startswith(("+++", "---", "diff ", "index ")) else "add" if line.startswith("+")
                else "del" if line.startswith("-") else "hunk" if line.startswith("@@") else "")
        rows.append(f'<span class="{kind}">{escape(line)}</span>' if kind else escape(line) + "\n")
    return '<pre class="diff">' + "".join(rows) + "</pre>"


def _attempt(a: AttemptRecord, validation: Validation | None) -> list[str]:
    out = [f"<h3>Attempt {a.number} {badge(a.verdict.value) if a.verdict else badge('no verdict')}</h3>"]
    if a.usage.calls or a.usage.cost_usd:
        out.append(f"<p class=\"muted\">{a.usage.input_tokens} input + {a.usage.output_tokens} output tokens, "
                   f"${a.usage.cost_usd:.4f}</p>")
    if a.ran():
        out.append(f"<p class=\"muted\">{escape(a.ran())}</p>")
    if a.candidates:
        out.append("<p><b>Candidates</b> (smallest passing kept):</p><ul>"
                   + "".join(f"<li>{escape(c.line())}</li>" for c in a.candidates) + "</ul>")
    if a.reason:
        out.append(f"<p><b>Why:</b> {escape(a.reason)}</p>")
    if a.analysis:
        out.append(f"<p><b>Analysis</b></p><blockquote>{markdown_html(a.analysis)}</blockquote>")
    if a.suspects:
        out.append("<p><b>Suspects</b> <span class=\"muted\">(fault localization, most likely first)</span></p><ol>"
                   + "".join(f"<li><code>{escape(s.file)}:{s.start}-{s.end}</code> {escape(s.function)}: "
                             f"{escape('; '.join(s.reasons))}</li>" for s in a.suspects) + "</ol>")
    if a.rationale:
        out.append(f"<p><b>Rationale:</b> {escape(a.rationale)}</p>")
    if a.files:
        out.append("<p><b>Files:</b> " + ", ".join(f"<code>{escape(f)}</code>" for f in a.files) + "</p>")
    if a.diff:
        out.append(highlight_diff(a.diff))
    if validation is not None:
        out.append(f"<p><b>Validation</b> (the test alone: {escape(validation.status or 'not found')}) "
                   f"<code>{escape(validation.command)}</code></p>")
        if validation.output:
            lines = validation.output.count("\n") + 1
            out.append(f"<details><summary>the end of its output ({lines} line{'s' if lines > 1 else ''})</summary>"
                       f"<pre>{escape(validation.output)}</pre></details>")
    return out


def _timeline(steps: list[Step], result: FixOneTestResult) -> list[str]:
    rows = [f"<tr><td>{escape(s.at.replace('T', ' '))}</td><td>{badge(s.state)}</td><td>{escape(s.what)}</td></tr>"
            for s in steps]
    rows.append(f'<tr><td class="muted">end</td><td>{badge(result.state.value)}</td><td>'
                + (escape(f"answered {result.answer.choice.value} by {result.answer.by}") if result.answer else "")
                + "</td></tr>")
    return ["<table><tr><th>time (UTC)</th><th>state</th><th>step</th></tr>", *rows, "</table>"]


def render_html(summary: RunSummary, results: list[FixOneTestResult], steps: dict[str, list[Step]],
                checks: dict[str, dict[int, Validation]]) -> str:
    """The report page."""
    u = summary.usage
    facts = [
        ("repository", f"<code>{escape(summary.repo)}</code>"
         + (f" ({escape(summary.framework)})" if summary.framework else "")),
        ("outcome", outcome_badge(summary) + " " + escape(headline(summary).split(": ", 1)[1])),
        ("duration", escape(duration(summary.duration_s))
         + (f' <span class="muted">(from {escape(summary.started_at.replace("T", " "))} UTC)</span>'
            if summary.started_at else "")),
        ("before", escape(_totals_line(summary.initial, read=summary.baseline_read))),
        *(("caution", f"<b>{escape(c)}</b>") for c in summary.caveats),
        ("after", escape(_totals_line(summary.final, read=summary.state not in SUITE_NOT_READ))),
        ("attempts", f"{summary.attempts} (regressions prevented: {summary.regressions_prevented}"
         + (f"; fixes rebased: {summary.rebased}, re-asked after a conflict: {summary.reasked}"
            if summary.rebased or summary.reasked else "") + ")"),
        ("LLM", f"{u.calls} calls, {u.input_tokens} input + {u.output_tokens} output tokens "
                f"({u.cache_read_input_tokens} read from cache), <b>${u.cost_usd:.4f}</b>"),
    ]
    if summary.aborted:
        facts.append(("aborted", ", ".join(f"<code>{escape(t)}</code>" for t in summary.aborted)))
    for label, value in (("branch", summary.branch), ("pushed to", summary.pushed), ("patch", summary.patch),
                         ("pull request", summary.pr_url)):
        if value:
            facts.append((label, f"<code>{escape(value)}</code>"))
    body = [f"<h1>Greenloop run <code>{escape(summary.run_id)}</code></h1>", "<table>"]
    body += [f"<tr><th>{label}</th><td>{value}</td></tr>" for label, value in facts]
    body.append("</table>")
    if summary.reason and summary.state.value != "completed":
        body.append(f"<h2>Why the run is {escape(summary.state.value)}</h2><pre>{escape(summary.reason)}</pre>")
    body += [f"<p class=\"muted\">note: {escape(n)}</p>" for n in summary.notes]
    if summary.flaky:
        body.append("<h2>Flaky tests (failed, then passed on a re-run; not fixed)</h2><ul>"
                    + "".join(f"<li><code>{escape(t)}</code></li>" for t in summary.flaky) + "</ul>")
    for r in results:
        body.append(f'<h2 id="{escape(r.test_id)}"><code>{escape(r.test_id)}</code> {badge(r.state.value)}</h2>')
        body.append(f"<p class=\"muted\">{len(r.attempts)} attempt(s), {r.usage.input_tokens} input + "
                    f"{r.usage.output_tokens} output tokens, ${r.usage.cost_usd:.4f}</p>")
        if r.batch is not None:
            body.append(f"<p>fix accepted in validation batch {r.batch}</p>")
        body += [f"<p class=\"muted\">attempt {a.number} {escape(a.reason)} (its model calls: ${a.usage.cost_usd:.4f})</p>"
                 for a in r.remade]
        body += _timeline(steps.get(r.test_id, []), r)
        for a in r.attempts:
            body += _attempt(a, checks.get(r.test_id, {}).get(a.number))
    if summary.still_failing:
        body.append("<h2>Still failing</h2><ul>"
                    + "".join(f"<li><code>{escape(t)}</code></li>" for t in summary.still_failing[:100]) + "</ul>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>Greenloop run {escape(summary.run_id)}: {escape(outcome_label(summary))}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
