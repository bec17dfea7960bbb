"""Where an LLM edit may go. Every path is checked before anything is
written: confined to the repository (no absolute paths, no ``..``, no
symlink escape), never into ``.git/`` or CI configuration, text only, and
within size caps. Production code may be edited unless the run says tests
only (allowed by default)."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from ..domain.errors import ErrorKind, GreenloopError

MAX_FILE_BYTES = 256 * 1024
MAX_EDIT_SET_BYTES = 1024 * 1024
FORBIDDEN_DIRS = (".git", ".greenloop", ".github", ".gitlab", ".circleci", ".buildkite", ".hg", ".svn")
FORBIDDEN_FILES = {
    ".gitlab-ci.yml", ".travis.yml", "Jenkinsfile", "azure-pipelines.yml", "bitbucket-pipelines.yml",
    ".drone.yml", "appveyor.yml", ".gitmodules",
}
TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|specs|__tests__|testing)(/|$)|(^|/)test_[^/]*$|_test\.\w+$|\.test\.\w+$|\.spec\.\w+$|"
    r"Tests?\.\w+$|_spec\.rb$|(^|/)src/test/"
)


class EditRejected(GreenloopError):
    """An edit the policy forbids; the attempt fails with this reason."""

    kind = ErrorKind.PERMISSION_ERROR


def is_test_path(rel: str) -> bool:
    """Whether a repository path looks like test code (by common conventions)."""
    return TEST_PATH.search(rel) is not None


def confine(root: Path, path: str, *, allow_production: bool = True) -> str:
    """The normalized repository-relative path for ``path``, or ``EditRejected``."""
    raw = path.strip().replace("\\", "/")
    if not raw:
        raise EditRejected("empty path")
    if raw.startswith("/") or re.match(r"^[A-Za-z]:/", raw):
        raise EditRejected(f"{path}: absolute paths are outside the repository", path=path)
    parts: list[str] = []
    for part in PurePosixPath(raw).parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise EditRejected(f"{path}: escapes the repository", path=path)
            parts.pop()
        else:
            parts.append(part)
    if not parts:
        raise EditRejected(f"{path}: names the repository itself", path=path)
    rel = "/".join(parts)
    if parts[0] in FORBIDDEN_DIRS or any(p == ".git" for p in parts):
        raise EditRejected(f"{rel}: {parts[0]}/ may not be edited", path=rel)
    if parts[-1] in FORBIDDEN_FILES:
        raise EditRejected(f"{rel}: CI and repository configuration may not be edited", path=rel)
    real_root = root.resolve()
    target = (root / rel)
    # Resolve symlinks of whatever part of the path exists: a link must not lead out.
    probe = target
    while not probe.exists() and probe != root:
        probe = probe.parent
    try:
        resolved = probe.resolve()
    except OSError as exc:
        raise EditRejected(f"{rel}: {exc}", path=rel) from None
    if not resolved.is_relative_to(real_root) or (target.is_symlink()):
        raise EditRejected(f"{rel}: a symbolic link leads outside the repository or is the target", path=rel)
    if not allow_production and not is_test_path(rel):
        raise EditRejected(f"{rel}: this run may only edit test code", path=rel)
    return rel


def check_content(rel: str, content: str | None, existing: bytes | None) -> None:
    """Text only, within the per-file cap."""
    if existing is not None and b"\x00" in existing[:8192]:
        raise EditRejected(f"{rel}: binary files may not be edited", path=rel)
    if content is None:
        return
    if "\x00" in content:
        raise EditRejected(f"{rel}: the new content is binary", path=rel)
    if len(content.encode("utf-8", errors="replace")) > MAX_FILE_BYTES:
        raise EditRejected(f"{rel}: the new content is larger than {MAX_FILE_BYTES // 1024} KiB", path=rel)
