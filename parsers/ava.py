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

from . import generic
from .js_results import RUNNER_PREFIX
from .locate import located_while_parsing
from .models import TestReport
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
