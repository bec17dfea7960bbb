"""Root-cause grouping: failures whose most likely cause is the same function
(fault localization's top suspect), else that share an error site or a frame
in the project's own (non-test) code, else the same message once volatile
parts are masked (never a bare assertion's), are one group, so one fix can serve the group and the suite fixes
the group's root first (a "single function causing multiple test
failures", "cascading failures")."""

from __future__ import annotations

import re

from pydantic import BaseModel

from .localize import MODULE_LEVEL, Suspect
from .patterns import FailureClassification, FailureKind

# Masks for parts of messages that differ between otherwise identical failures.
VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "'?'"),
    (re.compile(r"\b\d+(\.\d+)?\b"), "N"),
    (re.compile(r"\s+"), " "),
]
# How far down a failure's ranked suspects a larger group's shared cause may sit for the failure to
# join that group: one bug shows as the top suspect of most of its failures and, for the others (a
# test that reaches it through a function of its own), a few places lower.
RUNNERS_UP = 2
# Kinds that make other tests fail: fixed before everything else.
FIRST = {FailureKind.BUILD_ERROR: 0, FailureKind.FIXTURE_ERROR: 1}


class FailureGroup(BaseModel):
    key: str
    kind: FailureKind
    reason: str
    # The test to fix first: its fix most likely serves the others.
    root_test: str
    tests: list[str]


def message_signature(evidence: str) -> str:
    """The evidence line with addresses, quoted values and numbers masked."""
    sig = evidence
    for pattern, repl in VOLATILE:
        sig = pattern.sub(repl, sig)
    return sig.strip()[:200]


def _suspect_key(s: Suspect) -> str:
    return f"suspect:{s.file}:{s.start}"


def _links(c: FailureClassification, suspect: Suspect | None = None) -> list[tuple[str, str]]:
    """(key, reason) of everything another failure could share with ``c``: its top suspect (the
    function fault localization ranks first), else its error site and the project frames it passes
    through, else (no site, not a bare assertion) its masked message."""
    if suspect is not None and c.kind not in FIRST and suspect.function != MODULE_LEVEL:
        return [(_suspect_key(suspect),
                 f"share their most likely cause, {suspect.function} ({suspect.file}:{suspect.start})")]
    if c.error_site is None:
        if c.kind is FailureKind.ASSERTION:  # "assert 2 == 3" says nothing about where the bug is
            return [(f"test:{c.test_id}", "no shared cause found")]
        key = f"message:{c.kind.value}:{message_signature(c.evidence)}"
        return [(key, f"fail with the same {c.kind.value} message")]
    out = [(f"site:{c.error_site.file}:{c.error_site.line}",
            f"fail at the same place, {c.error_site.file}:{c.error_site.line}")]
    # Frames of the test's own file are its own lines, not a shared cause.
    out += [(f"frame:{f.file}:{f.line}", f"pass through {f.file}:{f.line}")
            for f in c.project_frames if f.file != c.test_file]
    return out


def _root_order(c: FailureClassification, position: int) -> tuple[int, int, int]:
    # Build/fixture errors first; then the most direct test (fewest project
    # frames between it and the failure), whose fix loop is the simplest.
    return (FIRST.get(c.kind, 2), len(c.project_frames), position)


def group_failures(classified: list[FailureClassification],
                   suspects: dict[str, list[Suspect]] | None = None) -> list[FailureGroup]:
    """Groups, largest first; a failure with nothing in common is a group of one. ``suspects``:
    each failing test's ranked suspects, best first (``analysis/localize.py``), where any were found.
    A failure whose own group is smaller joins a group of several failing the same way (the same
    kind) whose shared top suspect is among its next ``RUNNERS_UP`` suspects (one bug, reached
    through another function): one request, and the others wait for its verdict rather than ask
    in parallel. A failure of another kind (an assertion beside a group of KeyErrors it merely
    passes through) stays apart.

    Build errors and fixture errors are ordered before everything else: they
    make other tests fail and must be fixed first. Within a group the root
    (the test to fix first) comes first.
    """
    parent = list(range(len(classified)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    ranked = suspects or {}

    def top(c: FailureClassification) -> Suspect | None:
        return (ranked.get(c.test_id) or [None])[0]

    owner: dict[str, int] = {}
    shared: dict[str, int] = {}  # how many failures rank each suspect first
    reason_of: dict[int, str] = {}

    def union(key: str, i: int, reason: str) -> None:
        a, b = find(owner[key]), find(i)
        if a != b:
            parent[b] = a
            reason_of.setdefault(a, reason_of.pop(b, None) or reason)

    for i, c in enumerate(classified):
        for key, reason in _links(c, top(c)):
            shared[key] = shared.get(key, 0) + 1
            if key not in owner:
                owner[key] = i
                continue
            union(key, i, reason)
    size = [0] * len(classified)
    for i in range(len(classified)):
        size[find(i)] += 1
    for i, c in enumerate(classified):
        if c.kind in FIRST:
            continue
        for s in (ranked.get(c.test_id) or [])[1:RUNNERS_UP + 1]:
            key = _suspect_key(s)
            if (shared.get(key, 0) > 1 and size[find(owner[key])] > size[find(i)]
                    and classified[owner[key]].kind is c.kind):
                a, b = find(owner[key]), find(i)
                union(key, i, f"share their most likely cause, {s.function} ({s.file}:{s.start})")
                size[a] += size[b]
                break
    members: dict[int, list[int]] = {}
    for i in range(len(classified)):
        members.setdefault(find(i), []).append(i)
    groups = []
    for root, idx in members.items():
        idx.sort(key=lambda i: _root_order(classified[i], i))
        first = classified[idx[0]]
        groups.append((FIRST.get(first.kind, 2), -len(idx), idx[0], FailureGroup(
            key=_links(first, top(first))[0][0], kind=first.kind,
            reason=reason_of.get(root, "no shared cause found") if len(idx) > 1 else "no shared cause found",
            root_test=first.test_id, tests=[classified[i].test_id for i in idx],
        )))
    return [g for *_, g in sorted(groups, key=lambda t: t[:3])]
