"""Commands that run exactly one test, in each framework's own selector
syntax. Validation runs the failing test alone first, so a selector that
matches more (or nothing) would give a wrong verdict: names are anchored and
regex-escaped wherever the framework takes a pattern."""

from __future__ import annotations

import fnmatch
import re
import shlex

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers.models import TestResult
from greenloop.runner.plan import SuitePlan, with_reports

q = shlex.quote
UNITTEST_FIXTURE = re.compile(r"(?:setUpClass|tearDownClass|setUpModule|tearDownModule) \((.+)\)$")
UNITTEST_FAILED_IMPORT = "unittest.loader._FailedTest."


def selected(test_id: str, select: list[str], exclude: list[str]) -> bool:
    """Whether a test id passes a run's select/exclude patterns: ``select``
    takes globs or substrings, ``exclude`` globs."""
    if select and not any(fnmatch.fnmatchcase(test_id, p) or p in test_id for p in select):
        return False
    return not any(fnmatch.fnmatchcase(test_id, p) for p in exclude)


def _js_regex(title: str) -> str:
    return "^" + re.escape(title) + "$"


def _go_run_pattern(name: str) -> str:
    # go test -run splits on '/' and matches each level as its own regex.
    return "/".join("^" + re.escape(part) + "$" for part in name.split("/"))


def _go_package_dir(test: TestResult) -> str:
    if test.file and "/" in test.file:
        return "./" + test.file.rsplit("/", 1)[0]
    return "."


def _cargo_binary_flag(binary: str | None) -> str:
    if not binary:
        return ""
    if binary == "doc-tests" or binary.startswith("Doc-tests"):
        return " --doc"
    if binary.startswith("unittests src/lib.rs") or binary == "src/lib.rs":
        return " --lib"
    m = re.search(r"tests/([\w-]+)\.rs", binary)
    if m:
        return f" --test {m.group(1)}"
    m = re.search(r"src/bin/([\w-]+)\.rs", binary)
    if m:
        return f" --bin {m.group(1)}"
    return ""


def _split_class_method(test_id: str) -> tuple[str, str]:
    cls, _, method = test_id.partition("#")
    method = re.sub(r"[({\[].*$", "", method)  # drop parameter lists and invocation indexes
    return cls, method


def single_test_command(plan: SuitePlan, test: TestResult) -> str:
    """The command that runs only ``test`` under ``plan``'s framework."""
    fw, tid = plan.framework, test.id
    if fw == "pytest":
        return with_reports("pytest", f"python -m pytest {q(tid)}")
    if fw == "unittest":
        fixture = UNITTEST_FIXTURE.match(tid)
        if fixture:
            target = fixture.group(1)
        elif tid.startswith(UNITTEST_FAILED_IMPORT):
            target = tid.removeprefix(UNITTEST_FAILED_IMPORT)
        else:
            target = re.sub(r" [(\[].*$", "", tid)  # a subtest runs with its test
        return f"python -m unittest -v {q(target)}"
    if fw == "go":
        pkg_path, _, name = tid.partition("::")
        if not name:
            return f"go test -json {q(_go_package_dir(test))}"
        return f"go test -json -count=1 -run {q(_go_run_pattern(name))} {q(_go_package_dir(test))}"
    if fw in ("jest", "vitest"):
        sep = " › " if fw == "jest" else " > "
        # Both match -t against the titles joined with single spaces.
        full = " ".join(tid.split(sep))
        file = q(test.file) if test.file else ""
        if fw == "jest":
            return with_reports("jest", f"npx jest --ci {file} -t {q(_js_regex(full))}".replace("  ", " "))
        return with_reports("vitest", f"npx vitest run {file} -t {q(_js_regex(full))}".replace("  ", " "))
    if fw == "mocha":
        file = f" {q(test.file)}" if test.file else ""
        return f"npx mocha{file} --grep {q(_js_regex(tid))}"
    if fw == "node-test":
        name = tid.split(" > ")[-1]
        file = f" {q(test.file)}" if test.file else ""
        return with_reports("node-test", f"node --test --test-name-pattern={q(_js_regex(name))}") + file
    if fw == "cargo-test":
        return f"cargo test{_cargo_binary_flag(test.suite)} {q(tid)} -- --exact"
    if fw == "maven-surefire":
        cls, method = _split_class_method(tid)
        simple = cls.rsplit(".", 1)[-1]
        sel = simple if method == simple or not method else f"{simple}#{method}"
        return f"mvn -B test -Dtest={q(sel)} -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false"
    if fw == "junit-console":
        cls, method = _split_class_method(tid)
        base = re.sub(r"\s--(scan-classpath|select-\w+)(?:[ =](?!-)\S+)?", "", plan.test_command)
        return f"{base} --select-method {q(cls + '#' + method)}"
    if fw == "rspec":
        if test.file and test.line:
            return f"{_rspec_base(plan)} {q(f'{test.file}:{test.line}')}"
        return f"{_rspec_base(plan)} -e {q(tid)}"
    if fw == "phpunit":
        method = tid.split("::")[-1].split(" with data set")[0]
        cls = tid.split("::")[0].rsplit("\\", 1)[-1]
        base = plan.test_command.split(" --")[0] if plan.default_command else "phpunit"
        return f"{base} --filter {q('/' + re.escape(cls) + '::' + re.escape(method) + '( with data set .*)?$/')}"
    if fw == "googletest":
        binary = plan.test_command.split()[0]
        return f"{binary} --gtest_filter={q(tid)}"
    if fw == "ctest":
        return f"ctest --test-dir build --output-on-failure -R {q('^' + re.escape(tid) + '$')}"
    raise GreenloopError(
        f"cannot run a single {fw} test; Greenloop will validate with the whole suite",
        kind=ErrorKind.VALIDATION_ERROR, framework=fw,
    )


def _rspec_base(plan: SuitePlan) -> str:
    return "bundle exec rspec" if plan.test_command.startswith("bundle ") else "rspec"
