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
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field

from ..domain.errors import ErrorKind, GreenloopError
from ..parsers.command import raw_words, split_segments, unquote
from ..parsers.models import TestResult
from . import js_project
from .plan import SuitePlan, with_reports

q = shlex.quote
UNITTEST_FIXTURE = re.compile(r"(?:setUpClass|tearDownClass|setUpModule|tearDownModule) \((.+)\)$")
UNITTEST_FAILED_IMPORT = "unittest.loader._FailedTest."
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

# Options that take their value as the next word, per framework (``--x=v``
# and attached short values are one word and need no entry).
VALUE_OPTIONS: dict[str, set[str]] = {
    "pytest": {"-p", "-k", "-m", "-c", "-o", "-W", "-n", "--maxfail", "--junitxml", "--junit-xml", "--rootdir",
               "--confcutdir", "--basetemp", "--tb", "--deselect", "--ignore", "--ignore-glob", "--durations",
               "--log-level", "--log-cli-level", "--timeout", "--cov", "--cov-report", "--dist", "--import-mode",
               "--json-report-file", "--override-ini", "--capture", "--color", "--html", "--reruns", "-r"},
    "unittest": {"-k", "-s", "-t", "-p", "--start-directory", "--top-level-directory", "--pattern"},
    "go": {"-run", "-skip", "-timeout", "-count", "-tags", "-p", "-parallel", "-cpu", "-bench", "-benchtime",
           "-coverprofile", "-covermode", "-coverpkg", "-o", "-exec", "-shuffle", "-list", "-mod", "-ldflags",
           "-gcflags", "-modfile", "-C", "-outputdir", "-memprofile",
           "-cpuprofile", "-blockprofile", "-mutexprofile", "-trace", "-fuzz", "-fuzztime"},
    "cargo-test": {"-p", "--package", "-F", "--features", "--target", "--manifest-path", "-j", "--jobs",
                   "--profile", "--test", "--bin", "--example", "--bench", "--target-dir", "--color",
                   "--message-format", "-Z", "--exclude", "--config"},
    "libtest": {"--format", "-Z", "--test-threads", "--skip", "--logfile", "--color", "--shuffle-seed"},
    "jest": {"-c", "--config", "--outputFile", "-t", "--testNamePattern", "--testPathPattern",
             "--testPathPatterns", "--testPathIgnorePatterns", "-w", "--maxWorkers", "--rootDir", "--roots",
             "--selectProjects", "--shard", "--testTimeout", "--seed", "--coverageDirectory", "--reporters",
             "--testEnvironment", "--env", "--setupFiles", "--setupFilesAfterEnv", "--projects"},
    "vitest": {"-c", "--config", "-r", "--root", "--dir", "--reporter", "--outputFile", "--project", "--pool",
               "-t", "--testNamePattern", "--environment", "--shard", "--maxWorkers", "--mode",
               "--testTimeout", "--exclude", "--sequence.seed"},
    "mocha": {"-R", "--reporter", "-O", "--reporter-option", "--reporter-options", "-r", "--require", "-t",
              "--timeout", "-s", "--slow", "-g", "--grep", "-f", "--fgrep", "-u", "--ui", "--config",
              "--package", "--extension", "--spec", "--ignore", "--exclude", "--file", "-j", "--jobs",
              "--retries"},
    "node-test": {"-r", "--require", "--import", "--loader", "--experimental-loader", "--test-reporter",
                  "--test-reporter-destination", "--test-name-pattern", "--test-skip-pattern",
                  "--test-concurrency", "--test-timeout", "--env-file", "-C", "--conditions"},
    "tape": {"-r", "--require", "-i", "--ignore", "--ignore-pattern"},
    "ava": {"-m", "--match", "-c", "--concurrency", "--config", "-T", "--timeout", "--node-arguments"},
    "node-tap": {"-R", "--reporter", "-g", "--grep", "-t", "--timeout", "-j", "--jobs", "-o",
                 "--output-file", "--node-arg", "-i", "--include", "--exclude", "-c", "--config"},
    "rspec": {"-f", "--format", "-o", "--out", "-r", "--require", "-e", "--example", "-t", "--tag", "-I",
              "--order", "--seed", "-P", "--pattern", "--default-path", "-E", "--example-matches",
              "--exclude-pattern", "--options"},
    "phpunit": {"--filter", "--log-junit", "-c", "--configuration", "--bootstrap", "--testsuite", "--group",
                "--exclude-group", "--printer", "--cache-result-file", "--coverage-clover", "--coverage-html",
                "--coverage-text", "--testdox-html", "--testdox-text", "--include-path", "-d",
                "--test-suffix", "--log-teamcity", "--whitelist", "--coverage-filter"},
    "ctest": {"-R", "--tests-regex", "-E", "--exclude-regex", "-L", "--label-regex", "-LE", "-I",
              "--tests-information", "--test-dir", "--output-junit", "-j", "--parallel", "-C",
              "--build-config", "--timeout", "--repeat", "-O", "--output-log", "--resource-spec-file",
              "--stop-time", "--test-load", "-T", "-D", "-S", "-M", "--schedule-random-seed"},
}
# Options that choose tests themselves: replaced by the selector (with their value).
SELECTION_OPTIONS: dict[str, set[str]] = {
    "go": {"-run"},
    "cargo-test": {"--lib", "--bins", "--tests", "--doc", "--test", "--bin", "--examples", "--example",
                   "--benches", "--bench", "--all-targets"},
    "libtest": {"--exact"},
    "jest": {"-t", "--testNamePattern", "--testPathPattern", "--testPathPatterns", "--onlyFailures",
             "-o", "--onlyChanged", "--changedSince", "--findRelatedTests", "--lastCommit"},
    "vitest": {"-t", "--testNamePattern", "--changed"},
    "mocha": {"-g", "--grep", "-f", "--fgrep", "--spec", "-i", "--invert"},
    "node-test": {"--test-name-pattern", "--test-only"},
    "ava": {"-m", "--match", "-u", "--update-snapshots", "-w", "--watch"},
    "node-tap": {"-g", "--grep", "-O", "--only", "--changed"},
    "rspec": {"-e", "--example", "--only-failures", "--next-failure", "-E", "--example-matches"},
    "phpunit": {"--filter"},
    "ctest": {"-R", "--tests-regex", "-I", "--tests-information", "-E", "--exclude-regex", "-L",
              "--label-regex", "-LE", "--rerun-failed"},
}
# Defaults when the command does not call the runner itself (``npm test``).
DEFAULT_INVOCATION = {
    "pytest": "python -m pytest", "unittest": "python -m unittest -v", "go": "go test -json",
    "cargo-test": "cargo test", "jest": "npx jest --ci", "vitest": "npx vitest run", "mocha": "npx mocha",
    "node-test": "node --test", "tape": "npx tape", "node-tap": "npx tap --reporter=tap", "ava": "npx ava --tap",
    "rspec": "rspec", "phpunit": "phpunit", "ctest": "ctest --test-dir build --output-on-failure",
    "maven-surefire": "mvn -B test",
}
REPORTING = {"pytest", "jest", "vitest", "node-test"}


def selected(test_id: str, select: list[str], exclude: list[str]) -> bool:
    """Whether a test id passes a run's select/exclude patterns: ``select``
    takes globs or substrings, ``exclude`` globs."""
    if select and not any(fnmatch.fnmatchcase(test_id, p) or p in test_id for p in select):
        return False
    return not any(fnmatch.fnmatchcase(test_id, p) for p in exclude)


# ---------------------------------------------------------------------- the suite's invocation


@dataclass
class Invocation:
    """The runner's call in a command, taken apart."""

    before: str  # earlier segments with their operators ("cd x && ")
    head: list[str]  # env, wrappers, the runner and its subcommand
    options: list[str] = field(default_factory=list)  # kept flags with their values
    positionals: list[str] = field(default_factory=list)  # what chose the tests: dropped
    after_dashes: list[str] | None = None  # cargo: the libtest arguments after "--"
    dropped: list[str] = field(default_factory=list)  # the command's own selection options

    def render(self, *extra: str) -> str:
        return self.before + " ".join([*self.head, *self.options, *(e for e in extra if e)])


def _name(word: str) -> str:
    return unquote(word).rsplit("/", 1)[-1]


def _head_end(framework: str, words: list[str]) -> int | None:
    """Index just after the runner's words (runner, subcommand) in a segment."""
    names = [_name(w) for w in words]
    values = [unquote(w) for w in words]
    if framework == "pytest":
        for i, n in enumerate(names):
            if n in ("pytest", "py.test", "pytest-3"):
                return i + 1
            if values[i] == "-m" and i + 1 < len(values) and values[i + 1] == "pytest":
                return i + 2
    elif framework == "unittest":
        for i in range(len(values) - 1):
            if values[i] == "-m" and values[i + 1] == "unittest":
                return i + 2
    elif framework == "go":
        for i in range(len(names) - 1):
            if names[i] == "go" and values[i + 1] == "test":
                return i + 2
    elif framework == "cargo-test":
        if "cargo" in names:
            start = names.index("cargo")
            for i in range(start + 1, len(values)):
                if values[i] == "test":
                    return i + 1
    elif framework in ("jest", "vitest", "mocha", "tape", "node-tap", "node-test", "ava"):
        found = js_project.runner_in_segment(" ".join(words), {"tape"} if framework == "tape" else
                                             {"tap"} if framework == "node-tap" else set())
        if found and found[0] == framework:
            k = found[1] + 1
            if names[found[1]] == "react-scripts":
                k += 1  # react-scripts test
            if framework == "vitest":  # `vitest` alone may watch: always `vitest run`
                if k < len(values) and values[k] in ("run", "watch"):
                    words[k] = "run"
                else:
                    words.insert(k, "run")
                k += 1
            return k
    elif framework in ("rspec", "phpunit", "ctest"):
        for i, n in enumerate(names):
            if n == framework:
                return i + 1
    elif framework == "maven-surefire":
        for i, n in enumerate(names):
            if n in ("mvn", "mvnw", "mvn.cmd"):
                return i + 1
    elif framework == "googletest":
        for i, v in enumerate(values):
            if not ENV_ASSIGNMENT.match(v):
                return i + 1
    return None


def _split_args(framework: str, words: list[str], inv: Invocation, table: str | None = None) -> None:
    """Sort the words after the head into kept options, dropped selection
    options and dropped positionals."""
    table = table or framework
    takes_value, selecting = VALUE_OPTIONS.get(table, set()), SELECTION_OPTIONS.get(table, set())
    i = 0
    while i < len(words):
        w, v = words[i], unquote(words[i])
        if v == "--" and framework == "cargo-test" and inv.after_dashes is None:
            inv.after_dashes = []
            rest = Invocation(before="", head=[])
            _split_args(framework, words[i + 1:], rest, "libtest")
            inv.after_dashes = rest.options
            inv.dropped += rest.dropped + rest.positionals
            return
        if v.startswith("-") and v != "-":
            key = v.split("=", 1)[0]
            group = [w]
            if key == v and key in takes_value and i + 1 < len(words):
                group.append(words[i + 1])
                i += 1
            if key in selecting or (framework == "go" and key.lstrip("-") == "run"):
                inv.dropped += group
            else:
                inv.options += group
        else:
            inv.positionals.append(w)
        i += 1


def invocation(plan: SuitePlan) -> Invocation | None:
    """The runner's call in the plan's command, or None when the command does
    not call the runner itself."""
    fw = plan.framework
    segments = split_segments(plan.test_command)
    for k in range(len(segments) - 1, -1, -1):
        op, segment = segments[k]
        if op == "|":
            continue
        words = raw_words(segment)
        end = _head_end(fw, words)
        if end is None:
            continue
        # What ran before the runner (cd, a build) stays; earlier runs of the runner itself do not.
        before = "".join(f"{s} {segments[j + 1][0]} " for j, (_, s) in enumerate(segments[:k])
                         if _head_end(fw, raw_words(s)) is None)
        inv = Invocation(before=before, head=words[:end])
        args = words[end:]
        if fw == "maven-surefire":  # goals are positional and stay
            inv.options = [w for w in args if not re.match(r"^-D(test|it\.test)=", unquote(w))]
            inv.dropped = [w for w in args if w not in inv.options]
            return inv
        if fw == "googletest":
            inv.options = [w for w in args if not unquote(w).startswith("--gtest_filter")]
            return inv
        if fw == "unittest" and args and unquote(args[0]) == "discover":
            args = args[1:]  # named tests are loaded directly: discover and its -s/-t/-p go
            inv.dropped.append("discover")
            _split_args(fw, args, inv)
            inv.options = _without(inv.options, {"-s", "-t", "-p", "--start-directory",
                                                  "--top-level-directory", "--pattern"}, fw)
            return inv
        _split_args(fw, args, inv)
        return inv
    return None


def _without(options: list[str], keys: set[str], framework: str) -> list[str]:
    out: list[str] = []
    skip = False
    for w in options:
        if skip:
            skip = False
            continue
        key = unquote(w).split("=", 1)[0]
        if key in keys:
            skip = key == unquote(w) and key in VALUE_OPTIONS.get(framework, set())
            continue
        out.append(w)
    return out


def _base(plan: SuitePlan) -> tuple[Invocation, bool]:
    """The invocation to build on, and whether it is Greenloop's default
    (then Greenloop's reports are added)."""
    inv = invocation(plan)
    if inv is None and plan.runner_command:  # `npm test`: the runner the script calls
        inv = invocation(plan.model_copy(update={"test_command": plan.runner_command}))
    if inv is not None:
        return inv, False
    default = DEFAULT_INVOCATION.get(plan.framework)
    if default is None:
        raise GreenloopError(
            f"cannot run a single {plan.framework} test; Greenloop will validate with the whole suite",
            kind=ErrorKind.VALIDATION_ERROR, framework=plan.framework,
        )
    words = raw_words(default)
    fw_plan = plan.model_copy(update={"test_command": default})
    inv = invocation(fw_plan) or Invocation(before="", head=words)
    return inv, True


# ---------------------------------------------------------------------- selectors


def _js_regex(title: str) -> str:
    return "^" + re.escape(title) + "$"


def _alternation(patterns: list[str]) -> str:
    return patterns[0] if len(patterns) == 1 else "^(?:" + "|".join(p[1:-1] for p in patterns) + ")$"


def title_pattern(titles: list[str]) -> str:
    """A JavaScript regex matching exactly these full titles."""
    return _alternation([_js_regex(t) for t in titles])


def _go_run_pattern(name: str) -> str:
    # go test -run splits on '/' and matches each level as its own regex.
    return "/".join("^" + re.escape(part) + "$" for part in name.split("/"))


def go_package_dir(test: TestResult) -> str:
    """The folder of a go test's package, as ``go test`` takes it (``./sub``, or ``.``)."""
    if test.file and "/" in test.file:
        return "./" + test.file.rsplit("/", 1)[0]
    return "."


def cargo_binary_flag(binary: str | None) -> str:
    """cargo's flag that runs only the test binary a result's suite label names (empty: unknown)."""
    if not binary:
        return ""
    if binary == "doc-tests" or binary.startswith("Doc-tests"):
        return "--doc"
    if binary.startswith("unittests src/lib.rs") or binary == "src/lib.rs":
        return "--lib"
    m = re.search(r"tests/([\w-]+)\.rs", binary)
    if m:
        return f"--test {m.group(1)}"
    m = re.search(r"src/bin/([\w-]+)\.rs", binary)
    if m:
        return f"--bin {m.group(1)}"
    return ""


def _split_class_method(test_id: str) -> tuple[str, str]:
    cls, _, method = test_id.partition("#")
    method = re.sub(r"[({\[].*$", "", method)  # drop parameter lists and invocation indexes
    return cls, method


def _unittest_target(tid: str) -> str:
    fixture = UNITTEST_FIXTURE.match(tid)
    if fixture:
        return fixture.group(1)
    if tid.startswith(UNITTEST_FAILED_IMPORT):
        return tid.removeprefix(UNITTEST_FAILED_IMPORT)
    return re.sub(r" [(\[].*$", "", tid)  # a subtest runs with its test


def _files(tests: list[TestResult], inv: Invocation) -> list[str]:
    """The tests' files, or the command's own paths when a test's file is unknown."""
    if all(t.file for t in tests):
        return list(dict.fromkeys(q(t.file) for t in tests if t.file))
    return inv.positionals


def _one(tests: list[TestResult], framework: str, why: str) -> TestResult:
    if len(tests) != 1:
        raise GreenloopError(f"cannot select several {framework} tests at once ({why}); run them one by one",
                             kind=ErrorKind.VALIDATION_ERROR, framework=framework)
    return tests[0]


def selection_command(plan: SuitePlan, tests: list[TestResult]) -> str:
    """The command that runs only ``tests`` (one or several) under ``plan``'s
    framework, built on the plan's own command (see the module docstring)."""
    if not tests:
        raise GreenloopError("no tests to select", kind=ErrorKind.VALIDATION_ERROR)
    fw = plan.framework
    if fw == "junit-console":
        base = re.sub(r"\s--(scan-classpath|select-\w+)(?:[ =](?!-)\S+)?", "", plan.test_command)
        methods = []
        for t in tests:
            cls, method = _split_class_method(t.id)
            methods.append(f"--select-method {q(cls + '#' + method)}")
        return f"{base} {' '.join(methods)}"
    if fw == "googletest":
        inv, _ = _base(plan)
        return inv.render(f"--gtest_filter={q(':'.join(t.id for t in tests))}")
    inv, default = _base(plan)
    if default and fw == "node-test":
        # Before the selector: node reads options only before its test files.
        inv.options += raw_words(with_reports(fw, ""))
    command = inv.render(*_selector(fw, tests, inv, plan.default_command))
    return with_reports(fw, command) if default and fw in REPORTING and fw != "node-test" else command


def _selector(fw: str, tests: list[TestResult], inv: Invocation, plan_default: bool = False) -> list[str]:
    """The words that select ``tests``, appended to the invocation."""
    ids = [t.id for t in tests]
    if fw == "pytest":
        return [q(i) for i in ids]
    if fw == "unittest":
        if "-v" not in {unquote(w) for w in inv.options} and "-v" not in {unquote(w) for w in inv.head}:
            inv.options.append("-v")
        return [q(t) for t in dict.fromkeys(_unittest_target(i) for i in ids)]
    if fw == "go":
        dirs = {go_package_dir(t) for t in tests}
        names = [i.partition("::")[2] for i in ids]
        if len(dirs) > 1:
            raise GreenloopError("cannot select go tests of several packages at once; run them one by one",
                                 kind=ErrorKind.VALIDATION_ERROR, framework=fw)
        if not any(unquote(w).startswith("-count") for w in inv.options):
            inv.options.append("-count=1")
        if plan_default:
            # Greenloop's own -race has a fallback without it (no cgo); one test need not race.
            inv.options = [w for w in inv.options if unquote(w) != "-race"]
        if not all(names):
            return [q(dirs.pop())]  # a package-level entry: the package's tests decide
        if len(names) == 1:
            pattern = _go_run_pattern(names[0])
        elif all("/" not in n for n in names):
            pattern = "^(?:" + "|".join(re.escape(n) for n in names) + ")$"
        else:
            t = _one(tests, fw, "subtests take one -run pattern per level")
            pattern = _go_run_pattern(t.id.partition("::")[2])
        return ["-run", q(pattern), q(dirs.pop())]
    if fw == "cargo-test":
        binaries = {cargo_binary_flag(t.suite) for t in tests}
        if len(binaries) > 1:
            raise GreenloopError("cannot select cargo tests of several test binaries at once",
                                 kind=ErrorKind.VALIDATION_ERROR, framework=fw)
        libtest = [*(inv.after_dashes or []), "--exact"]
        return [binaries.pop(), *(q(i) for i in ids), "--", *libtest]
    if fw in ("jest", "vitest"):
        sep = " › " if fw == "jest" else " > "
        # Both match -t against the titles joined with single spaces.
        pattern = _alternation([_js_regex(" ".join(i.split(sep))) for i in ids])
        return [*_files(tests, inv), "-t", q(pattern)]
    if fw == "mocha":
        return [*_files(tests, inv), "--grep", q(title_pattern(ids))]
    if fw == "node-test":
        # node:test matches each level's name; repeated patterns are alternatives.
        patterns = [f"--test-name-pattern={q(_js_regex(i.split(' > ')[-1]))}" for i in dict.fromkeys(ids)]
        return [*patterns, *_files(tests, inv)]
    if fw == "tape":
        # tape has no name filter: the test's file runs whole, or the whole suite when its file is unknown.
        return _files(tests, inv)
    if fw == "ava":
        # The suite's files stay, so AVA's "file › " prefix, and the id, are the same.
        out = list(inv.positionals)
        for title in dict.fromkeys(i.split(" › ")[-1] for i in ids):
            out += ["--match", q(title)]
        return out
    if fw == "node-tap":
        t = _one(tests, fw, "its --grep patterns apply per level")
        levels = t.id.split(" > ")
        file = q(t.file) if t.file else None
        if file and levels and levels[0] == t.file:
            levels = levels[1:]
        greps = [f"--grep={q(_js_regex(level))}" for level in levels]
        return [*greps, file] if file else [*greps, *inv.positionals]
    if fw == "maven-surefire":
        sels = []
        for i in ids:
            cls, method = _split_class_method(i)
            simple = cls.rsplit(".", 1)[-1]
            sels.append(simple if method == simple or not method else f"{simple}#{method}")
        return [f"-Dtest={q(','.join(dict.fromkeys(sels)))}", "-Dsurefire.failIfNoSpecifiedTests=false",
                "-DfailIfNoTests=false"]
    if fw == "rspec":
        if all(t.file and t.line for t in tests):
            return [q(f"{t.file}:{t.line}") for t in tests]
        out: list[str] = []
        for i in ids:
            out += ["-e", q(i)]
        return out
    if fw == "phpunit":
        parts = []
        for i in ids:
            method = i.split("::")[-1].split(" with data set")[0]
            cls = i.split("::")[0].rsplit("\\", 1)[-1]
            parts.append(re.escape(cls) + "::" + re.escape(method))
        body = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
        # Its paths say where the tests are, not which: they stay.
        return [*inv.positionals, "--filter", q("/" + body + "( with data set .*)?$/")]
    if fw == "ctest":
        return ["-R", q("^(?:" + "|".join(re.escape(i) for i in ids) + ")$" if len(ids) > 1
                        else "^" + re.escape(ids[0]) + "$")]
    raise GreenloopError(
        f"cannot run a single {fw} test; Greenloop will validate with the whole suite",
        kind=ErrorKind.VALIDATION_ERROR, framework=fw,
    )


def single_test_command(plan: SuitePlan, test: TestResult) -> str:
    """The command that runs only ``test`` under ``plan``'s framework."""
    return selection_command(plan, [test])
