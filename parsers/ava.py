"""AVA (https://github.com/avajs/ava) through its TAP reporter (``ava --tap``,
which Greenloop adds to the command it chooses).

AVA names a test point by the test's title, prefixed with its file (the path
under the test directory, without extension) and `` › `` when more than one
file ran: ``ok 4 - math › adds``. That text is the id, read by the generic
TAP reader: ``# SKIP`` -> skipped, ``# TODO`` (``test.todo``) -> skipped
with native ``todo``, ``not ok`` -> failed. A single-test run keeps the
suite's files and adds ``--match <title>``, so the prefix, and the id, stay
the same.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from . import generic
from .invocation import Invocation
from .js_results import RUNNER_PREFIX
from .locate import located_while_parsing
from .models import TestReport, TestResult
from .run_output import RunOutput

FRAMEWORK = "ava"
# AVA's TAP names no definition and the generic reader places a test only where its
# diagnostics say (``at:``): there is no source lookup to hand to the normalizer.
locate = located_while_parsing
COMMAND_RE = [re.compile(RUNNER_PREFIX + r"(?:\S*/)?ava(?:\.m?js)?(?=\s|$)")]
# AVA's TAP has nothing of its own to recognise it by.
OUTPUT_RE: list[re.Pattern[str]] = []


def parse(run: RunOutput) -> TestReport:
    """Per-test results of an ``ava --tap`` run (see the module docstring)."""
    report = generic.parse(run)
    report.framework = FRAMEWORK
    return report


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

RUNNER_BINS = ("ava",)
PACKAGE, PACKAGE_RANK = "ava", 4
WATCH_FLAGS = {"-w"}
SELECT_VALUE_OPTIONS = {"-m", "--match", "-c", "--concurrency", "--config", "-T", "--timeout", "--node-arguments"}
SELECT_OPTIONS = {"-m", "--match", "-u", "--update-snapshots", "-w", "--watch"}
DEFAULT_INVOCATION = "npx ava --tap"


def suite_options(command: str, root: Path) -> str:
    return "" if "--tap" in command.split() else " --tap"


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    """The suite's files stay, so AVA's "file › " prefix, and the id, are the same."""
    out = list(inv.positionals)
    for title in dict.fromkeys(t.id.split(" › ")[-1] for t in tests):
        out += ["--match", shlex.quote(title)]
    return out
