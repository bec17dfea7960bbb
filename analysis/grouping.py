"""Root-cause grouping: failures that share an error site, or the same
message once volatile parts are masked, are one group, so one fix can serve
the group and the suite fixes the group's root first (seed 000's "single
function causing multiple test failures", "cascading failures")."""

from __future__ import annotations

import re

from pydantic import BaseModel

from analysis.patterns import FailureClassification, FailureKind

# Masks for parts of messages that differ between otherwise identical failures.
VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "'?'"),
    (re.compile(r"\b\d+(\.\d+)?\b"), "N"),
    (re.compile(r"\s+"), " "),
]


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


def group_failures(classified: list[FailureClassification]) -> list[FailureGroup]:
    """Groups, largest first; a failure with nothing in common is a group of one.

    Build errors and fixture errors are ordered before everything else: they
    make other tests fail and must be fixed first.
    """
    groups: dict[str, list[FailureClassification]] = {}
    reasons: dict[str, str] = {}
    for c in classified:
        if c.error_site is not None:
            key = f"site:{c.error_site.file}:{c.error_site.line}"
            reasons.setdefault(key, f"fail at the same place, {c.error_site.file}:{c.error_site.line}")
        else:
            key = f"message:{c.kind.value}:{message_signature(c.evidence)}"
            reasons.setdefault(key, f"fail with the same {c.kind.value} message")
        groups.setdefault(key, []).append(c)
    first = {FailureKind.BUILD_ERROR: 0, FailureKind.FIXTURE_ERROR: 1}
    ordered = sorted(groups.items(), key=lambda kv: (first.get(kv[1][0].kind, 2), -len(kv[1])))
    return [
        FailureGroup(
            key=key, kind=members[0].kind,
            reason=reasons[key] if len(members) > 1 else "no shared cause found",
            root_test=members[0].test_id, tests=[m.test_id for m in members],
        )
        for key, members in ordered
    ]
