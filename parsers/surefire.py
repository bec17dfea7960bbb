"""Maven Surefire (``mvn test``): JUnit 4, JUnit 5 (platform) and TestNG providers.

Ids are ``<class>#<testcase name>`` exactly as Surefire's XML names them
(``total``, ``discountTable{int, int, int}[2]`` with 2.22's JUnit 5
provider, ``same[0]`` for JUnit 4 parameterized tests); a class-level error
(``@BeforeAll``/``@BeforeClass`` failed) is one entry ``<class>#<class>``.

Inputs, best first:

* ``target/surefire-reports/TEST-*.xml`` relative to where ``mvn`` ran (and
  the modules' ``*/target/surefire-reports`` of a multi-module build, and any
  directory the "Please refer to ..." line names), streamed with
  ``JUnitReader``; reports of classes the console did not run this time are
  stale and skipped;
* the console (``[ERROR] Tests run: ... <<< FAILURE!`` blocks and
  ``name  Time elapsed: ... <<< ERROR!`` headers, 2.22 and 3.x, ``-B`` or
  coloured), which lists failures only: it is the fallback when no report
  was written;
* maven-compiler-plugin's ``COMPILATION ERROR`` lines (``File.java:[l,c]``),
  one errored entry per source file.

Statuses follow Surefire: ``<failure>`` -> failed, ``<error>`` -> errored
(Surefire's own error category), ``<skipped>`` -> skipped; timeouts also
set ``timed_out``.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from .command import SEGMENT_SPLIT, command_words, unquote
from .invocation import Invocation, bin_name
from .junit_xml import JUnitCase, JUnitReader
from .locate import SKIP_DIRS, Location, SourceIndex
from .models import Status, TestReport, TestResult
from .run_output import RunOutput
from .source.java import (
    CompileErrors,
    JavaSources,
    exception_head,
    frames,
    is_timeout,
    locate_methods,
    short_type,
    xml_failure,
)

FRAMEWORK = "maven-surefire"
COMMAND_RE: list[re.Pattern[str]] = [
    re.compile(r"(?:^|[\s/])(?:mvnw?|mvnd)(?:\.cmd)?(?=\s|$)"),
]
OUTPUT_RE: list[re.Pattern[str]] = [
    re.compile(r"T E S T S"),
    re.compile(r"^(?:\[(?:INFO|ERROR|WARNING)\] )?Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+", re.M),
    re.compile(r"maven-surefire-plugin:"),
    re.compile(r"<<< (?:FAILURE|ERROR)!$", re.M),
    # Maven itself (a build that stopped before the tests, or whose head is downloads).
    re.compile(r"^\[INFO\] Scanning for projects\.\.\.$", re.M),
    re.compile(r"^\[ERROR\] COMPILATION ERROR :", re.M),
]

REPORTS = "target/surefire-reports"
MAX_MODULE_DEPTH = 3
LEVEL_RE = re.compile(r"^(?:[\d\-:.,T]+ )?\[(?:INFO|ERROR|WARNING|WARN|DEBUG)\] ?")
RUNNING_RE = re.compile(r"^Running (?P<cls>[\w.$]+)\s*$")
CLASS_RESULT_RE = re.compile(
    r"^Tests run: (?P<run>\d+), Failures: (?P<f>\d+), Errors: (?P<e>\d+), Skipped: (?P<s>\d+)"
    r"(?:, Flakes: \d+)?, Time elapsed: .*?(?:-+ in (?P<cls>[\w.$]+))?\s*$"
)
TOTAL_RE = re.compile(r"^Tests run: (?P<run>\d+), Failures: (?P<f>\d+), Errors: (?P<e>\d+), Skipped: (?P<s>\d+)"
                      r"(?:, Flakes: \d+)?\s*$")
CASE_HEADER_RE = re.compile(
    r"^(?P<name>\S.*?)\s+(?:--\s+)?Time elapsed: [\d.,]+ s(?:ec)?\s*<<< (?P<kind>FAILURE|ERROR)!\s*$"
)
RESULTS_SECTION_RE = re.compile(r"^(?P<kind>Failures|Errors|Flakes|Crashed tests):\s*$")
SUMMARY_ENTRY_RE = re.compile(r"^  (?P<text>\S.*)$")
REFER_RE = re.compile(r"Please refer to (?P<dir>\S+surefire-reports)\b")
GOAL_FAILED_RE = re.compile(r"^Failed to execute goal (?P<goal>\S+)?")
FORK_PROBLEM_RE = re.compile(r"The forked VM terminated|There was a timeout (?:or other error )?in the fork")
MAX_PROBLEMS = 20
MAX_BLOCK_LINES = 400  # kept per failure block of the console
CLASS_LEVEL_NAMES = {"initializationError", "classMethod"}


class _Console:
    """What Surefire printed: failure blocks, per-class results, summary lines."""

    def __init__(self, compile_errors: CompileErrors) -> None:
        self.compile = compile_errors
        self.running: list[str] = []
        self.finished: set[str] = set()
        self.failures: list[tuple[str, str, str, list[str]]] = []  # (class, name, kind, lines)
        self.summary_lines: list[str] = []
        self.totals: list[int] = []
        self.report_dirs: list[str] = []
        self.goal_failures: list[str] = []
        self.problems: list[str] = []
        self.saw_tests = False
        self._current: str | None = None
        self._block: list[str] | None = None
        self._section: str | None = None

    def feed(self, line: str) -> None:
        if self.compile.feed(line):
            return
        text = LEVEL_RE.sub("", line, count=1)
        if self._block is not None:
            if not line.strip() or LEVEL_RE.match(line):
                self._block = None
            else:
                if len(self._block) < MAX_BLOCK_LINES:
                    self._block.append(line)
                return
        m = RUNNING_RE.match(text)
        if m:
            self._current = m.group("cls")
            self.running.append(self._current)
            self.saw_tests = True
            self._section = None
            return
        m = CLASS_RESULT_RE.match(text)
        if m:
            if m.group("cls"):
                self._current = m.group("cls")
                self.finished.add(self._current)
            return
        m = TOTAL_RE.match(text)
        if m:
            self.totals.append(int(m.group("run")))
            self._section = None
            return
        m = CASE_HEADER_RE.match(text)
        if m:
            self._block = []
            self.failures.append((self._current or "", m.group("name"), m.group("kind"), self._block))
            return
        m = RESULTS_SECTION_RE.match(text)
        if m:
            self._section = m.group("kind")
            if self._section == "Crashed tests":
                self.problems.append("the forked JVM crashed")
            return
        if self._section in ("Failures", "Errors", "Flakes"):
            m = SUMMARY_ENTRY_RE.match(text)
            if m:
                self.summary_lines.append(m.group("text").strip())
                return
        m = REFER_RE.search(text)
        if m:
            self.report_dirs.append(m.group("dir"))
        m = GOAL_FAILED_RE.match(text)
        if m:
            self.goal_failures.append(text.strip())
        if FORK_PROBLEM_RE.search(text) and text.strip() not in self.problems and len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text.strip())


def _report_files(run: RunOutput, console: _Console, index: SourceIndex) -> list[Path]:
    """TEST-*.xml files of this run: the default report folders of the project
    and its modules, the ``-f`` project's, and any the console referred to."""
    if run.cwd is None:
        return []
    dirs: list[Path] = []
    roots = [run.cwd]
    for seg in SEGMENT_SPLIT.split(run.command.strip()):
        if not any(p.search(seg) for p in COMMAND_RE):
            continue
        words = command_words(seg)
        for i, w in enumerate(words):
            pom = words[i + 1] if w in ("-f", "--file") and i + 1 < len(words) else None
            if w.startswith("--file="):
                pom = w.split("=", 1)[1]
            if pom and (p := run.resolve(pom)) is not None:
                roots.append(p if p.is_dir() else p.parent)
    for root in roots:
        dirs.extend(m / REPORTS for m in _modules(root, MAX_MODULE_DEPTH))
    for hint in console.report_dirs:
        rel = index.relative(hint)
        if rel is not None and (p := run.resolve(rel)) is not None:
            dirs.append(p)
    files: list[Path] = []
    seen: set[Path] = set()
    for d in dirs:
        if not d.is_dir():
            continue
        for f in sorted(d.glob("TEST-*.xml")):
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                files.append(f)
    return files


def _modules(root: Path, depth: int) -> list[Path]:
    """``root`` and its sub-folders down to ``depth`` levels that hold a ``target``
    folder (Maven modules), skipping hidden, dependency and build folders."""
    found = [root] if (root / "target").is_dir() else []
    if depth == 0:
        return found
    try:
        subdirs = sorted(e.path for e in os.scandir(root) if e.is_dir(follow_symlinks=False)
                         and not e.name.startswith(".") and e.name not in SKIP_DIRS)
    except OSError:
        return found
    for sub in subdirs:
        found.extend(_modules(Path(sub), depth - 1))
    return found


def _report_class(path: Path) -> str:
    """``TEST-org.x.FooTest.xml`` -> ``org.x.FooTest``."""
    return path.name[len("TEST-"):-len(".xml")]


def _outer(klass: str) -> str:
    return klass.split("$", 1)[0]


def _smart_line(klass: str, case: JUnitCase, console: _Console) -> str:
    """Surefire's one-line summary of a class-level error
    (``InventoryClientTest.loadConfig:16 » NoSuchFile config/x``): which
    lifecycle method failed, and how."""
    simple = klass.rsplit(".", 1)[-1]
    loc = simple
    for f in frames(case.text):
        if f.group("cls") == klass or f.group("cls").startswith(klass + "$"):
            loc = f"{f.group('cls').rsplit('.', 1)[-1]}.{f.group('meth')}"
            if f.group("line"):
                loc += f":{f.group('line')}"
            break
    for s in console.summary_lines:
        if s.startswith(loc + " ") and not s.endswith("..."):
            return s
    etype = (case.type or "").rstrip(":")
    return f"{loc} » {short_type(etype) if etype else 'Error'} {case.message or ''}".rstrip()


def _case_result(case: JUnitCase, console: _Console, sources: JavaSources) -> TestResult:
    klass = case.classname or (case.suites[-1] if case.suites else "")
    name = case.name
    class_level = name in ("", klass) or name in CLASS_LEVEL_NAMES
    status = {"failure": Status.FAILED, "error": Status.ERRORED, "skipped": Status.SKIPPED}.get(
        case.outcome, Status.PASSED)
    message = details = None
    timed_out = False
    if status in (Status.FAILED, Status.ERRORED):
        message, timed_out = xml_failure(case)
        if class_level:
            message = f"{message}\n{_smart_line(klass, case, console)}" if message else _smart_line(
                klass, case, console)
        details = case.text
    elif status == Status.SKIPPED:
        message = case.message or exception_head(case.text)
    file, line = _class_error_at(klass, name, class_level, case.text, sources)
    return TestResult(
        id=f"{klass}#{name}", status=status, file=file, line=line, message=message, details=details,
        duration_s=case.time, timed_out=timed_out, native_status=case.outcome if case.outcome != "passed" else None,
        suite=klass,
    )


def _class_error_at(klass: str, name: str, class_level: bool, text: str | None,
                    sources: JavaSources) -> tuple[str | None, int | None]:
    """Where a class-level error (``initializationError``, a failing
    ``@BeforeAll``) comes from: the lifecycle method that threw, else the
    class. A test's own location is ``locate``'s."""
    if not class_level:
        return None, None
    for f in frames(text):
        if f.group("cls") == klass or f.group("cls").startswith(klass + "$"):
            hit = sources.method_line(f.group("cls"), f.group("meth"))
            if hit:
                return hit
            rel = sources.class_file(f.group("cls"))
            if rel and f.group("line"):
                return rel, int(f.group("line"))
    hit = sources.class_line(klass)
    return hit if hit else (None, None)


def _console_result(klass: str, name: str, kind: str, lines: list[str], sources: JavaSources,
                    summary_lines: list[str]) -> TestResult:
    """A failure block of the console, for classes without a report."""
    m = re.match(r"^(?P<m>.+?)\((?P<c>[\w.$]+)\)$", name)
    if m:  # JUnit 4 provider: "method(Class)"
        klass, name = m.group("c"), m.group("m")
    elif klass and name.startswith(klass + "."):  # Surefire 3: "pkg.Class.method"
        name = name[len(klass) + 1:]
    elif re.fullmatch(r"[\w$]+(?:\.[\w$]+)+", name):
        # "pkg.Class" (or "pkg.Outer$Inner") is a class-level error, "pkg.Class.method" a test.
        owner, last = name.rsplit(".", 1)
        klass, name = (name, name) if last[:1].isupper() else (owner, last)
    text = "\n".join(lines)
    head = exception_head(text)
    class_level = name == klass
    etype = head.split(":", 1)[0] if head else None
    if class_level:
        simple = klass.rsplit(".", 1)[-1] + "."
        smart = next((s for s in summary_lines if s.startswith(simple)), None)
        head = f"{head}\n{smart}" if head and smart else head or smart
    file, line = _class_error_at(klass, name, class_level, text, sources)
    return TestResult(
        id=f"{klass}#{name}", status=Status.FAILED if kind == "FAILURE" else Status.ERRORED,
        file=file, line=line, message=head, details=text or None,
        timed_out=is_timeout(etype, head), native_status=kind.lower(), suite=klass,
    )


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``pkg.Class#method`` (or ``#display name``, ``#method(Types)``): the
    method in the class's source file (``source.java.locate_methods``). A
    class-level error is placed by the parser, from its stack trace, or not
    at all when its class is not in the sources."""
    return locate_methods(tests, sources)


def parse(run: RunOutput) -> TestReport:
    """Parse a ``mvn test`` run: its Surefire XML reports, cross-checked with the console."""
    report = TestReport(framework=FRAMEWORK)
    index = SourceIndex(run.sources_root)
    sources = JavaSources(index)
    compile_errors = CompileErrors(index)
    console = _Console(compile_errors)
    for line in run.all_lines():
        console.feed(line)

    files = _report_files(run, console, index)
    ran = {_outer(c) for c in console.running}
    if ran and not any(_outer(_report_class(f)) in ran for f in files):
        ran = set()  # the "Running" names do not match the report names: do not filter on them
    seen: set[str] = set()
    reported_classes: set[str] = set()
    for path in files:
        if (ran and _outer(_report_class(path)) not in ran) or (not ran and compile_errors.errors):
            report.warnings.append(f"skipped stale report {path.name}: its class did not run in this build")
            continue
        reader = JUnitReader(path)
        for case in reader:
            result = _case_result(case, console, sources)
            if result.id in seen:
                continue
            seen.add(result.id)
            reported_classes.add(_outer(result.suite or ""))
            report.tests.append(result)
        report.warnings.extend(reader.warnings)
        rel = path.relative_to(run.cwd).as_posix() if run.cwd and path.is_relative_to(run.cwd) else str(path)
        report.sources.append(f"junit-xml:{rel}")

    # Failures the console printed for classes that have no (complete) report.
    missing = [f for f in console.failures if _outer(f[0]) not in reported_classes]
    for klass, name, kind, lines in missing:
        result = _console_result(klass, name, kind, lines, sources, console.summary_lines)
        if result.id not in seen:
            seen.add(result.id)
            report.tests.append(result)
    if console.saw_tests or console.failures:
        report.sources.append("console")
    if missing or (console.saw_tests and not reported_classes):
        report.warnings.append("no XML report for some test classes: only their failures are listed "
                               "(the console does not name passing tests)")

    if compile_errors.errors:
        report.tests.extend(compile_errors.results())
        report.build_error = True
        report.sources.append("maven-compiler")
    elif not report.tests and console.goal_failures and not console.saw_tests:
        goal = next((g for g in console.goal_failures if "surefire" not in g and "failsafe" not in g), None)
        if goal:
            report.build_error = True
            report.tests.append(TestResult(id="pom.xml", status=Status.ERRORED, file="pom.xml",
                                           message=goal, native_status="build failure"))
    for problem in console.problems:
        report.warnings.append(f"surefire: {problem}")
    running = [c for c in console.running if c not in console.finished]
    if running and run.killed_by_timeout:
        report.warnings.append(f"the run was killed while {running[-1]} was running; its tests are not listed")
    report.timed_out = (
        run.killed_by_timeout
        or any(t.timed_out for t in report.tests)
        or any("timeout in the fork" in p for p in console.problems)
    )
    if console.totals and not missing:
        # Surefire does not count the compilation errors listed as entries.
        uncounted = sum(1 for t in report.tests if t.native_status == "compilation error")
        report.summary_counts["total"] = sum(console.totals) + uncounted
    if not report.tests and not console.saw_tests and not compile_errors.errors:
        report.warnings.append("no Surefire test output or report found")
        report.output_tail = run.tail()
    return report


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

MAVEN_BINS = ("mvn", "mvnw", "mvn.cmd")
DEFAULT_INVOCATION = "mvn -B test"


def runner_end(words: list[str]) -> int | None:
    return next((i + 1 for i, w in enumerate(words) if bin_name(w) in MAVEN_BINS), None)


def split_args(args: list[str], inv: Invocation) -> None:
    """Goals are positional and stay; the command's own ``-Dtest=`` goes."""
    inv.options = [w for w in args if not re.match(r"^-D(test|it\.test)=", unquote(w))]
    inv.dropped = [w for w in args if w not in inv.options]


def class_and_method(test_id: str) -> tuple[str, str]:
    """``pkg.Class#method(params)[n]`` -> (``pkg.Class``, ``method``)."""
    cls, _, method = test_id.partition("#")
    return cls, re.sub(r"[({\[].*$", "", method)  # parameter lists and invocation indexes go


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    sels = []
    for t in tests:
        cls, method = class_and_method(t.id)
        simple = cls.rsplit(".", 1)[-1]
        sels.append(simple if method == simple or not method else f"{simple}#{method}")
    return [f"-Dtest={shlex.quote(','.join(dict.fromkeys(sels)))}", "-Dsurefire.failIfNoSpecifiedTests=false",
            "-DfailIfNoTests=false"]


def suite_command(root: Path) -> tuple[str, list[str]]:
    if (root / "mvnw").exists():
        return "./mvnw -B test", ["mvn -B test"]
    return "mvn -B test", ["mvn -B verify"]
