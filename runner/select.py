"""Commands that run exactly the chosen tests, in each framework's own
selector syntax. Validation runs the failing test alone first, so a selector
that matches more (or nothing) would give a wrong verdict: names are anchored
and regex-escaped wherever the framework takes a pattern.

The selection is built on the suite's own command: the invocation of the
runner in it keeps its environment assignments, wrappers and flags (a
``-p no:cacheprovider``, a ``--config``, a reporter: the output must read as
the suite's did, so ids match), loses the positional arguments that chose
what to run (paths, packages, spec globs) and any name filter of its own, and
gets the framework's selector instead. Commands before the runner's segment
(``cd sub &&``, a build step) are kept; pipes and commands after it are not.
A command that does not call the runner itself (``npm test``, ``make test``)
gets Greenloop's default invocation.

What is framework-specific (where the runner's words end, its options, its
selector, its default invocation) is the framework module's
(``parsers/plugin.py``); this module only puts it together.
"""

from __future__ import annotations

import fnmatch

from ..domain.errors import ErrorKind, GreenloopError
from ..parsers import npm_scripts
from ..parsers.command import raw_words
from ..parsers.invocation import Invocation, take_apart
from ..parsers.models import TestResult
from ..parsers.plugin import cannot_select, plugin
from .plan import REPORT_DIR, SuitePlan, fill_single_test


def selected(test_id: str, select: list[str], exclude: list[str]) -> bool:
    """Whether a test id passes a run's select/exclude patterns: ``select``
    takes globs or substrings, ``exclude`` globs."""
    if select and not any(fnmatch.fnmatchcase(test_id, p) or p in test_id for p in select):
        return False
    return not any(fnmatch.fnmatchcase(test_id, p) for p in exclude)


def invocation_in(framework: str, command: str) -> Invocation | None:
    """The framework runner's call in ``command``, taken apart, or None when
    the command does not call the runner itself."""
    p = plugin(framework)
    return take_apart(command, npm_scripts.runner_end_for(framework), p.split_args)


def invocation(plan: SuitePlan) -> Invocation | None:
    """The runner's call in the plan's command, or None when the command does
    not call the runner itself."""
    return invocation_in(plan.framework, plan.test_command)


def _base(plan: SuitePlan) -> tuple[Invocation, bool]:
    """The invocation to build on, and whether it is Greenloop's default
    (then Greenloop's reports are added)."""
    inv = invocation(plan)
    if inv is None and plan.runner_command:  # `npm test`: the runner the script calls
        inv = invocation_in(plan.framework, plan.runner_command)
    if inv is not None:
        return inv, False
    default = plugin(plan.framework).default_invocation
    if default is None:
        raise cannot_select(plan.framework)
    inv = invocation_in(plan.framework, default) or Invocation(before="", head=raw_words(default))
    return inv, True


def selection_command(plan: SuitePlan, tests: list[TestResult]) -> str:
    """The command that runs only ``tests`` (one or several) under ``plan``'s
    framework, built on the plan's own command (see the module docstring)."""
    if not tests:
        raise GreenloopError("no tests to select", kind=ErrorKind.VALIDATION_ERROR)
    p = plugin(plan.framework)
    shared = next((t.printed for t in tests if t.printed), None)
    if shared is not None and not p.repeated_names_selectable:
        raise GreenloopError(f"{plan.framework} cannot select one of the tests that print {shared!r}; "
                             "the whole suite decides", kind=ErrorKind.VALIDATION_ERROR, framework=plan.framework)
    # a test numbered apart from others printing its name is selected by that name (``merge.repeats``)
    tests = [t.model_copy(update={"id": t.printed}) if t.printed else t for t in tests]
    if p.select_in_command is not None:
        return p.select_in_command(plan.test_command, tests)
    inv, default = _base(plan)
    reports = p.report_options(REPORT_DIR) if default else ""
    if reports and p.selection_reports == "options":
        inv.options += raw_words(reports)  # before the selector: the runner reads options only there
    command = inv.render(*p.select(tests, inv, plan.default_command))
    return command + reports if reports and p.selection_reports == "end" else command


def single_test_command(plan: SuitePlan, test: TestResult) -> str:
    """The command that runs only ``test`` under ``plan``'s framework."""
    return selection_command(plan, [test])


def tests_command(plan: SuitePlan, tests: list[TestResult]) -> str:
    """The command that runs ``tests``: the repository's own single-test command for one
    test when it has one, else the framework's selector; the whole suite's command when
    the framework cannot select them (the suite's output then says how they did)."""
    if plan.single_test_command and len(tests) == 1:
        return fill_single_test(plan.single_test_command, tests[0].id, tests[0].file)
    try:
        return selection_command(plan, tests)
    except GreenloopError:
        return plan.test_command
