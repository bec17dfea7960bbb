"""A failing entry that stands for a whole file, package or crate, and what becomes of it.

When a test file, Go package or crate fails to load or compile, the framework
reports no test of it: the report holds one errored entry named after the
container (the corpus README's ids: pytest's module path, Go's import path,
Jest's and Vitest's file path, cargo's crate, unittest's
``unittest.loader._FailedTest.<module>``). Once a fix makes it load, that entry is
gone and the tests it held are reported in its place. So the entry's outcome in
a later run is its own where it is still there, else the outcome of its members:
it passes when they ran and none of them fails (a test of it that fails is the
next thing to fix, and its message says so), and did not run when none is there.

Pure: ``TestResult`` in, ``Outcome`` out.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from .models import Status, TestResult

FAILED_TEST_PREFIX = "unittest.loader._FailedTest."  # unittest's entry for a module that fails to import
# What follows a container's id in its tests' ids: pytest's and Go's "::", a Go subpackage's "/",
# unittest's ".".
MEMBER_SEPARATORS = ("::", "/", ".")
GOOD = (Status.PASSED, Status.XPASSED, Status.SKIPPED, Status.XFAILED)


class Outcome(BaseModel):
    """How a failing entry did in a later run: ``status`` None when it did not run."""

    status: Status | None
    message: str | None = None
    details: str | None = None
    members: int = 0  # the container's tests that stood in for it (0: the entry itself was found)

    @property
    def passed(self) -> bool:
        return self.status in (Status.PASSED, Status.XPASSED)


def is_container(entry: TestResult) -> bool:
    """Whether ``entry`` names a file, package or crate that failed to load rather than a test."""
    if entry.status is not Status.ERRORED:
        return False
    return (entry.id.startswith(FAILED_TEST_PREFIX) or entry.id == entry.suite
            or (entry.file is not None and (entry.id == entry.file or entry.id.endswith("/" + entry.file))))


def members(entry: TestResult, tests: Iterable[TestResult]) -> list[TestResult]:
    """The tests of a later run that ``entry`` (a container) held."""
    module = entry.id.removeprefix(FAILED_TEST_PREFIX) if entry.id.startswith(FAILED_TEST_PREFIX) else None
    out = []
    for t in tests:
        if t.id == entry.id:
            continue
        if module is not None:
            held = t.id.startswith(module + ".")
        else:
            held = (any(t.id.startswith(entry.id + sep) for sep in MEMBER_SEPARATORS)
                    or (entry.file is not None and t.file == entry.file)
                    or (entry.suite is not None and t.suite == entry.suite))
        if held:
            out.append(t)
    return out


def outcome(entry: TestResult, tests: list[TestResult]) -> Outcome:
    """``entry`` (a failing test of an earlier run) in a later run's ``tests``."""
    found = next((t for t in tests if t.id == entry.id), None)
    if found is not None or not is_container(entry):
        if found is None:
            return Outcome(status=None)
        return Outcome(status=found.status, message=found.message, details=found.details)
    held = members(entry, tests)
    if not held:
        return Outcome(status=None)
    bad = [t for t in held if t.status not in GOOD]
    if not bad:
        return Outcome(status=Status.PASSED, members=len(held),
                       message=f"{entry.id} loads now: {len(held)} test(s) of it ran and none failed")
    first = bad[0]
    more = f" (and {len(bad) - 1} more of its tests)" if len(bad) > 1 else ""
    return Outcome(status=first.status, members=len(held), details=first.details,
                   message=f"{entry.id} loads now, but its test {first.id} is {first.status.value}{more}: "
                           f"{first.message or ''}".rstrip(": "))
