"""The members of a JavaScript workspace (a monorepo's packages): the folders
the root's ``package.json`` ``workspaces`` (npm, yarn: a list of globs, or
``{"packages": [...]}``) or ``pnpm-workspace.yaml``'s ``packages`` name, each
with a ``package.json`` of its own; and which of them a script call that
runs in members (``npm run test --workspaces``, ``npm test -w app``,
``yarn workspaces run test``, ``yarn workspace app test``, ``pnpm -r test``,
``pnpm --filter app test``) reaches."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .command import unquote
from .package_json import package_json

# Never members, whatever a glob says.
NOT_MEMBERS = {"node_modules", ".git"}


@dataclass(frozen=True)
class Member:
    path: str  # relative to the workspace root, posix
    name: str  # its package.json's name ("" when it has none)
    pkg: dict


def _patterns(root: Path) -> list[str]:
    data = package_json(root).get("workspaces")
    if isinstance(data, dict):
        data = data.get("packages")
    found = [p for p in data if isinstance(p, str)] if isinstance(data, list) else []
    pnpm = root / "pnpm-workspace.yaml"
    if pnpm.is_file():
        try:
            doc = yaml.safe_load(pnpm.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            doc = None
        listed = doc.get("packages") if isinstance(doc, dict) else None
        found += [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []
    return found


def members(root: Path) -> list[Member]:
    """The workspace's members (the root itself is never one), sorted by path; [] when it is no workspace."""
    patterns = _patterns(root)
    chosen: dict[str, Member] = {}
    for pattern in (p for p in patterns if not p.startswith("!")):
        pattern = pattern.strip().removeprefix("./").rstrip("/")
        if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
            continue
        for folder in sorted(root.glob(pattern)):
            rel = folder.relative_to(root).as_posix()
            if rel == "." or NOT_MEMBERS & set(rel.split("/")) or not (folder / "package.json").is_file():
                continue
            pkg = package_json(folder)
            chosen[rel] = Member(path=rel, name=str(pkg.get("name") or ""), pkg=pkg)
    for pattern in (p[1:].strip().removeprefix("./").rstrip("/") for p in patterns if p.startswith("!")):
        for rel in [r for r in chosen if Path(r).match(pattern) or r == pattern]:
            del chosen[rel]
    return [chosen[k] for k in sorted(chosen)]


@dataclass(frozen=True)
class MemberCall:
    """A script call that runs ``script`` in workspace members: all of them
    (``selectors`` None) or those named (by package name or path)."""

    script: str
    selectors: tuple[str, ...] | None


# Flags that take the next word as their value, per package manager.
_SELECTING = {"-w", "--workspace", "--filter", "-F"}
_ALL = {"--workspaces", "-ws", "-r", "--recursive", "-A", "--all"}
_VALUED = {"--filter", "-F", "-w", "--workspace", "--include", "--exclude", "--from", "-j", "--jobs"}


def member_call(words: list[str]) -> MemberCall | None:
    """The members a package-manager command runs a script in, or None when it runs none."""
    words = [unquote(w) for w in words]
    if not words or Path(words[0]).name not in ("npm", "yarn", "pnpm"):
        return None
    tool, rest = Path(words[0]).name, words[1:]
    selectors: list[str] = []
    every = False
    plain: list[str] = []
    i = 0
    while i < len(rest):
        w = rest[i]
        flag, _, value = w.partition("=")
        if flag in _SELECTING:
            if value:
                selectors.append(value)
            elif i + 1 < len(rest):
                selectors.append(rest[i + 1])
                i += 1
        elif w in _ALL:
            every = True
        elif flag in _VALUED and not value:
            i += 1
        elif not w.startswith("-"):
            plain.append(w)
        i += 1
    if tool == "yarn" and plain[:1] == ["workspaces"]:  # yarn workspaces run X; yarn workspaces foreach run X
        plain = plain[1:]
        plain = plain[1:] if plain[:1] == ["foreach"] else plain
        every = True
    elif tool == "yarn" and plain[:1] == ["workspace"] and len(plain) > 2:  # yarn workspace NAME [run] X
        selectors.append(plain[1])
        plain = plain[2:]
    if not (every or selectors) or not plain:
        return None
    if plain[0] in ("run", "run-script") and len(plain) > 1:
        script = plain[1]
    elif plain[0] in ("test", "t", "tst"):
        script = "test"
    elif tool in ("yarn", "pnpm"):
        script = plain[0]
    else:
        return None
    return MemberCall(script=script, selectors=None if every and not selectors else tuple(selectors))


def _selects(selector: str, m: Member) -> bool:
    """Whether a ``-w``/``--filter``/``yarn workspace`` selector names ``m``: by package name (pnpm's
    ``app`` for ``@scope/app`` too), by path, or by a path glob."""
    path = selector.removeprefix("./").rstrip("/")
    return selector == m.name or path == m.path or Path(m.path).match(path) or (
        not selector.startswith("@") and m.name.endswith("/" + selector))


def reached(call: MemberCall, found: list[Member]) -> list[Member]:
    """The members ``call`` runs its script in (those without the script are skipped, as ``--if-present`` does)."""
    return [m for m in found
            if (call.selectors is None or any(_selects(s, m) for s in call.selectors))
            and isinstance(m.pkg.get("scripts"), dict) and call.script in m.pkg["scripts"]]
