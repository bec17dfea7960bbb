"""What a framework module does beyond reading output, and the one default of each.

A framework module (``registry.Parser``) parses, locates and is detected; the
runner also asks it how to run one test, which report to ask for, how to go on
after the runner died part way, and (JavaScript) how to recognise its runner
inside a package script. Those members are optional: a framework without such
a notion leaves them out and gets the default written here, once.
``plugin(name)`` is how ``runner/`` reaches them, so selection, report flags,
crash resume and script following branch on no framework's name.

Members a module may define (the names are the module's own):

selection (``runner/select.py`` builds the command that runs exactly the chosen tests)
    ``runner_end(words) -> int | None``  index just after the runner's words (env,
        wrappers, the runner, its subcommand) in one shell segment, None when the
        segment does not call it. Default: where ``npm_scripts`` finds the runner of a
        framework with ``RUNNER_BINS`` or a ``NODE_FLAG`` (``npm_scripts.runner_end_for``);
        else never (the command is not taken apart).
    ``SELECT_VALUE_OPTIONS``  options whose value is the next word. Default: none.
    ``SELECT_OPTIONS``  options that choose tests: dropped with their value. Default: none.
    ``split_args(args, inv)``  sorts the words after the runner into ``inv``. Default:
        ``invocation.split_args`` with the two sets above.
    ``DEFAULT_INVOCATION``  the runner's call when the suite's command does not make it
        (``npm test``, ``make test``). Default: None.
    ``select(tests, inv, default) -> list[str]``  the words that select ``tests``, appended
        to the invocation (``default``: the invocation is Greenloop's own). Default: the
        framework cannot run one test (the suite validates instead).
    ``REPEATED_NAMES_SELECTABLE``  a name several distinct tests print (``merge.repeats``)
        selects them all again, in the suite's order, so their numbers hold. Default: True.
        False for unittest: its loader builds one instance of the class from a name, never
        the generated tests that print it (they are validated by the whole suite).
    ``select_in_command(command, tests) -> str``  a selection written over the whole
        command, for a runner whose call is not taken apart (JUnit console). Default: none.
    ``SELECTION_REPORTS``  where ``REPORT_OPTIONS`` go in a selection built on
        ``DEFAULT_INVOCATION``: ``"end"``, ``"options"`` (before the selector), or None.

report flags (``runner/plan.py`` adds them to a command Greenloop built)
    ``REPORT_OPTIONS``  what to add so the run also writes a machine-readable report
        under ``{reports}`` (relative to where the run runs). Default: "" (console only).
    ``OPTIONS_BEFORE_PATHS``  the runner reads options only before its paths (``node --test
        test/ --x`` takes ``--x`` for a file): what Greenloop adds to its call (report
        flags, ``suite_options``) goes right after the runner's words. Default: False
        (appended at the end of the command).

crash resume (``runner/crash.py``; a framework without these keeps what its output says)
    ``RESUMABLE``  the suite is run again after its runner died, without the tests done.
    ``DIED``  the ``native_status`` the parser gives a test whose process died while it ran.
    ``SERIAL``  the dead run names the test it died in already (one test at a time).
    ``RESUME_PER_SUITE``  a test binary (the result's ``suite``) died and the others ran on.
    ``FAILURES_AT_END``  failures' messages come at the end (a dead run lacks them).
    ``DEATH_ENTRY``  text of an entry the output makes of the death itself (not a test).
    ``exited_early(command, exit_code, root) -> bool``  the runner ended by itself mid-run.
    ``run_died(died, runner_ended, output) -> bool``  whether the whole run is resumed.
        Default: when the runner itself ended.
    ``running(output, report, root, ended) -> list[TestResult]``  the test a
        one-at-a-time run died in. Default: the results whose ``native_status`` is ``DIED``.
    ``rerun_command(command, invocation, scope, skip, listed) -> str | None``  the suite's
        command for the tests of ``scope`` but ``skip``, one at a time, each named before it
        runs; ``invocation()`` takes the command apart (ValueError when it cannot).
    ``list_command(inv, folder)``, ``listed(text)``, ``scope_folder(test)``  a runner that
        cannot leave tests out by name lists a scope's tests first (go).
    ``prepare_resume(workspace)``  files the resumed runs need (Jest's reporter).
    ``isolated_deaths(output, tests) -> dict[str, str]``  a runner that runs each test in a
        process of its own and outlives it: the tests whose process died, with how (ctest).

script following (``parsers/npm_scripts.py``, JavaScript runners)
    ``RUNNER_BINS``  the executables that are this runner (``jest``, ``_mocha``).
    ``RUN_SUBCOMMAND``, ``WATCH_SUBCOMMANDS``  the subcommand that runs the tests once, always
        put after the runner (a watching one is replaced by it): vitest's ``run``
    ``BIN_SUBCOMMANDS``  executables that run it only with a subcommand
        (``{"react-scripts": "test"}``).
    ``NODE_FLAG``  the ``node`` flag that runs it (``--test``).
    ``PACKAGE``, ``PACKAGE_RANK``  the npm package that names it in a project's
        dependencies, and its rank among runners found there (lower first).
    ``NODE_RUN``  its test files are plain node programs (``node test/x.js``).
    ``WATCH_FLAGS``  flags that keep it watching: dropped from a script's call.
    ``direct(words) -> list[str]``  the script's call as Greenloop runs it (``vitest`` ->
        ``vitest run``). Default: unchanged.
    ``suite_options(command, root) -> str``  what Greenloop adds to the call it runs a
        project's suite with (``--ci``, a TAP reporter). Default: "".

the suite (``runner/plan.py``, when no test command is given)
    ``suite_command(root) -> (command, fallbacks)``  how Greenloop runs the whole suite of
        the project at ``root`` (before ``REPORT_OPTIONS``), and what to try when that
        command is not found. Default: ``DEFAULT_SUITE``, else ``DEFAULT_INVOCATION``, no
        fallbacks; None when the framework has neither (a test command must be given).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..domain.errors import ErrorKind, GreenloopError
from . import registry
from .invocation import Invocation, split_args
from .models import TestReport, TestResult

DEFAULT_PACKAGE_RANK = 100


def cannot_select(framework: str) -> GreenloopError:
    """The error of a framework that cannot run one test: the whole suite validates."""
    return GreenloopError(f"cannot run a single {framework} test; Greenloop will validate with the whole suite",
                          kind=ErrorKind.VALIDATION_ERROR, framework=framework)


@dataclass(frozen=True)
class Plugin:
    """A framework module seen with every optional member present (its own, or the default)."""

    module: registry.Parser

    def _get(self, name: str, default=None):
        return getattr(self.module, name, default)

    @property
    def name(self) -> str:
        return self.module.FRAMEWORK

    # -- selection
    def has(self, member: str) -> bool:
        """Whether the module defines ``member`` itself."""
        return hasattr(self.module, member)

    def runner_end(self, words: list[str]) -> int | None:
        """The module's own; a JavaScript runner's default is script following's
        (``npm_scripts.runner_end_for``, which reads every plugin)."""
        own = self._get("runner_end")
        return own(words) if own else None

    def split_args(self, args: list[str], inv: Invocation) -> None:
        own = self._get("split_args")
        if own:
            own(args, inv)
        else:
            split_args(args, inv, set(self._get("SELECT_VALUE_OPTIONS", ())), set(self._get("SELECT_OPTIONS", ())))

    @property
    def value_options(self) -> set[str]:
        return set(self._get("SELECT_VALUE_OPTIONS", ()))

    @property
    def default_invocation(self) -> str | None:
        return self._get("DEFAULT_INVOCATION")

    @property
    def repeated_names_selectable(self) -> bool:
        return bool(self._get("REPEATED_NAMES_SELECTABLE", True))

    def select(self, tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
        own = self._get("select")
        if own is None:
            raise cannot_select(self.name)
        return own(tests, inv, default)

    @property
    def select_in_command(self) -> Callable[[str, list[TestResult]], str] | None:
        return self._get("select_in_command")

    @property
    def selection_reports(self) -> str | None:
        return self._get("SELECTION_REPORTS")

    # -- reports
    def report_options(self, reports: str) -> str:
        return str(self._get("REPORT_OPTIONS", "")).format(reports=reports)

    @property
    def options_before_paths(self) -> bool:
        return bool(self._get("OPTIONS_BEFORE_PATHS", False))

    # -- crash resume
    @property
    def resumable(self) -> bool:
        return bool(self._get("RESUMABLE", False))

    @property
    def died(self) -> str | None:
        return self._get("DIED")

    @property
    def serial(self) -> bool:
        return bool(self._get("SERIAL", False))

    @property
    def resume_per_suite(self) -> bool:
        return bool(self._get("RESUME_PER_SUITE", False))

    @property
    def failures_at_end(self) -> bool:
        return bool(self._get("FAILURES_AT_END", False))

    def is_death_entry(self, test: TestResult) -> bool:
        entry = self._get("DEATH_ENTRY")
        return bool(entry) and entry in test.id

    def exited_early(self, command: str, exit_code: int | None, root: Path) -> bool:
        own = self._get("exited_early")
        return bool(own and own(command, exit_code, root))

    def run_died(self, died: bool, runner_ended: bool, output: str) -> bool:
        own = self._get("run_died")
        return own(died, runner_ended, output) if own else runner_ended

    def running(self, output: str, report: TestReport, root: Path | None, ended: bool) -> list[TestResult]:
        own = self._get("running")
        if own:
            return own(output, report, root, ended)
        return [t for t in report.tests if self.unfinished(t)]

    def unfinished(self, test: TestResult) -> bool:
        """A result that only says the process died while (or before) the test ran."""
        return self.died is not None and test.native_status == self.died and not test.timed_out

    def rerun_command(self, command: str, invocation: Callable[[], Invocation], scope: str | None,
                      skip: list[TestResult], listed: tuple[str, list[str]] | None) -> str | None:
        own = self._get("rerun_command")
        if own is None:
            raise ValueError(f"{self.name} runs are not resumed")
        return own(command, invocation, scope, skip, listed)

    @property
    def lists_tests(self) -> bool:
        return self._get("list_command") is not None

    def list_command(self, inv: Invocation, folder: str) -> str:
        return self.module.list_command(inv, folder)  # type: ignore[attr-defined]

    def listed(self, text: str) -> list[str]:
        return self.module.listed(text)  # type: ignore[attr-defined]

    def scope_folder(self, test: TestResult) -> str:
        return self.module.scope_folder(test)  # type: ignore[attr-defined]

    def prepare_resume(self, workspace: Path) -> None:
        own = self._get("prepare_resume")
        if own:
            own(workspace)

    def isolated_deaths(self, output: str, tests: Sequence[TestResult]) -> dict[str, str]:
        own = self._get("isolated_deaths")
        return own(output, tests) if own else {}

    # -- script following
    @property
    def runner_bins(self) -> tuple[str, ...]:
        return tuple(self._get("RUNNER_BINS", ()))

    @property
    def bin_subcommands(self) -> dict[str, str]:
        return dict(self._get("BIN_SUBCOMMANDS", {}))

    @property
    def run_subcommand(self) -> str | None:
        return self._get("RUN_SUBCOMMAND")

    @property
    def watch_subcommands(self) -> tuple[str, ...]:
        return tuple(self._get("WATCH_SUBCOMMANDS", ()))

    @property
    def node_flag(self) -> str | None:
        return self._get("NODE_FLAG")

    @property
    def package(self) -> str | None:
        return self._get("PACKAGE")

    @property
    def package_rank(self) -> int:
        return int(self._get("PACKAGE_RANK", DEFAULT_PACKAGE_RANK))

    @property
    def node_run(self) -> bool:
        return bool(self._get("NODE_RUN", False))

    @property
    def watch_flags(self) -> set[str]:
        return set(self._get("WATCH_FLAGS", ()))

    def direct(self, words: list[str]) -> list[str]:
        own = self._get("direct")
        return own(words) if own else words

    def suite_command(self, root: Path) -> tuple[str, list[str]] | None:
        own = self._get("suite_command")
        if own:
            return own(root)
        command = self._get("DEFAULT_SUITE") or self.default_invocation
        return (command, []) if command else None

    def suite_options(self, command: str, root: Path) -> str:
        own = self._get("suite_options")
        return own(command, root) if own else ""


def plugin(name: str) -> Plugin:
    """The framework module of ``name`` (canonical name or alias), every optional member answered."""
    return _plugin(registry.canonical(name))


@functools.cache
def _plugin(name: str) -> Plugin:
    return Plugin(registry.parser(name))


def plugins() -> list[Plugin]:
    """Every framework's plugin, in the table's (detection) order."""
    return [plugin(name) for name in registry.available()]
