"""The framework plugin protocol (parsers/plugin.py) end to end, as the recipe in
parsers/README.md writes it: a tiny framework defined only here, through the
documented members, is parsed, gets its single-test command built by the
runner's selection, its report flags added to the command Greenloop builds and
its crash handling defaulted, with no edit to ``runner/``; and every registered
framework module implements the protocol consistently."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
import types
from collections.abc import Sequence
from pathlib import Path

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers import detect, npm_scripts, parse, registry
from greenloop.parsers.command import command_words, option_values
from greenloop.parsers.invocation import Invocation, bin_name, take_apart
from greenloop.parsers.locate import Location, SourceIndex
from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.parsers.npm_scripts import runner_in_segment
from greenloop.parsers.plugin import plugin, plugins
from greenloop.parsers.run_output import RunOutput
from greenloop.runner import crash, select
from greenloop.runner.plan import REPORT_DIR, SuitePlan, with_reports
from greenloop.sandbox.models import ExecResult

# A test runner small enough to write here: ``python tiny.py [--only NAME] [--report FILE] FILE...``
# runs every ``check_*`` function of the files (or the one named), prints ``ok NAME`` or
# ``FAIL NAME: message`` per check, and ``N checks, M failed`` at the end.
TINY_RUNNER = '''
import json, runpy, sys
args, only, report, files = sys.argv[1:], None, None, []
while args:
    a = args.pop(0)
    if a == "--only":
        only = args.pop(0)
    elif a == "--report":
        report = args.pop(0)
    else:
        files.append(a)
results = []
for f in files:
    for name, fn in runpy.run_path(f).items():
        if name.startswith("check_") and only in (None, name):
            try:
                fn()
                results.append((name, "ok", ""))
            except AssertionError as e:
                results.append((name, "FAIL", str(e)))
for name, status, msg in results:
    print(f"ok {name}" if status == "ok" else f"FAIL {name}: {msg}")
print(f"{len(results)} checks, {sum(s == 'FAIL' for _, s, _ in results)} failed")
if report:
    with open(report, "w") as fh:
        json.dump([{"name": n, "status": s} for n, s, _ in results], fh)
sys.exit(1 if any(s == "FAIL" for _, s, _ in results) else 0)
'''


def _tiny_module() -> types.ModuleType:
    """The framework module, written as parsers/README.md's recipe says."""
    m = types.ModuleType("tiny")
    m.FRAMEWORK = "tiny"
    m.COMMAND_RE = [re.compile(r"(?:^|\s)(?:\S*/)?tiny\.py(?=\s|$)")]
    m.OUTPUT_RE = [re.compile(r"^\d+ checks, \d+ failed$", re.M)]
    line = re.compile(r"^(?:ok (?P<ok>\w+)|FAIL (?P<fail>\w+): (?P<msg>.*))$")

    def parse_run(run: RunOutput) -> TestReport:
        report = TestReport(framework="tiny")
        for text in run.all_lines():
            if hit := line.match(text):
                report.tests.append(TestResult(id=hit["ok"] or hit["fail"], message=hit["msg"],
                                               status=Status.PASSED if hit["ok"] else Status.FAILED))
        return report

    def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
        return {}

    m.parse, m.locate = parse_run, locate
    # selection: where the runner's words end, its options, its selector, its default call
    m.runner_end = lambda words: next((i + 1 for i, w in enumerate(words) if bin_name(w) == "tiny.py"), None)
    m.SELECT_VALUE_OPTIONS = {"--only", "--report"}
    m.SELECT_OPTIONS = {"--only"}
    m.DEFAULT_INVOCATION = "python tiny.py checks.py"
    m.select = lambda tests, inv, default: [*inv.positionals, "--only", shlex.quote(_one(tests).id)]
    # report flags
    m.REPORT_OPTIONS = " --report {reports}/tiny.json"
    m.SELECTION_REPORTS = "end"
    return m


def _one(tests: list[TestResult]) -> TestResult:
    if len(tests) != 1:
        raise GreenloopError("tiny selects one check at a time", kind=ErrorKind.VALIDATION_ERROR)
    return tests[0]


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """Registered as the recipe's step 3 says: one row of the table and the module."""
    module = _tiny_module()
    row = registry.Framework("tiny", "python", (registry.Format.CONSOLE,))
    monkeypatch.setattr(registry, "FRAMEWORKS", (row, *registry.FRAMEWORKS))
    monkeypatch.setitem(registry.BY_NAME, "tiny", row)
    monkeypatch.setitem(registry._parsers(), "tiny", module)
    return module


def _project(tmp_path: Path) -> Path:
    (tmp_path / "tiny.py").write_text(TINY_RUNNER)
    (tmp_path / "checks.py").write_text(textwrap.dedent("""
        def check_adds():
            assert 1 + 1 == 2

        def check_subtracts():
            assert 2 - 1 == 0, "2 - 1 is 1"

        def check_multiplies():
            assert 2 * 3 == 6
    """))
    (tmp_path / REPORT_DIR).mkdir(parents=True)
    return tmp_path


def _run(command: str, root: Path) -> RunOutput:
    proc = subprocess.run(["bash", "-c", command.replace("python ", f"{sys.executable} ", 1)], cwd=root,
                          capture_output=True, text=True, timeout=60)
    return RunOutput(command=command, exit_code=proc.returncode, stdout_text=proc.stdout, stderr_text=proc.stderr,
                     cwd=root)


def test_a_framework_defined_through_the_protocol_validates_one_test(tiny, tmp_path: Path) -> None:
    root = _project(tmp_path)
    suite = "python tiny.py --only check_adds checks.py"  # the suite's own filter goes in a selection
    plan = SuitePlan(language="python", framework="tiny", test_command="python tiny.py checks.py",
                     default_command=False)
    assert detect.from_command(plan.test_command).framework == "tiny"

    first = parse(_run(plan.test_command, root), "tiny")
    assert {t.id: t.status for t in first.tests} == {
        "check_adds": Status.PASSED, "check_subtracts": Status.FAILED, "check_multiplies": Status.PASSED}
    failing = next(t for t in first.tests if t.status == Status.FAILED)

    command = select.single_test_command(plan, failing)
    assert command == "python tiny.py checks.py --only check_subtracts"
    again = parse(_run(command, root), "tiny")
    assert [(t.id, t.status) for t in again.tests] == [("check_subtracts", Status.FAILED)]

    # Built on the suite's own command: what ran before it stays, its own filter goes.
    filtered = plan.model_copy(update={"test_command": f"cd . && {suite}"})
    assert select.single_test_command(filtered, failing) == "cd . && python tiny.py checks.py --only check_subtracts"
    with pytest.raises(GreenloopError):
        select.selection_command(plan, first.tests)  # its own selector says it takes one


def test_its_default_invocation_gets_its_report_flags(tiny, tmp_path: Path) -> None:
    root = _project(tmp_path)
    plan = SuitePlan(language="python", framework="tiny", test_command="make test", default_command=False)
    command = select.single_test_command(plan, TestResult(id="check_adds", status=Status.FAILED))
    assert command == f"python tiny.py checks.py --only check_adds --report {REPORT_DIR}/tiny.json"
    run = _run(command, root)
    assert run.exit_code == 0
    assert '"check_adds"' in (root / REPORT_DIR / "tiny.json").read_text()
    assert with_reports("tiny", "python tiny.py x.py") == f"python tiny.py x.py --report {REPORT_DIR}/tiny.json"
    assert option_values(command_words(command), "--report") == [f"{REPORT_DIR}/tiny.json"]


def test_a_framework_without_optional_members_gets_the_defaults(tiny) -> None:
    p = plugin("tiny")
    assert not p.resumable and p.died is None and not p.serial and not p.failures_at_end
    with pytest.raises(ValueError, match="not resumed"):
        p.rerun_command("python tiny.py", lambda: Invocation("", []), None, [], None)
    report = TestReport(framework="tiny", tests=[TestResult(id="check_adds", status=Status.FAILED)])
    assert p.running("", report, None, True) == []
    assert p.isolated_deaths("", report.tests) == {}
    assert p.runner_bins == () and p.suite_options("python tiny.py", Path(".")) == ""
    assert p.suite_command(Path(".")) == ("python tiny.py checks.py", [])
    assert crash.mark_isolated("tiny", report, _exec(), 512) == 0

    generic = plugin("generic")  # no selection members at all: the suite validates instead
    plan = SuitePlan(language="python", framework="generic", test_command="make test", default_command=False)
    with pytest.raises(GreenloopError, match="cannot run a single generic test") as err:
        select.single_test_command(plan, report.tests[0])
    assert err.value.kind == ErrorKind.VALIDATION_ERROR
    assert generic.report_options(REPORT_DIR) == "" and with_reports("generic", "make test") == "make test"


def _exec() -> ExecResult:
    return ExecResult(command="python tiny.py", backend="local", backend_reason="test", exit_code=1,
                      stdout_path="", stderr_path="", stdout_tail="1 checks, 1 failed")


# ---------------------------------------------------------------------- every registered framework


@pytest.mark.parametrize("p", plugins(), ids=lambda p: p.name)
def test_every_framework_module_implements_the_protocol_consistently(p) -> None:
    m = p.module
    for name in ("SELECT_VALUE_OPTIONS", "SELECT_OPTIONS", "WATCH_FLAGS"):
        assert all(isinstance(o, str) and o.startswith("-") for o in getattr(m, name, ())), name
    if p.default_invocation:
        # Greenloop's own call of the runner is recognised as the runner, by selection and by detection.
        inv = take_apart(p.default_invocation, npm_scripts.runner_end_for(p.name), p.split_args)
        assert inv is not None and inv.head, p.default_invocation
        assert detect.from_command(p.default_invocation).framework == p.name
        assert hasattr(m, "select"), "a default invocation is there to select tests on"
    if p.selection_reports is not None:
        assert p.selection_reports in ("end", "options") and p.report_options(REPORT_DIR)
    if p.report_options(REPORT_DIR):
        assert REPORT_DIR in p.report_options(REPORT_DIR) and "{" not in p.report_options(REPORT_DIR)
    if p.resumable:
        assert hasattr(m, "rerun_command")
    if p.serial or p.resume_per_suite:
        assert p.resumable and p.died, "named through the results its parser marks as died"
    for b in p.runner_bins:
        assert runner_in_segment(f"npx {b} test/", set()) == (p.name, 1)
    if p.package:
        assert registry.BY_NAME[p.name].language == "javascript"


@pytest.mark.parametrize("p", [p for p in plugins() if hasattr(p.module, "select")], ids=lambda p: p.name)
def test_selection_of_an_id_is_built_on_the_suites_call(p) -> None:
    """Every framework that selects builds on the suite's call: its head, then its selector."""
    test = TestResult(id=_an_id(p.name), status=Status.FAILED, file=_a_file(p.name), suite=_a_suite(p.name))
    call = p.default_invocation or "./build/math_test"  # googletest: the test binary itself
    plan = SuitePlan(language="x", framework=p.name, test_command=call, default_command=True)
    command = select.single_test_command(plan, test)
    inv = take_apart(call, npm_scripts.runner_end_for(p.name), p.split_args)
    assert command.startswith(" ".join(inv.head)), command
    assert command != inv.render(), "the selector adds words"


def _an_id(framework: str) -> str:
    return {"go": "example.com/m::TestAdd", "phpunit": "Tests\\MathTest::testAdd",
            "maven-surefire": "com.x.MathTest#add", "node-tap": "test/a.js > adds", "jest": "math › adds",
            "vitest": "math > adds"}.get(framework, "adds")


def _a_file(framework: str) -> str:
    return {"go": "math_test.go", "rspec": "spec/math_spec.rb", "phpunit": "tests/MathTest.php"}.get(
        framework, "test/a.js")


def _a_suite(framework: str) -> str | None:
    return "tests/math.rs" if framework == "cargo-test" else None
