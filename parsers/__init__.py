"""Parsers: test-framework output in, normalized ``TestReport`` out.

Use :func:`parse` as the single entry point; it detects the framework when
none is given, runs the framework's parser (``registry``), normalizes the
report (``normalize``) and never raises on bad output (problems become
warnings). ``parsers/README.md`` says how the package is laid out and how to
add a framework.
"""

from __future__ import annotations

from .models import Status, TestReport, TestResult, Totals
from .run_output import RunOutput

__all__ = ["RunOutput", "Status", "TestReport", "TestResult", "Totals", "parse"]


def parse(run: RunOutput, framework: str | None = None) -> TestReport:
    """Parse one finished run into a ``TestReport``.

    ``framework`` (a canonical name or alias) skips detection; an unknown name
    raises ``UnknownFrameworkError``. A parser that fails on hostile output
    does not crash the caller: the generic parser takes over and a warning
    says why.
    """
    from . import detect, normalize, registry

    reason = None
    if framework is None:
        found = detect.detect(run)
        name, reason = found.framework, found.reason
    else:
        name = registry.canonical(framework)
    try:
        report = registry.parser(name).parse(run)
    except Exception as exc:  # a parser bug must not lose the run
        report = registry.parser("generic").parse(run)
        report.warnings.append(f"{name} parser failed ({type(exc).__name__}: {exc}); used the generic parser")
    report.framework = name
    report.command = run.command
    report.exit_code = run.exit_code
    report.detection = reason
    return normalize.finish(report, run)
