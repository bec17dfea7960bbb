"""How a JavaScript project runs its tests, read from its ``package.json``.

The ``scripts`` say which runner the project uses and how it calls it; the
dependencies break ties and name the library a plain ``node test/x.js``
file runs. A test script is often more than a test run: ``npm run lint &&
tape test/*.js``, ``pretest``/``posttest`` hooks that lint and audit,
coverage wrappers (``nyc``, ``c8``), a TAP formatter behind a pipe. None of
that decides whether a test passes, and lint or an audit fails offline, so
Greenloop resolves the script (following ``npm run X``, ``run-s`` and the
hooks) down to the runner invocations and runs those directly, after the
steps the tests need (a build, ``tsc``: anything that is not a check); a
script that runs only tests (``tests-only``, ``test:unit``...) is preferred
and named as the one chosen. What was left out is said in the plan's reason.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from . import js_workspaces
from .command import raw_words, split_segments, unquote
from .invocation import ENV_ASSIGNMENT, bin_name
from .package_json import dependencies, package_json
from .plugin import plugin, plugins
from .registry import BY_NAME

# Runners Greenloop has no parser for, recognised so that a project using one
# is run as written (results from TAP/JUnit or the exit code): (bin, package).
# A framework module says its own bins and package (``parsers/plugin.py``).
UNPARSED_RUNNERS = (("uvu", "uvu"), ("jasmine", "jasmine"))
UNPARSED_RANK = 200
# uvu's test files are plain node programs too.
UNPARSED_NODE_RUN = ("uvu",)
# Commands that wrap a runner without changing its results; dropped.
WRAPPERS = {"nyc", "c8", "cross-env", "npx", "dotenv", "env", "nodemon", "istanbul", "cover", "exec", "--"}
PACKAGE_MANAGERS = {"npm", "yarn", "pnpm"}
SCRIPT_RUNNERS = {"run-s", "run-p", "npm-run-all", "npm-run-all2"}
# Scripts that by name run only tests, preferred over ``test`` in that order.
TEST_ONLY_SCRIPTS = ("tests-only", "test:only", "test-only", "test:unit", "test-unit", "tests:unit",
                     "unit", "unit-test", "unit:test", "test:node", "test:js")
# Flags that would keep any runner watching instead of exiting (a runner adds its own: ``WATCH_FLAGS``).
WATCH_FLAGS = {"--watch", "--watchAll", "--watch-all"}
# Commands that check a project without testing it: linters, formatters,
# type-definition and package checks, dependency audits, coverage uploads.
CHECK_TOOLS = {
    "eslint", "standard", "semistandard", "xo", "prettier", "tslint", "stylelint", "jshint", "jscs", "biome",
    "oxlint", "dprint", "markdownlint", "markdownlint-cli2", "remark", "lint-staged", "commitlint", "eclint",
    "editorconfig-checker", "aud", "audit-ci", "nsp", "better-npm-audit", "auditjs", "snyk", "retire",
    "depcheck", "ls-engines", "safe-publish-latest", "publint", "attw", "evalmd", "license-checker",
    "size-limit", "check-engines", "codecov", "coveralls", "npmignore", "auto-changelog",
}
# Commands a shell finds without node_modules/.bin.
SYSTEM_COMMANDS = {
    "npm", "npx", "yarn", "pnpm", "node", "nodejs", "echo", "printf", "rm", "mkdir", "cp", "mv", "cd", "cat",
    "touch", "true", "false", "test", "sh", "bash", "make", "export", "set", "env", "sleep", "ln", "chmod",
    "git", "python", "python3", "exit", "[",
}
CHECK_SCRIPT_NAME = re.compile(r"^(?:lint|audit|format|prettier|eslint|style|fmt|check-coverage|coverage-check)"
                               r"(?:[:\-_].*)?$|.*[:\-_](?:lint|audit|format)$")
MAX_DEPTH = 5


class RunnerStep(BaseModel):
    """One runner invocation found in a script."""

    framework: str
    # The invocation as the shell would run it, from its env assignments and
    # runner word on (wrappers dropped, quoting kept).
    command: str
    script: str
    # The workspace member whose script it is ("": the root's); its command is already
    # rewritten to run from the root (``from_root``).
    member: str = ""


class ScriptResolution(BaseModel):
    """What a script runs: runner invocations and everything else."""

    steps: list[RunnerStep] = Field(default_factory=list)
    # Commands the tests need first (a build, tsc), in order, as written.
    prepare: list[str] = Field(default_factory=list)
    # Checks, hooks and formatters left out, for the reason.
    left_out: list[str] = Field(default_factory=list)


class JsTestCommand(BaseModel):
    """How to run a JavaScript project's tests."""

    framework: str
    # The runner invocation(s), ready for a shell (Greenloop adds reporters).
    command: str
    # The package.json script the command comes from (None: from dependencies).
    script: str | None = None
    # The script the user would type (``npm test``): a fallback.
    npm_script: str | None = None
    reason: str


def scripts(pkg: dict) -> dict[str, str]:
    s = pkg.get("scripts")
    return {str(k): v for k, v in s.items() if isinstance(v, str)} if isinstance(s, dict) else {}


_bin = bin_name


# ---------------------------------------------------------------------- runners


@dataclass(frozen=True)
class Runners:
    """How the framework modules say their runner is called (their script-following members)."""

    bins: dict[str, str]  # executable -> framework
    subcommands: dict[str, tuple[str, str]]  # executable -> (framework, the subcommand that runs it)
    node_flags: dict[str, str]  # node flag -> framework
    packages: tuple[tuple[str, str], ...]  # (dependency, framework), most specific first
    node_run: tuple[tuple[str, str], ...]  # (dependency, framework) whose test files node runs


def runners() -> Runners:
    """The runners the framework modules declare, and those Greenloop has no parser for."""
    bins: dict[str, str] = {}
    subcommands: dict[str, tuple[str, str]] = {}
    node_flags: dict[str, str] = {}
    ranked: list[tuple[int, str, str]] = []
    node_run: list[tuple[str, str]] = []
    for p in plugins():
        bins.update({b: p.name for b in p.runner_bins})
        subcommands.update({b: (p.name, sub) for b, sub in p.bin_subcommands.items()})
        if p.node_flag:
            node_flags[p.node_flag] = p.name
        if p.package:
            ranked.append((p.package_rank, p.package, p.name))
            if p.node_run:
                node_run.append((p.package, p.name))
    for k, (name, package) in enumerate(UNPARSED_RUNNERS):
        bins[name] = name
        ranked.append((UNPARSED_RANK + k, package, name))
    node_run += [(p, p) for p in UNPARSED_NODE_RUN]
    packages = tuple((package, name) for _, package, name in sorted(ranked, key=lambda r: r[0]))
    return Runners(bins, subcommands, node_flags, packages, tuple(node_run))


def runner_end(framework: str, words: list[str]) -> int | None:
    """Index just after ``framework``'s runner words in a segment (``npx jest``,
    ``react-scripts test``), None when the segment does not run it: the
    default ``runner_end`` of a framework that declares its ``RUNNER_BINS``."""
    p = plugin(framework)
    found = runner_in_segment(" ".join(words), {p.package} if p.node_run and p.package else set())
    if not found or found[0] != framework:
        return None
    k = found[1] + 1
    if _bin(words[found[1]]) in p.bin_subcommands:
        return k + 1
    if p.run_subcommand:  # the subcommand that runs once (and never watches) is always there
        if k < len(words) and unquote(words[k]) in (p.run_subcommand, *p.watch_subcommands):
            words[k] = p.run_subcommand
        else:
            words.insert(k, p.run_subcommand)
        return k + 1
    return k


def runner_end_for(framework: str) -> Callable[[list[str]], int | None]:
    """How to find ``framework``'s runner in a segment: its module's own ``runner_end``, else where
    scripts find a JavaScript runner (``RUNNER_BINS`` or a ``NODE_FLAG``), else never."""
    p = plugin(framework)
    if p.has("runner_end") or not (p.runner_bins or p.node_flag):
        return p.runner_end
    return functools.partial(runner_end, framework)


def runner_in_segment(segment: str, deps: set[str]) -> tuple[str, int] | None:
    """(framework, index of the runner word) when the segment runs a test
    runner, possibly behind env assignments and wrappers (nyc, c8, cross-env,
    npx); None otherwise."""
    words = raw_words(segment)
    known = runners()
    wrapped = False
    for i, word in enumerate(words):
        if ENV_ASSIGNMENT.match(unquote(word)):
            continue
        name = _bin(word)
        if name in known.bins:
            return known.bins[name], i
        if name in known.subcommands and i + 1 < len(words) and unquote(words[i + 1]) == known.subcommands[name][1]:
            return known.subcommands[name][0], i  # react-scripts test: Create React App's jest
        if name in ("node", "nodejs"):
            args = [unquote(x) for x in words[i + 1:]]
            flag = next((f for f in known.node_flags if f in args), None)
            if flag is not None:
                return known.node_flags[flag], i
            if any(not a.startswith("-") for a in args):
                for package, framework in known.node_run:
                    if package in deps:
                        return framework, i
            return None
        following = _bin(words[i + 1]) if i + 1 < len(words) else ""
        if name in WRAPPERS or (name in PACKAGE_MANAGERS and not wrapped
                                and (following in ("exec", "x", "dlx", "--") or following in known.bins)):
            wrapped = True  # npx tape, npm exec -- tape, yarn jest, pnpm exec vitest
        elif not wrapped:
            return None
        # else: a wrapper's option or its value (nyc --reporter lcov tape ...)
    return None


def _unwrapped(words: list[str]) -> list[str]:
    """A command's words from the package manager or tool on, without the env assignments and
    wrappers before it (``nyc``, ``cross-env``)."""
    while words and (ENV_ASSIGNMENT.match(unquote(words[0])) or unquote(words[0]).startswith("-")
                     or (_bin(words[0]) in WRAPPERS and _bin(words[0]) != "npx")):
        words = words[1:]
    return words


def _member_call(words: list[str]) -> js_workspaces.MemberCall | None:
    return js_workspaces.member_call(_unwrapped(words))


def _package_script(words: list[str], known: dict[str, str]) -> list[str] | None:
    """Script names a package-manager segment runs (``npm run X``, ``npm test``,
    ``yarn X``, ``run-s a b``, also behind env assignments and wrappers such as
    ``nyc npm run test-spec``), or None when the segment is not one."""
    words = _unwrapped(words)
    if not words:
        return None
    first = _bin(words[0])
    args = [unquote(w) for w in words[1:]]
    if first in SCRIPT_RUNNERS:
        return [a for a in args if not a.startswith("-") and a in known]
    if first not in PACKAGE_MANAGERS:
        return None
    args = [a for a in args if not a.startswith("-")]
    if not args:
        return []
    if args[0] in ("run", "run-script", "rum", "urn") and len(args) > 1:
        return [args[1]]
    if args[0] in ("test", "t", "tst"):
        return ["test"]
    if first in ("yarn", "pnpm") and args[0] in known:
        return [args[0]]
    return []


def is_checking_step(segment: str) -> bool:
    """Whether a command only checks the project without testing it: a
    linter or formatter, a dependency audit, a coverage report or gate.
    Such steps are left out (they need the network, or judge style, not
    behaviour); anything else before the runner (``tsc``, a build) stays."""
    words = [unquote(w) for w in raw_words(segment) if not ENV_ASSIGNMENT.match(unquote(w))]
    while words and _bin(words[0]) in WRAPPERS - {"nyc", "c8"}:
        words = words[1:]
    if not words:
        return False
    head = re.sub(r"(?<=.)@.*$", "", _bin(words[0]))  # npx npm@'>=10.2' audit
    sub = words[1] if len(words) > 1 else ""
    if head in CHECK_TOOLS:
        return True
    if head in PACKAGE_MANAGERS and sub in ("audit", "ls", "outdated", "doctor", "pack", "publish"):
        return True
    return head in ("nyc", "c8") and sub in ("report", "check-coverage")


def _is_checking_script(known: dict[str, str], name: str, depth: int = 0) -> bool:
    """Whether a script (by its name, or every step of it, following ``npm
    run X``) only checks the project."""
    if name not in known or depth > MAX_DEPTH:
        return False
    if CHECK_SCRIPT_NAME.match(name):
        return True
    for op, segment in split_segments(known[name]):
        if op == "|" or is_checking_step(segment):
            continue
        sub = _package_script(raw_words(segment), known)
        if not sub or not all(_is_checking_script(known, s, depth + 1) for s in sub):
            return False
    return True


def resolve_script(pkg: dict, name: str, root: Path | None = None) -> ScriptResolution:
    """The runner invocations a script makes, following ``npm run X``,
    ``run-s`` and ``pre``/``post`` hooks; the steps a test run needs before
    the runner (a build) are kept in ``prepare``, checks (lint, audit,
    coverage gates), pipes into formatters and what comes after the runner
    are listed as left out. With the project's ``root``, a call that runs a
    script in workspace members (``npm run test --workspaces``) is followed
    into theirs (``in_members``)."""
    known, deps = scripts(pkg), dependencies(pkg)
    out = ScriptResolution()
    found = js_workspaces.members(root) if root is not None else []

    def keep_or_leave(segment: str, where: str, label: str) -> None:
        if out.steps:
            out.left_out.append(f"`{label}` after the runner in {where}")
        elif label in out.prepare:
            return
        else:
            out.prepare.append(label)

    def visit(script: str, depth: int) -> None:
        if script not in known or depth > MAX_DEPTH:
            return
        pre, post = f"pre{script}", f"post{script}"
        if pre in known:
            if _is_checking_script(known, pre):
                out.left_out.append(f"{pre} ({known[pre]})")
            else:
                visit(pre, depth + 1)
        for op, segment in split_segments(known[script]):
            if op == "|":
                out.left_out.append(f"the pipe into `{segment}` in {script}")
                continue
            words = raw_words(segment)
            call = _member_call(words) if found else None
            if call is not None:
                if CHECK_SCRIPT_NAME.match(call.script):
                    out.left_out.append(f"`{segment}` in {script}")
                elif not in_members(out, call, pkg, found, root):
                    keep_or_leave(segment, script, segment)
                continue
            runner = runner_in_segment(segment, deps)
            if runner:
                framework, k = runner
                env = [w for w in words[:k] if ENV_ASSIGNMENT.match(unquote(w))]
                dropped = [w for w in words[:k] if w not in env]
                if dropped:
                    out.left_out.append(f"the wrapper `{' '.join(dropped)}` in {script}")
                out.steps.append(RunnerStep(framework=framework, command=" ".join([*env, *words[k:]]),
                                            script=script))
                continue
            sub = _package_script(words, known)
            if sub:
                for s in sub:
                    if s not in known:
                        out.left_out.append(f"`{segment}` in {script} (no script {s!r})")
                    elif resolve_script_steps(pkg, s, depth + 1, root):
                        visit(s, depth + 1)
                    elif _is_checking_script(known, s):
                        out.left_out.append(f"{s} ({known[s]})")
                    else:
                        keep_or_leave(segment, script, segment if len(sub) == 1 else f"npm run {s}")
                continue
            if is_checking_step(segment):
                out.left_out.append(f"`{segment}` in {script}")
            else:
                keep_or_leave(segment, script, segment)
        if post in known:
            out.left_out.append(f"{post} ({known[post]})")

    visit(name, 0)
    return out


GLOB_CHARS = re.compile(r"[*?{\[]")


def from_root(command: str, member: str, root: Path, value_options: set[str] | frozenset[str] = frozenset()
              ) -> tuple[str, list[str]]:
    """A member's runner invocation run from the workspace root, as its words
    but the paths, and the paths: those of its arguments that name something
    in the member (or are globs), made relative to the root; when none does,
    the member's folder, so the runner looks for tests there only. Option
    values that are paths (``--config=x``, ``--config x`` for one of the
    runner's ``value_options``) are made relative to the root where they are."""
    words = raw_words(command)
    k = next((i for i, w in enumerate(words) if not ENV_ASSIGNMENT.match(unquote(w))), len(words))

    def rewrite(path: str) -> str | None:
        plain = path.removeprefix("./")
        if not plain or plain.startswith("/"):
            return None
        if GLOB_CHARS.search(plain) or (root / member / plain).exists():
            return f"{member}/{plain}"
        return None

    head, paths = words[:k + 1], []
    for i, word in enumerate(words[k + 1:], start=k + 1):
        text = unquote(word)
        flag, eq, value = text.partition("=")
        if text.startswith("-") and eq and (put := rewrite(value)):
            head.append(shlex.quote(f"{flag}={put}"))
        elif not text.startswith("-") and (put := rewrite(text)):
            (head if unquote(words[i - 1]) in value_options else paths).append(shlex.quote(put))
        else:
            head.append(word)
    return " ".join(head), paths or [shlex.quote(member)]


def in_members(out: ScriptResolution, call: js_workspaces.MemberCall, pkg: dict,
               found: list[js_workspaces.Member], root: Path | None) -> bool:
    """Follow ``call`` into the members it reaches: their runner steps, run
    from the root (``from_root``), and what they do first, in their folder,
    join ``out``. False when no member's script runs tests."""
    if root is None:
        return False
    shared = {k: {**(pkg.get(k) or {})} for k in ("dependencies", "devDependencies") if isinstance(pkg.get(k), dict)}
    any_steps = False
    merged_runs: dict[tuple[str, str], int] = {}
    for m in js_workspaces.reached(call, found):
        # The root's devDependencies are every member's (hoisted runners, as npm finds them).
        merged = {**m.pkg, **{k: {**v, **(m.pkg.get(k) or {})} for k, v in shared.items()}}
        res = resolve_script(merged, call.script)
        if not res.steps:
            continue
        any_steps = True
        out.prepare += [f"(cd {shlex.quote(m.path)} && {prepare_command(p)})" for p in res.prepare]
        out.left_out += [f"{x} in {m.path}" for x in res.left_out]
        for step in res.steps:
            p = plugin(step.framework) if step.framework in BY_NAME else None
            head, paths = from_root(step.command, m.path, root, p.value_options if p else frozenset())
            if (step.framework, head) in merged_runs:
                # The same runner call in another member: one run of both members' tests.
                i = merged_runs[step.framework, head]
                out.steps[i] = out.steps[i].model_copy(update={
                    "command": " ".join([out.steps[i].command, *paths]),
                    "script": f"{out.steps[i].script}, {m.path}'s {step.script}"})
                continue
            merged_runs[step.framework, head] = len(out.steps)
            out.steps.append(step.model_copy(update={"command": " ".join([head, *paths]), "member": m.path,
                                                     "script": f"{m.path}'s {step.script}"}))
    return any_steps


def resolve_script_steps(pkg: dict, name: str, depth: int = 0, root: Path | None = None) -> bool:
    """Whether a script runs a test runner, directly or through others (in workspace members, with ``root``)."""
    known, deps = scripts(pkg), dependencies(pkg)
    if name not in known or depth > MAX_DEPTH:
        return False
    for op, segment in split_segments(known[name]):
        if op == "|":
            continue
        if runner_in_segment(segment, deps):
            return True
        call = _member_call(raw_words(segment)) if root is not None else None
        if call is not None and root is not None:
            if not CHECK_SCRIPT_NAME.match(call.script) and in_members(ScriptResolution(), call, pkg,
                                                                        js_workspaces.members(root), root):
                return True
            continue
        sub = _package_script(raw_words(segment), known)
        if sub and any(resolve_script_steps(pkg, s, depth + 1, root) for s in sub):
            return True
    return False


def framework_from_dependencies(pkg: dict) -> str | None:
    deps = dependencies(pkg)
    return next((fw for package, fw in runners().packages if package in deps), None)


def direct_command(step: RunnerStep) -> str:
    """The step as Greenloop runs it: the runner through ``npx`` (local bins
    are not on a plain shell's PATH), watch modes off."""
    words = raw_words(step.command)
    env = [w for w in words if ENV_ASSIGNMENT.match(unquote(w))]
    p = plugin(step.framework) if step.framework in BY_NAME else None
    watch = WATCH_FLAGS | (p.watch_flags if p else set())
    rest = [w for w in words[len(env):] if unquote(w) not in watch]
    if not rest:
        return step.command
    head = _bin(rest[0])
    if head not in ("node", "nodejs"):
        rest[0] = f"npx {head}"
    return " ".join([*env, *(p.direct(rest) if p else rest)])


def runner_command(root: Path, command: str, framework: str) -> str | None:
    """The ``framework`` runner invocation a command reaches through package
    scripts (``npm test``, ``npm run test:unit``), with what must run before
    it, ready for a shell; None when the command calls no script that does."""
    pkg = package_json(root)
    known = scripts(pkg)
    for op, segment in split_segments(command):
        if op == "|":
            continue
        for name in _package_script(raw_words(segment), known) or []:
            res = resolve_script(pkg, name, root)
            steps = [s for s in res.steps if s.framework == framework]
            if steps:
                return " && ".join([*(prepare_command(p) for p in res.prepare), direct_command(steps[0])])
    return None


def _names_test_script(pkg: dict, segment: str) -> bool:
    """Whether a command passes the name of a script that runs tests to some
    tool (``npm-run-posix-or-windows tests-only``, ``concurrently test:*``)."""
    return any(resolve_script_steps(pkg, unquote(w)) for w in raw_words(segment)[1:])


def prepare_command(segment: str) -> str:
    """A step kept before the runner, runnable from a plain shell: a
    project's own tool (``tsc``) goes through ``npx``, as ``npm run`` would
    find it in ``node_modules/.bin``; system commands stay as they are."""
    words = raw_words(segment)
    k = next((i for i, w in enumerate(words) if not ENV_ASSIGNMENT.match(unquote(w))), len(words))
    if k == len(words) or "/" in unquote(words[k]) or _bin(words[k]) in SYSTEM_COMMANDS:
        return segment
    return " ".join([*words[:k], "npx", *words[k:]])


def plan_js_tests(root: Path) -> JsTestCommand | None:
    """How the project at ``root`` runs its tests, or None when its
    ``package.json`` names no known runner (see the module docstring)."""
    pkg = package_json(root)
    if not pkg:
        return None
    known = scripts(pkg)
    test = resolve_script(pkg, "test", root) if "test" in known else ScriptResolution()
    chosen, resolution = "test", test
    # A script that runs only tests, and the same runner as `test` when `test` runs one.
    for name in TEST_ONLY_SCRIPTS:
        if name not in known:
            continue
        candidate = resolve_script(pkg, name, root)
        same = not test.steps or {s.framework for s in candidate.steps} <= {s.framework for s in test.steps}
        if candidate.steps and same:
            chosen, resolution = name, candidate
            break
    if not resolution.steps:
        framework = framework_from_dependencies(pkg)
        if framework is None:
            return None
        why = f"{framework} is in package.json's dependencies"
        if "test" in known:
            why += f" (the test script `{known['test']}` names no runner Greenloop knows)"
        return JsTestCommand(framework=framework, command="", script=None,
                             npm_script="test" if "test" in known else None, reason=why)
    framework = resolution.steps[0].framework
    steps = [s for s in resolution.steps if s.framework == framework]
    # What the tests need first: the chosen script's own, then what `test` does before it (a
    # build), but not a tool that runs a test script by name (npm-run-posix-or-windows tests-only).
    prepare = [*resolution.prepare, *(p for p in test.prepare if p not in resolution.prepare
                                      and not _names_test_script(pkg, p))]
    command = " && ".join([*(prepare_command(p) for p in prepare), *(direct_command(s) for s in steps)])
    where = steps[0].script
    reason = f"package.json script {chosen!r}"
    if where != chosen:
        reason += f" (through {where!r})"
    reason += f" runs {framework} (`{steps[0].command}`)"
    other = [f"{s.framework} in {s.script}" for s in resolution.steps if s.framework != framework]
    left_out = [*resolution.left_out, *other]
    if chosen != "test" and "test" in known:
        reason += f"; preferred to 'test' (`{known['test']}`)"
        chosen_commands = {s.command for s in resolution.steps}
        extra = [x for x in test.left_out if x not in left_out and not x.startswith("the wrapper")]
        extra += [f"`{s.command}` in {s.script}" for s in test.steps if s.command not in chosen_commands]
        extra += [f"`{p}`" for p in test.prepare if _names_test_script(pkg, p)]
        if extra:
            reason += ", which also runs " + ", ".join(extra)
    reason += f"; Greenloop runs `{command}` directly"
    if left_out:
        reason += ", without " + ", ".join(left_out)
    return JsTestCommand(framework=framework, command=command, script=where, npm_script=chosen, reason=reason)
