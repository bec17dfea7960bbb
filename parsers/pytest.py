"""pytest: console output at every verbosity, JUnit XML (xunit1/xunit2),
pytest-json-report and pytest-xdist runs, merged by node id.

Where each piece of knowledge comes from:

* ``-v`` lines (``path::id PASSED [ 4%]``, xdist's ``[gw0] [ 4%] PASSED id``)
  and ``-r`` short-summary lines name tests outright;
* progress letters (``tests/test_x.py ..F.sxX [ 40%]``, or bare letters with
  ``-q`` and xdist) name nothing: they are mapped onto the tests rebuilt from
  the sources in pytest's collection order (files sorted by name, classes,
  unittest classes, ``parametrize`` and fixture ``params`` ids), and only
  when the letters agree with every test the output does name;
* ``SKIPPED [N] file:line: reason`` lines are mapped to the test defined
  around that line; what is still unknown is solved against the final
  counts and the tests' skip/xfail markers;
* failure sections (``____ title ____`` blocks, or ``--tb=line`` crash lines)
  give messages and details; ``ERROR collecting x.py`` gives errored entries
  keyed by module path (``build_error``);
* reports named by the command (``--junitxml``, ``--json-report``) are read
  first and cross-checked: a non-strict XPASS is a plain pass in JUnit XML, a
  killed run writes no report at all.

Lines are not read from the reports: their ``line``/``lineno`` is where the
decorated definition starts (its first decorator), not the ``def``; the
normalizer asks ``locate`` for the ``def`` line of every test.
"""

from __future__ import annotations

import ast
import fnmatch
import itertools
import re
import shlex
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .command import command_words, tool_words, unquote
from .invocation import Invocation, bin_name
from .json_report import read_json_file
from .junit_xml import JUnitReader
from .locate import Location, SourceIndex
from .merge import RANK, add
from .models import Status, TestReport, TestResult
from .run_output import RunOutput
from .source.python import dotted_name, module_tree

FRAMEWORK = "pytest"
COMMAND_RE = [
    re.compile(r"^(?!.*\binstall\b).*(?:^|[\s/(])(?:py\.test|pytest)(?:-3)?(?=\s|$)"),
    re.compile(r"(?:^|\s)-m\s+pytest(?=\s|$)"),
]
OUTPUT_RE = [
    re.compile(r"^=+ test session starts =+$", re.M),
    re.compile(r"^collect(?:ed|ing \.\.\. collected) \d+ items?", re.M),
    re.compile(r"^=+ short test summary info =+$", re.M),
    re.compile(r"^platform \S+ -- Python \S+, pytest-\d", re.M),
    re.compile(r"^=+ (?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed)(?:, )?)+ in [\d.]+s", re.M),
]

WORDS = "PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS"
WORD_STATUS = {"PASSED": Status.PASSED, "FAILED": Status.FAILED, "ERROR": Status.ERRORED,
               "SKIPPED": Status.SKIPPED, "XFAIL": Status.XFAILED, "XPASS": Status.XPASSED}
CHAR_STATUS = {".": Status.PASSED, "F": Status.FAILED, "E": Status.ERRORED, "s": Status.SKIPPED,
               "x": Status.XFAILED, "X": Status.XPASSED}
COUNT_STATUS = {"passed": Status.PASSED, "failed": Status.FAILED, "error": Status.ERRORED,
                "errors": Status.ERRORED, "skipped": Status.SKIPPED, "xfailed": Status.XFAILED,
                "xpassed": Status.XPASSED}
JSON_STATUS = {"passed": Status.PASSED, "failed": Status.FAILED, "error": Status.ERRORED,
               "skipped": Status.SKIPPED, "xfailed": Status.XFAILED, "xpassed": Status.XPASSED}
SEP = re.compile(r"^(?P<bar>[=!])(?P=bar)+ (?P<title>.+?) (?P=bar)+$")
COUNTS = re.compile(r"^(?:=+ )?(?P<body>(?:\d+ [a-z ]+?|no tests ran)(?:, \d+ [a-z ]+?)*) in [\d.]+s"
                    r"(?: \([^)]*\))?(?: =+)?$")
COUNT_ITEM = re.compile(r"(\d+) ([a-z]+)")
# "collected 5 items / 1 error / 2 deselected / 1 skipped / 3 selected"
COLLECTED = re.compile(r"^(?:collecting \.\.\. )?collected (?P<n>\d+) items?(?P<rest>(?: / \d+ [a-z]+)*)")
XDIST_ITEMS = re.compile(r"^\d+ workers? \[(?P<n>\d+) items?\]")
XDIST_CREATED = re.compile(r"^created: \d+/\d+ workers?|^\[gw\d+\] ")
TIMEOUT_BANNER = re.compile(r"\s*\+{3,} Timeout \+{3,}\s*$")
PROGRESS_TAIL = r"(?:\s+\[\s*\d+%\]|\s+\[\s*\d+/\d+\])?\s*$"
FILE_PROGRESS = re.compile(r"^(?P<file>[^\s\[]+\.py) (?P<chars>[.FEsxXu,]*)" + PROGRESS_TAIL)
CHARS_PROGRESS = re.compile(r"^(?P<chars>[.FEsxXu,]+)" + PROGRESS_TAIL)
# Capture off (-s, --capture=no): a test's own output lands between the letters. pytest writes a
# test's letter after its output, so on each line the letters lead and the next test's output follows.
FILE_OUTPUT = re.compile(r"^(?P<file>[^\s\[:]+\.py) (?P<chars>[.FEsxXu,]*)(?P<out>.+)$")
LEADING_CHARS = re.compile(r"^(?P<chars>[.FEsxXu,]+)")
# a failing subtest's section title: the test's headline, then `[msg]` and/or `(key=value, ...)`
SUBTEST_TITLE = re.compile(r"^(?P<head>\S.*?) (?:\[.*\](?: \(.*\))?|\(.*\))$")
SUBTEST_CHARS = re.compile(r"[u,]")  # pytest 9 subtests: letters of their own, not of a test
SUBTEST = re.compile(r"^(?:(?P<id>[^\s\[]+?::.+?) SUB(?P<w>FAILED|PASSED|SKIPPED)\b.*"
                     r"|SUB(?P<w2>FAILED|PASSED|SKIPPED)\S*(?: \([^)]*\))? (?P<id2>\S+::\S+?)(?: - .*)?)$")
# -vv prints the whole skip/xfail reason and wraps it: "(why" may close on the next line
VERBOSE = re.compile(r"^(?P<id>[^\s\[]+?::.+?)(?: <- \S+)? (?P<w>" + WORDS + r")(?: \((?P<why>.*?)(?P<close>\))?)?"
                     + PROGRESS_TAIL)
XDIST_VERBOSE = re.compile(r"^\[gw\d+\] (?:\[\s*\d+%\] |\[\s*\d+/\d+\] )?(?P<w>" + WORDS
                           + r") (?P<id>\S+?::.+?)(?: <- \S+)?\s*$")
# -v prints the id before running the test: with -s, its output follows on the line
STARTED = re.compile(r"^(?P<id>[^\s\[]+?\.py::[^\s\[]+(?:\[[^\]]*\])?)(?: <- \S+)?(?: .*)?$")
BARE_WORD = re.compile(r"^(?P<w>" + WORDS + r")(?: \((?P<why>.*?)(?P<close>\))?)?" + PROGRESS_TAIL)
REASON_END = re.compile(r"^(?P<rest>.*)\)" + PROGRESS_TAIL)
SUMMARY = re.compile(r"^(?P<w>" + WORDS + r") (?:at (?P<when>setup|teardown|call) of )?(?P<id>\S+?(?:\[.*?\])?)"
                     r"(?: - (?P<msg>.*))?$")
SKIP_LINE = re.compile(r"^SKIPPED \[(?P<n>\d+)\] (?P<file>[^:\s]+?)(?::(?P<line>\d+))?: (?P<why>.*)$")
HEADER = re.compile(r"^_+ (?P<title>.*?[^_ ].*?) _+$")
SUBSECTION = re.compile(r"^-{3,} .+ -{3,}$")
CRASH = re.compile(r"^(?P<path>[^\s:][^:]*?):(?P<line>\d+): (?P<msg>.*)$")
EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*)?(?:Error|Exception|Exit|Failed|Failure|Interrupt|Warning|Timeout)\b.*$")
SYNTAX_AT = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)')
CONFTEST_ERR = re.compile(r"^ImportError while loading conftest '(?P<path>[^']+)'")
TIMEOUT_MSG = re.compile(r"Timeout \(>[\d.]+s\) from pytest-timeout|^Failed: Timeout", re.M)
ELLIPSIS = re.compile(r"\.\.\.$")
MAX_BLOCK_LINES = 300

VALUE_OPTS = {
    "-k", "-m", "-p", "-o", "-c", "-n", "-r", "-W", "--tb", "--junitxml", "--junit-xml", "--junit-prefix",
    "--json-report-file", "--rootdir", "--basetemp", "--confcutdir", "--ignore", "--ignore-glob", "--deselect",
    "--maxfail", "--durations", "--durations-min", "--timeout", "--timeout-method", "--color", "--capture",
    "--log-level", "--log-cli-level", "--log-file", "--log-format", "--cov", "--cov-report", "--cov-config",
    "--dist", "--maxprocesses", "--numprocesses", "--import-mode", "--override-ini", "--config-file",
    "--report-log", "--html", "--randomly-seed", "--json-report-indent", "--json-report-omit", "--tx",
    "--max-worker-restart", "--pythonwarnings", "--junit-family", "--reruns", "--reruns-delay", "--show-capture",
}
SHORT_VALUE = set("kmpocnrW")


# ---------------------------------------------------------------- command

@dataclass
class _Options:
    """What the pytest invocation (and the ini file's addopts) asks for."""

    junit: str | None = None
    json_report: str | None = None
    args: list[str] = field(default_factory=list)
    keyword: str | None = None
    markexpr: str | None = None
    runxfail: bool = False
    xdist: bool = False
    uncaptured: bool = False  # -s, --capture=no|tee-sys: the tests' own output among the results


def _pytest_words(command: str) -> list[str]:
    """The words after ``pytest``/``-m pytest`` in the command's pytest segment."""
    words = command_words(command)
    return tool_words(words, lambda i, w: w.rsplit("/", 1)[-1] in ("pytest", "py.test", "pytest-3")
                      or (w == "pytest" and i > 0 and words[i - 1] == "-m")) or []


def junit_path(command: str) -> str | None:
    """The JUnit XML file the command asks pytest to write (``--junitxml``), if any."""
    return _options(_pytest_words(command)).junit or None


def _options(words: list[str]) -> _Options:
    opts = _Options()
    json_on, json_file = False, ".report.json"
    i = 0
    while i < len(words):
        w = words[i]
        name, eq, value = w.partition("=")
        if w.startswith("--"):
            if name in VALUE_OPTS and not eq:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            if name in ("--junitxml", "--junit-xml"):
                opts.junit = value
            elif name == "--json-report":
                json_on = True
            elif name == "--json-report-file":
                json_file = value
            elif name == "--runxfail":
                opts.runxfail = True
            elif name == "--capture":
                opts.uncaptured = value in ("no", "tee-sys")
            elif name == "--numprocesses":
                opts.xdist = value not in ("0", "")
        elif w.startswith("-") and len(w) > 1:
            for j, ch in enumerate(w[1:], start=1):
                if ch == "s":
                    opts.uncaptured = True
                if ch in SHORT_VALUE:
                    value = w[j + 1:].lstrip("=")
                    if not value and i + 1 < len(words):
                        value = words[i + 1]
                        i += 1
                    if ch == "n":
                        opts.xdist = value not in ("0", "")
                    elif ch == "k":
                        opts.keyword = value
                    elif ch == "m":
                        opts.markexpr = value
                    break
        else:
            opts.args.append(w)
        i += 1
    if json_on and json_file.lower() != "none":
        opts.json_report = json_file
    return opts


# ---------------------------------------------------------------- ini files

def _ini_section(lines: list[str], section: str) -> dict[str, str] | None:
    found, out, key = False, {}, None
    for line in lines:
        s = line.strip()
        if s.startswith("[") and s.endswith("]"):
            if found:
                break
            found = s[1:-1].strip() == section
            continue
        if not found or not s or s.startswith(("#", ";")):
            continue
        if line[:1].isspace() and key:
            out[key] += " " + s
        elif "=" in s:
            key, _, v = s.partition("=")
            key = key.strip()
            out[key] = v.strip()
    return out if found else None


def _config(index: SourceIndex) -> dict[str, list[str] | str]:
    """pytest's ini options from the first config file that has them."""
    ini = _ini_section(index.lines("pytest.ini"), "pytest") if index.lines("pytest.ini") else None
    if ini is None and index.lines("pyproject.toml"):
        try:
            data = tomllib.loads("\n".join(index.lines("pyproject.toml")))
            tool = data.get("tool", {}).get("pytest", {})
            opts = tool.get("ini_options", tool) if isinstance(tool, dict) else {}
            if isinstance(opts, dict) and opts:
                ini = {k: v for k, v in opts.items() if isinstance(v, (str, list, bool))}
        except (tomllib.TOMLDecodeError, AttributeError):
            pass
    if ini is None:
        ini = _ini_section(index.lines("tox.ini"), "pytest")
    if ini is None:
        ini = _ini_section(index.lines("setup.cfg"), "tool:pytest")
    cfg: dict[str, list[str] | str] = {}
    for key, val in (ini or {}).items():
        if isinstance(val, bool):
            val = str(val).lower()
        cfg[key] = [str(v) for v in val] if isinstance(val, list) else str(val)
    return cfg


def _cfg_list(cfg: dict[str, list[str] | str], key: str, default: list[str]) -> list[str]:
    val = cfg.get(key)
    if val is None:
        return default
    return val if isinstance(val, list) else val.split()


# ---------------------------------------------------------------- sources

@dataclass
class _Test:
    """One test as rebuilt from the sources."""

    id: str
    file: str
    line: int          # the def line
    start: int         # first decorator line
    end: int
    head: str          # pytest's failure headline: Class.test_x[param]
    skip: str | None = None        # reason of an unconditional skip marker
    skipif: str | None = None      # reason of a conditional skip (marker or pytest.skip() call)
    xfail: str | None = None       # reason of an xfail marker (or pytest.xfail() call)
    xfail_maybe: bool = False      # the xfail is conditional
    xfail_strict: bool = False
    marks: set[str] = field(default_factory=set)


@dataclass
class _ModuleSkip:
    """A module that may skip itself while pytest imports it."""

    file: str
    certain: bool       # an unconditional ``pytest.skip(..., allow_module_level=True)``
    reason: str | None  # what pytest prints after ``Skipped: ``


class _Unknown(Exception):
    """A parametrization the sources do not let us evaluate."""


def _import_time_calls(body: list[ast.stmt], nested: bool = False):  # noqa: ANN202
    """(call, nested) for every call run while the module is imported: the
    module body and its ``if``/``try``/``with`` blocks, not functions or classes."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        blocks = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        own = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)] if not any(blocks) else \
            [n for e in (getattr(stmt, "test", None), *getattr(stmt, "items", []))
             if e is not None for n in ast.walk(e) if isinstance(n, ast.Call)]
        for call in own:
            yield call, nested
        for block in blocks:
            if block:
                yield from _import_time_calls(block, True)


def _module_skip(rel: str, tree: ast.Module) -> _ModuleSkip | None:
    """``pytest.skip(..., allow_module_level=True)`` / ``pytest.importorskip(name)``
    run at import time; an ``importorskip`` skips only when the import fails."""
    mod = _Module(tree)
    found: _ModuleSkip | None = None
    for call, nested in _import_time_calls(tree.body):
        name = dotted_name(call.func)
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        reason: str | None = None
        if name in ("pytest.skip", "skip") and isinstance(kw.get("allow_module_level"), ast.Constant) \
                and kw["allow_module_level"].value is True:
            node = kw.get("reason") or kw.get("msg") or (call.args[0] if call.args else None)
            certain = not nested
        elif name in ("pytest.importorskip", "importorskip") and (call.args or "modname" in kw):
            node = None
            target = call.args[0] if call.args else kw["modname"]
            if isinstance(target, ast.Constant) and isinstance(target.value, str):
                reason = f"could not import {target.value!r}"
            certain = False
        else:
            continue
        if node is not None:
            try:
                reason = str(mod.value(node))
            except _Unknown:
                reason = None
        if found is None or (certain and not found.certain):
            found = _ModuleSkip(rel, certain, reason)
    return found


def _ascii_escaped(val: str | bytes) -> str:
    """pytest's escaping of non-ASCII and non-printable characters in ids."""
    ret = val.decode("ascii", "backslashreplace") if isinstance(val, bytes) else \
        val.encode("unicode_escape").decode("ascii")
    table = {i: f"\\x{i:02x}" for i in range(128) if i not in range(32, 127)}
    table.update({ord("\t"): "\\t", ord("\r"): "\\r", ord("\n"): "\\n"})
    return ret.translate(table)


def _marker(node: ast.expr) -> tuple[str, ast.Call | None]:
    """('parametrize', call) for ``@pytest.mark.parametrize(...)``; unittest's
    skip decorators and ``expectedFailure`` map to pytest's marker names."""
    name = dotted_name(node)
    call = node if isinstance(node, ast.Call) else None
    last = name.rsplit(".", 1)[-1]
    if ".mark." in f".{name}" or name.startswith("mark."):
        return last, call
    if name.startswith("unittest.") or last in ("skipIf", "skipUnless", "expectedFailure"):
        return {"skip": "skip", "skipIf": "skipif", "skipUnless": "skipif",
                "expectedFailure": "xfail"}.get(last, ""), call
    return "", call


class _Module:
    """Evaluates the constants a module's decorators refer to."""

    def __init__(self, tree: ast.Module) -> None:
        self.consts: dict[str, ast.expr] = {}
        self.names: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.consts[node.targets[0].id] = node.value
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.names.add(node.name)

    def value(self, node: ast.expr, depth: int = 0) -> object:
        """A literal value, or raise _Unknown."""
        if isinstance(node, ast.Name) and node.id in self.consts and depth < 5:
            return self.value(self.consts[node.id], depth + 1)
        if isinstance(node, ast.Call) and dotted_name(node.func) in ("range", "list", "tuple") and not node.keywords:
            args = [self.value(a, depth + 1) for a in node.args]
            if dotted_name(node.func) == "range" and all(isinstance(a, int) for a in args) and len(args) <= 3:
                return list(range(*args))  # type: ignore[arg-type]
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                return list(args[0])
            raise _Unknown
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.item(e, depth) for e in node.elts]
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
            raise _Unknown from exc

    def item(self, node: ast.expr, depth: int = 0) -> object:
        """An element of a parameter list: a literal, a ``pytest.param`` or a
        value pytest names by ``argname + index`` (``_Opaque``)."""
        if isinstance(node, ast.Call) and dotted_name(node.func).endswith("param"):
            pid = next((k.value for k in node.keywords if k.arg == "id"), None)
            marks = next((k.value for k in node.keywords if k.arg == "marks"), None)
            return _Param([self.item(a, depth) for a in node.args],
                          None if pid is None else self.value(pid, depth + 1), marks)
        if isinstance(node, ast.Name) and node.id in self.names:
            return _Named(node.id)  # a function or class: pytest uses its __name__
        if isinstance(node, ast.Starred):
            raise _Unknown
        try:
            return self.value(node, depth + 1)
        except _Unknown:
            if isinstance(node, (ast.Name, ast.Attribute)):
                raise  # an enum member or an imported constant: its id is unknowable
            return _Opaque()


@dataclass
class _Param:
    values: list[object]
    id: object
    marks: ast.expr | None


@dataclass
class _Named:
    name: str


class _Opaque:
    """A value pytest cannot name (object(), a dict, a list...)."""


def _idval(val: object, argname: str, idx: int) -> str:
    if isinstance(val, (str, bytes)):
        return _ascii_escaped(val) if len(val) <= 100 else f"{argname}{idx}"
    if val is None or isinstance(val, (bool, int, float, complex)):
        return str(val)
    if isinstance(val, _Named):
        return val.name
    return f"{argname}{idx}"


def _unique(ids: list[str]) -> list[str]:
    """pytest's suffixes for duplicate ids: a, a -> a0, a1 (a digit gets ``_``)."""
    counts = Counter(ids)
    if len(counts) == len(ids):
        return ids
    taken = set(ids)
    nxt: dict[str, int] = defaultdict(int)
    out = []
    for i in ids:
        if counts[i] > 1:
            sfx = "_" if i and i[-1].isdigit() else ""
            new = f"{i}{sfx}{nxt[i]}"
            while new in taken:
                nxt[i] += 1
                new = f"{i}{sfx}{nxt[i]}"
            nxt[i] += 1
            out.append(new)
        else:
            out.append(i)
    return out


def _param_ids(mod: _Module, call: ast.Call) -> tuple[list[str], list[str], list[ast.expr | None]]:
    """(argnames, ids, per-id marks) of one ``parametrize`` call."""
    args = list(call.args)
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    names_node = args[0] if args else kw.get("argnames")
    values_node = args[1] if len(args) > 1 else kw.get("argvalues")
    if names_node is None or values_node is None:
        raise _Unknown
    names = mod.value(names_node)
    argnames = [n.strip() for n in names.split(",") if n.strip()] if isinstance(names, str) else list(names)
    if not isinstance(values_node, (ast.List, ast.Tuple)):
        values_node = mod.consts.get(getattr(values_node, "id", ""), values_node)
    items = mod.value(values_node) if not isinstance(values_node, (ast.List, ast.Tuple)) else \
        [mod.item(e) for e in values_node.elts]
    if not isinstance(items, list):
        raise _Unknown
    ids_node = kw.get("ids") if "ids" in kw else (args[3] if len(args) > 3 else None)
    given = mod.value(ids_node) if ids_node is not None else None
    if given is not None and not isinstance(given, list):
        raise _Unknown  # a callable: ids computed at run time
    ids: list[str] = []
    marks: list[ast.expr | None] = []
    for idx, item in enumerate(items):
        param = item if isinstance(item, _Param) else None
        values = param.values if param else ([item] if len(argnames) == 1 else item)
        if not isinstance(values, (list, tuple)) or len(values) != len(argnames):
            raise _Unknown
        marks.append(param.marks if param else None)
        if param and param.id is not None:
            ids.append(_ascii_escaped(str(param.id)))
        elif given and idx < len(given) and given[idx] is not None:
            g = given[idx]
            ids.append(_ascii_escaped(g) if isinstance(g, (str, bytes)) else str(g))
        else:
            ids.append("-".join(_idval(v, n, idx) for v, n in zip(values, argnames)))
    return argnames, _unique(ids), marks


@dataclass
class _Fixture:
    args: list[str]
    ids: list[str] | None   # None: not parametrized


def _fixtures(mod: _Module, tree: ast.Module) -> dict[str, _Fixture]:
    out: dict[str, _Fixture] = {}
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in node.decorator_list:
            if not dotted_name(dec).endswith("fixture"):
                continue
            call = dec if isinstance(dec, ast.Call) else None
            kw = {k.arg: k.value for k in call.keywords if k.arg} if call else {}
            name = node.name
            if "name" in kw:
                try:
                    name = str(mod.value(kw["name"]))
                except _Unknown:
                    pass
            ids: list[str] | None = None
            if "params" in kw:
                try:
                    fake = ast.Call(func=ast.Name("parametrize"), args=[ast.Constant(name), kw["params"]],
                                    keywords=[ast.keyword("ids", kw["ids"])] if "ids" in kw else [])
                    ids = _param_ids(mod, fake)[1]
                except _Unknown:
                    ids = ["?"]  # parametrized, ids unknown
            out[name] = _Fixture([a.arg for a in node.args.args], ids)
    return out


def _pytestmark(body: list[ast.stmt]) -> list[ast.expr]:
    """Markers assigned to ``pytestmark`` in a module or class body."""
    for node in body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in node.targets):
            return list(node.value.elts) if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
    return []


def _matches(name: str, patterns: list[str]) -> bool:
    return any(name.startswith(p) if not any(c in p for c in "*?[") else fnmatch.fnmatch(name, p)
               for p in patterns)


def _expr(text: str, match) -> bool:  # noqa: ANN001
    """Evaluate a ``-k``/``-m`` expression (``a and not (b or c)``)."""
    tokens = re.findall(r"\(|\)|[^\s()]+", text)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise _Unknown
        pos += 1
        return tokens[pos - 1]

    def expr() -> bool:
        value = term()
        while peek() == "or":
            take()
            value = term() or value
        return value

    def term() -> bool:
        value = factor()
        while peek() == "and":
            take()
            value = factor() and value
        return value

    def factor() -> bool:
        tok = take()
        if tok == "not":
            return not factor()
        if tok == "(":
            value = expr()
            if take() != ")":
                raise _Unknown
            return value
        if tok in (")", "and", "or"):
            raise _Unknown
        return bool(match(tok))

    result = expr()
    if pos != len(tokens):
        raise _Unknown
    return result


class _Sources:
    """The project's tests as pytest would collect them, rebuilt with ``ast``."""

    def __init__(self, index: SourceIndex, cfg: dict[str, list[str] | str]) -> None:
        self.index = index
        self.cfg = cfg
        self.files_pat = _cfg_list(cfg, "python_files", ["test_*.py", "*_test.py"])
        self.classes_pat = _cfg_list(cfg, "python_classes", ["Test"])
        self.funcs_pat = _cfg_list(cfg, "python_functions", ["test"])
        self.xfail_strict = str(cfg.get("xfail_strict", "")).lower() in ("true", "1", "yes")
        self._modules: dict[str, tuple[list[_Test], bool]] = {}
        self._skips: dict[str, _ModuleSkip | None] = {}
        self._fixture_cache: dict[str, dict[str, _Fixture]] = {}
        self._by_id: dict[str, dict[str, _Test]] = {}

    # -- discovery
    def selected(self, opts: _Options, skip: dict[str, object]) -> tuple[list[_Test], set[str]]:
        """The tests the command selects, in collection order, and the files
        whose tests could not be rebuilt ("*": none could)."""
        out: dict[str, _Test] = {}
        bad: set[str] = set()
        for root in self._roots(opts.args):
            path, _, node = root.partition("::")
            for f in self._files_under(path):
                tests, ok = self.module(f)
                if f in skip or not ok:
                    bad.update([] if f in skip else [f])
                    continue
                for t in tests:
                    if not node or t.id == root or t.id.startswith((root + "::", root + "[")):
                        out.setdefault(t.id, t)
        tests = list(out.values())
        try:
            if opts.keyword:
                tests = [t for t in tests if _expr(opts.keyword, self._keyword_matcher(t))]
            if opts.markexpr:
                tests = [t for t in tests if _expr(opts.markexpr, t.marks.__contains__)]
        except _Unknown:
            return [], {"*"}
        return tests, bad

    def module_skips(self, opts: _Options) -> list[_ModuleSkip]:
        """The selected modules that may skip themselves at import time."""
        out: dict[str, _ModuleSkip] = {}
        for root in self._roots(opts.args):
            for f in self._files_under(root.partition("::")[0]):
                if f not in self._skips:
                    tree = self._tree(f)
                    self._skips[f] = _module_skip(f, tree) if tree is not None else None
                if self._skips[f] is not None:
                    out.setdefault(f, self._skips[f])
        return list(out.values())

    def _keyword_matcher(self, t: _Test):  # noqa: ANN202
        """``-k``: a case-insensitive substring of any node name or marker."""
        parts = t.id.split("::")
        names = [*PurePosixPath(parts[0]).parts, *parts[1:], *t.marks]
        if self.index.root is not None:
            names.append(self.index.root.name)
        lowered = [n.lower() for n in names]
        return lambda word: any(word.lower() in n for n in lowered)

    def _roots(self, args: list[str]) -> list[str]:
        roots = [a.removeprefix("./") for a in args if self._is_path(a.split("::")[0])]
        return roots or [p for t in _cfg_list(self.cfg, "testpaths", []) for p in self._glob(t)] or ["."]

    def _files_under(self, path: str) -> list[str]:
        path = path.rstrip("/")
        path = "" if path in (".", "") else path.removeprefix("./")
        py = self.index.files([".py"])
        if path.endswith(".py"):
            return [path] if path in py else []
        prefix = f"{path}/" if path else ""
        return sorted((f for f in py if f.startswith(prefix) and self._is_test_file(f)),
                      key=lambda f: PurePosixPath(f).parts)

    def _is_path(self, arg: str) -> bool:
        arg = arg.rstrip("/").removeprefix("./")
        return arg in ("", ".") or arg in self.index.files() or any(
            f.startswith(arg + "/") for f in self.index.files())

    def _glob(self, pattern: str) -> list[str]:
        if not any(c in pattern for c in "*?["):
            return [pattern]
        dirs = {str(PurePosixPath(f).parent) for f in self.index.files()}
        return sorted(d for d in dirs if fnmatch.fnmatch(d, pattern.rstrip("/")))

    def _is_test_file(self, rel: str) -> bool:
        parts = PurePosixPath(rel).parts
        if any(p.startswith(".") or p in ("build", "dist", "node_modules", "venv", "CVS", "_darcs")
               or p.endswith(".egg") for p in parts[:-1]):
            return False
        return any(fnmatch.fnmatch(parts[-1], p) for p in self.files_pat) and parts[-1] != "conftest.py"

    # -- one module
    def module(self, rel: str) -> tuple[list[_Test], bool]:
        """The module's tests and whether every id could be computed."""
        if rel not in self._modules:
            self._modules[rel] = self._collect(rel)
        return self._modules[rel]

    def _tree(self, rel: str) -> ast.Module | None:
        return module_tree(self.index, rel)

    def _collect(self, rel: str) -> tuple[list[_Test], bool]:
        tree = self._tree(rel)
        if tree is None:
            return [], False
        mod = _Module(tree)
        fixtures = self._visible_fixtures(rel, mod, tree)
        complete = True
        module_marks = _pytestmark(tree.body)
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        # module __dict__ order: a redefined name keeps its first position
        blocks: dict[str, list[_Test]] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _matches(node.name, self.funcs_pat):
                block, ok = self._function(rel, mod, node, [], [module_marks], fixtures)
            elif isinstance(node, ast.ClassDef):
                block, ok = self._class(rel, mod, node, [], [module_marks], fixtures, classes)
            else:
                continue
            complete &= ok
            blocks[node.name] = block
        return [t for block in blocks.values() for t in block], complete

    def _visible_fixtures(self, rel: str, mod: _Module, tree: ast.Module) -> dict[str, _Fixture]:
        found: dict[str, _Fixture] = {}
        parts = PurePosixPath(rel).parts[:-1]
        for depth in range(len(parts) + 1):
            conf = "/".join([*parts[:depth], "conftest.py"])
            if conf not in self._fixture_cache:
                t = self._tree(conf)
                self._fixture_cache[conf] = _fixtures(_Module(t), t) if t is not None else {}
            found.update(self._fixture_cache[conf])
        found.update(_fixtures(mod, tree))
        return found

    def _class(self, rel: str, mod: _Module, node: ast.ClassDef, outer: list[str], marks: list[list[ast.expr]],
               fixtures: dict[str, _Fixture], classes: dict[str, ast.ClassDef]) -> tuple[list[_Test], bool]:
        bases = [dotted_name(b) for b in node.bases]
        unit = self._is_unittest(node, classes, 0)
        if not unit and not _matches(node.name, self.classes_pat):
            return [], True
        body = list(node.body)
        if any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in body) and not unit:
            return [], True
        if any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__test__" for t in n.targets)
               and isinstance(n.value, ast.Constant) and n.value.value is False for n in body):
            return [], True
        # methods inherited from classes of this module come first (reverse MRO)
        members: dict[str, ast.stmt] = {}
        for base in reversed([classes[b] for b in bases if b in classes]):
            for n in base.body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    members[n.name] = n
        for n in body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                members.pop(n.name, None)
                members[n.name] = n
        path = [*outer, node.name]
        class_marks = [list(node.decorator_list) + _pytestmark(body), *marks]
        out: list[_Test] = []
        complete = True
        if unit:
            for name in sorted(n for n, m in members.items()
                               if n.startswith("test") and isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))):
                out.extend(self._function(rel, mod, members[name], path, class_marks, {}, unit=True)[0])
            return out, True
        for name, m in members.items():
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and _matches(name, self.funcs_pat):
                block, ok = self._function(rel, mod, m, path, class_marks, fixtures)
            elif isinstance(m, ast.ClassDef):
                block, ok = self._class(rel, mod, m, path, class_marks, fixtures, classes)
            else:
                continue
            out.extend(block)
            complete &= ok
        return out, complete

    def _is_unittest(self, node: ast.ClassDef | None, classes: dict[str, ast.ClassDef], depth: int) -> bool:
        if node is None or depth > 5:
            return False
        bases = [dotted_name(b) for b in node.bases]
        return any(b.rsplit(".", 1)[-1].endswith("TestCase") for b in bases) or any(
            self._is_unittest(classes.get(b), classes, depth + 1) for b in bases)

    def _function(self, rel: str, mod: _Module, node: ast.FunctionDef | ast.AsyncFunctionDef, path: list[str],
                  marks: list[list[ast.expr]], fixtures: dict[str, _Fixture],
                  unit: bool = False) -> tuple[list[_Test], bool]:
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        base = _Test(id="::".join([rel, *path, node.name]), file=rel, line=node.lineno, start=start,
                     end=node.end_lineno or node.lineno, head=".".join([*path, node.name]))
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            name = dotted_name(call.func)
            if name in ("pytest.skip", "skip", "self.skipTest", "pytest.importorskip", "importorskip"):
                base.skipif = base.skipif or ""
            elif name in ("pytest.xfail", "xfail"):
                base.xfail, base.xfail_maybe = base.xfail or "", True
        levels = [list(node.decorator_list), *marks]
        params: list[tuple[list[str], list[str], list[ast.expr | None]]] = []
        complete = True
        for level in levels:
            # the decorator nearest the def is applied (and parametrizes) first
            for dec in reversed(level):
                name, call = _marker(dec)
                if name:
                    base.marks.add(name)
                self._apply_marker(base, name, call, mod)
                if name == "parametrize" and call is not None and not unit:
                    try:
                        params.append(_param_ids(mod, call))
                    except _Unknown:
                        complete = False
        if not complete:
            return [base], False
        argnames = {n for p in params for n in p[0]}
        fixture_params: list[list[str]] = []
        if not unit:
            wanted = [a.arg for a in node.args.args if a.arg not in ("self", "cls", "request")]
            seen: set[str] = set()
            while wanted:
                arg = wanted.pop(0)
                if arg in seen or arg in argnames or arg not in fixtures:
                    continue
                seen.add(arg)
                fx = fixtures[arg]
                if fx.ids == ["?"]:
                    return [base], False
                if fx.ids is not None:
                    fixture_params.append(fx.ids)
                wanted.extend(fx.args)
        axes = [[(i, None) for i in ids] for ids in fixture_params] + \
               [list(zip(p[1], p[2])) for p in params]
        if not axes:
            return [base], True
        out = []
        for combo in itertools.product(*axes):
            pid = "-".join(i for i, _ in combo)
            t = _Test(**{**base.__dict__, "id": f"{base.id}[{pid}]", "head": f"{base.head}[{pid}]",
                         "marks": set(base.marks)})
            for _, m in combo:
                for mk in (m.elts if isinstance(m, (ast.List, ast.Tuple)) else [m] if m is not None else []):
                    name, call = _marker(mk)
                    t.marks.add(name)
                    self._apply_marker(t, name, call, mod)
            out.append(t)
        return out, True

    def _apply_marker(self, t: _Test, name: str, call: ast.Call | None, mod: _Module) -> None:
        if name not in ("skip", "skipif", "xfail"):
            return
        args = list(call.args) if call else []
        kw = {k.arg: k.value for k in call.keywords if k.arg} if call else {}
        reason = ""
        node = kw.get("reason") or (args[0] if name == "skip" and args else args[1] if len(args) > 1 else None)
        if node is not None:
            try:
                reason = str(mod.value(node))
            except _Unknown:
                reason = ""
        if name == "skip":
            t.skip = t.skip or reason
        elif name == "skipif":
            t.skipif = t.skipif or reason
        else:
            if args and name == "xfail" and not reason:
                try:
                    cond = mod.value(args[0])
                    reason = cond if isinstance(cond, str) else ""
                except _Unknown:
                    pass
            t.xfail = reason if t.xfail is None else t.xfail
            t.xfail_maybe = bool(args) and getattr(args[0], "value", None) is not True
            strict = kw.get("strict")
            t.xfail_strict = bool(getattr(strict, "value", self.xfail_strict)) if strict is not None \
                else self.xfail_strict

    # -- lookups
    def find(self, test_id: str) -> _Test | None:
        """The test (or, for an id whose parameters are unknown, its definition)."""
        file = test_id.split("::", 1)[0]
        if file not in self._by_id:
            tests, _ = self.module(file)
            by_id = self._by_id[file] = {}
            for t in tests:
                by_id.setdefault(t.id, t)
                by_id.setdefault(re.sub(r"\[.*\]$", "", t.id), t)
        by_id = self._by_id[file]
        return by_id.get(test_id) or by_id.get(re.sub(r"\[.*\]$", "", test_id))

    def at(self, file: str, line: int) -> list[_Test]:
        """Tests whose definition (decorators included) spans ``line``."""
        tests, _ = self.module(file)
        hits = [t for t in tests if t.start <= line <= t.end]
        if hits:
            inner = max(t.start for t in hits)
            hits = [t for t in hits if t.start == inner]
        return hits


# ---------------------------------------------------------------- console

@dataclass
class _Block:
    """One ``____ title ____`` section (or a ``--tb=line`` entry)."""

    title: str | None
    lines: list[str] = field(default_factory=list)
    crash: str | None = None

    def add(self, line: str) -> None:
        if len(self.lines) < MAX_BLOCK_LINES:
            self.lines.append(line)

    def message(self) -> str | None:
        groups: list[list[str]] = []
        prev = False
        for ln in self.lines:
            if SUBSECTION.match(ln):
                break
            is_e = ln == "E" or ln.startswith("E ")
            if not is_e and prev and self.title is None and (not ln.strip() or ln[:1].isspace()):
                groups[-1].append(ln)  # --tb=line: only the first line of the message has the E
                continue
            if is_e:
                if not prev:
                    groups.append([])
                groups[-1].append(ln[1:])
            prev = is_e
        if groups:
            body = groups[-1]
            pad = min((len(x) - len(x.lstrip()) for x in body if x.strip()), default=0)
            return "\n".join(x[pad:].rstrip() for x in body).strip("\n") or None
        for ln in self.lines:
            if ln.startswith("[XPASS(strict)]"):
                return ln
        # --tb=native: the exception line (and its indented continuation) ends the traceback
        exc = [i for i, ln in enumerate(self.lines) if EXC_LINE.match(ln)]
        if exc:
            body = [self.lines[exc[-1]]]
            for ln in self.lines[exc[-1] + 1:]:
                if SUBSECTION.match(ln) or not (ln[:1].isspace() or not ln):
                    break
                body.append(ln)
            return "\n".join(body).rstrip()
        if self.crash and (m := CRASH.match(self.crash)):
            return m.group("msg")
        return None

    def syntax_line(self, file: str) -> int | None:
        """The line of a SyntaxError in ``file`` (collection errors)."""
        if not any("SyntaxError" in ln or "IndentationError" in ln for ln in self.lines):
            return None
        for ln in self.lines:
            if (m := SYNTAX_AT.match(ln[1:] if ln.startswith("E") else ln)) and m.group("path").endswith(file):
                return int(m.group("line"))
        return None


@dataclass
class _Console:
    verbose: dict[str, Status] = field(default_factory=dict)
    words: dict[str, set[Status]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    started: dict[str, None] = field(default_factory=dict)
    summary: dict[str, Status] = field(default_factory=dict)
    summary_msg: dict[str, str] = field(default_factory=dict)
    skip_lines: list[tuple[int, str, int | None, str]] = field(default_factory=list)
    file_chars: list[list[str]] = field(default_factory=list)
    chars: str = ""
    failures: list[_Block] = field(default_factory=list)
    errors: list[_Block] = field(default_factory=list)
    collect_errors: dict[str, str | None] = field(default_factory=dict)
    counts: dict[Status, int] | None = None
    collected: int | None = None
    deselected: int = 0
    modules_skipped: int | None = None  # "/ N skipped" of the collected line: modules skipped at import
    xdist: bool = False
    thread_timeout: bool = False
    open_reason: str | None = None
    stopped: bool = False
    seen_pytest: bool = False
    uncaptured: bool = False  # a test's output was seen among the progress letters
    subtest_letters: bool = False  # u or , letters: subtests, whose failures pytest counts with the tests'
    doubtful: list[tuple[int, int, int]] = field(default_factory=list)  # file_chars index, offset, length


def _read_console(run: RunOutput, uncaptured: bool = False) -> _Console:
    """One streaming pass over stdout then stderr (``uncaptured``: the command turned capture off)."""
    c = _Console(uncaptured=uncaptured)
    section = "progress"
    block: _Block | None = None
    last_started: str | None = None
    for raw in run.all_lines():
        line = raw.rstrip()
        if TIMEOUT_BANNER.search(line) and section == "progress":
            c.thread_timeout = True
            line = TIMEOUT_BANNER.sub("", line)
        if m := SEP.match(line):
            title = m.group("title").strip()
            if m.group("bar") == "!":
                c.stopped = True
                continue
            if cm := COUNTS.match(line):
                c.counts = _counts(cm.group("body"))
                section = "done"
                continue
            section = {"ERRORS": "errors", "FAILURES": "failures", "short test summary info": "summary",
                       "test session starts": "progress"}.get(title, "other")
            c.seen_pytest = c.seen_pytest or section == "progress"
            block = None
            continue
        if cm := COUNTS.match(line):
            c.counts = _counts(cm.group("body"))
            continue
        if m := CONFTEST_ERR.match(line):
            c.collect_errors[m.group("path")] = None
            block = _Block(f"ERROR collecting {m.group('path')}")
            c.errors.append(block)
            section = "errors"
            continue
        if section in ("errors", "failures"):
            if (m := HEADER.match(line)) and not re.fullmatch(r"[_ ]+", m.group("title")):
                block = _Block(m.group("title"))
                (c.errors if section == "errors" else c.failures).append(block)
                if block.title and block.title.startswith("ERROR collecting "):
                    c.collect_errors.setdefault(block.title.removeprefix("ERROR collecting ").strip(), None)
                continue
            if section == "failures" and (block is None or block.title is None):
                # --tb=line: no headers; each entry ends with its crash line
                if block is None:
                    block = _Block(None)
                    c.failures.append(block)
                # a report without a crash location repeats its first 50 characters
                if CRASH.match(line) or (block.lines and line.strip() and len(line) <= 50
                                         and "\n".join(block.lines).startswith(line)):
                    block.crash = line
                    block = None
                    continue
            if block is not None:
                block.add(line)
            continue
        if (m := SUBTEST.match(line)) and section in ("summary", "progress"):
            # a failing subtest fails its test (pytest 9 may still print PASSED for it)
            if (m.group("w") or m.group("w2")) == "FAILED":
                c.words.setdefault(m.group("id") or m.group("id2"), set()).add(Status.FAILED)
            continue
        if section == "summary":
            if m := SKIP_LINE.match(line):
                ln = m.group("line")
                c.skip_lines.append((int(m.group("n")), m.group("file"), int(ln) if ln else None, m.group("why")))
            elif m := SUMMARY.match(line):
                tid, status = m.group("id"), WORD_STATUS[m.group("w")]
                msg = m.group("msg")
                if "::" not in tid and status == Status.ERRORED:
                    c.collect_errors[tid] = msg
                    continue
                c.words.setdefault(tid, set()).add(status)
                prev = c.summary.get(tid)
                c.summary[tid] = status if prev is None or RANK[status] > RANK[prev] else prev
                if msg and (prev is None or RANK[status] >= RANK[prev]):
                    c.summary_msg[tid] = msg
            continue
        if section != "progress":
            continue
        if m := COLLECTED.match(line):
            c.collected = int(m.group("n"))
            rest = {w: int(n) for n, w in COUNT_ITEM.findall(m.group("rest"))}
            c.deselected, c.modules_skipped = rest.get("deselected", 0), rest.get("skipped", 0)
            c.seen_pytest = True
        elif m := XDIST_ITEMS.match(line):
            c.collected, c.xdist = int(m.group("n")), True
        elif XDIST_CREATED.match(line) and not XDIST_VERBOSE.match(line):
            c.xdist = True
        elif m := XDIST_VERBOSE.match(line):
            c.xdist = True
            _verbose(c, m.group("id"), m.group("w"), None)
        elif c.open_reason and (m := REASON_END.match(line)):
            c.reasons[c.open_reason] += " " + m.group("rest").strip()
            c.open_reason = None
        elif m := VERBOSE.match(line):
            _verbose(c, m.group("id"), m.group("w"), m.group("why"), m.group("close"))
            last_started = None
        elif (m := BARE_WORD.match(line)) and last_started:
            _verbose(c, last_started, m.group("w"), m.group("why"), m.group("close"))
            last_started = None
        elif m := FILE_PROGRESS.match(line):
            if not c.file_chars or c.file_chars[-1][0] != m.group("file"):
                c.file_chars.append([m.group("file"), ""])
            _letters(c, m.group("chars"))
        elif m := CHARS_PROGRESS.match(line):
            _letters(c, m.group("chars"))  # a wrapped progress line, or -q's
        elif not c.xdist and (m := FILE_OUTPUT.match(line)):
            c.uncaptured = True
            c.file_chars.append([m.group("file"), ""])
            _letters(c, m.group("chars"), m.group("out"))
        elif c.uncaptured and not c.xdist and (m := LEADING_CHARS.match(line)):
            _letters(c, m.group("chars"), line[m.end():])
        elif m := STARTED.match(line):
            last_started = m.group("id")
            c.started.setdefault(last_started, None)
    return c


def _letters(c: _Console, run: str, output: str = "") -> None:
    """A run of progress letters, of the current file where the output names files (-q does not);
    ``output``, the tests' own output that follows it on the line (capture off). Output that
    starts with a word may start with the run's last letters ("Found it" after "." reads ".F" +
    "ound it"): those stay doubtful."""
    chars = SUBTEST_CHARS.sub("", run)
    c.subtest_letters = c.subtest_letters or chars != run
    in_file = bool(c.file_chars) and not c.xdist  # xdist prints no files, its letters in no order
    held = c.file_chars[-1][1] if in_file else c.chars
    if output[:1].isalnum() and (n := len(chars) - len(chars.rstrip("FEsxX"))):
        c.doubtful.append((len(c.file_chars) - 1 if in_file else -1, len(held) + len(chars) - n, n))
    if in_file:
        c.file_chars[-1][1] += chars
    else:
        c.chars += chars


def _settle_doubtful(c: _Console, tests: int | None) -> None:
    """Doubtful letters read as the tests' output where that makes the letters add up: each
    letter to the summary's count of its kind (F with subtests: a failing subtest counts as a
    failure too, and prints u), and all of them to the ``tests`` run (plus the E of each
    teardown error) unless the run stopped early."""
    if not c.doubtful or c.counts is None or (options := _product([n + 1 for _, _, n in c.doubtful])) > 4096:
        return
    def held(f: int) -> str:
        return c.file_chars[f][1] if f >= 0 else c.chars
    have = Counter(c.chars + "".join(chars for _, chars in c.file_chars))
    want = Counter({ch: c.counts.get(status, 0) for ch, status in CHAR_STATUS.items()})
    teardowns = sum(1 for b in c.errors if b.title and b.title.startswith("ERROR at teardown of "))
    total = None if tests is None or c.stopped else tests + teardowns
    for drops in itertools.islice(itertools.product(*(range(n + 1) for _, _, n in c.doubtful)), options):
        left = have - Counter("".join(held(f)[at + n - k:at + n] for (f, at, n), k in zip(c.doubtful, drops)))
        if all(left[ch] == want[ch] for ch in "EsxX.") and (total is None or left.total() == total) and \
                (left["F"] <= want["F"] if c.subtest_letters else left["F"] == want["F"]):
            for (f, at, n), k in sorted(zip(c.doubtful, drops), key=lambda d: -d[0][1]):
                kept = held(f)[:at + n - k] + held(f)[at + n:]
                if f >= 0:
                    c.file_chars[f][1] = kept
                else:
                    c.chars = kept
            return


def _product(sizes: list[int]) -> int:
    out = 1
    for n in sizes:
        out *= n
    return out


def _verbose(c: _Console, tid: str, word: str, why: str | None, close: str | None = ")") -> None:
    status = WORD_STATUS[word]
    c.words.setdefault(tid, set()).add(status)
    prev = c.verbose.get(tid)
    c.verbose[tid] = status if prev is None or RANK[status] > RANK[prev] else prev
    if why:
        c.reasons[tid] = ELLIPSIS.sub("", why)
        c.open_reason = None if close else tid


def _counts(body: str) -> dict[Status, int]:
    out: dict[Status, int] = {}
    for n, word in COUNT_ITEM.findall(body):
        if word in COUNT_STATUS:
            out[COUNT_STATUS[word]] = out.get(COUNT_STATUS[word], 0) + int(n)
    return out


# ---------------------------------------------------------------- reports

def _junit_id(classname: str | None, name: str, index: SourceIndex) -> str:
    """``tests.test_x.TestA`` + ``test_b[1]`` -> ``tests/test_x.py::TestA::test_b[1]``."""
    parts = (classname or "").split(".") if classname else []
    for cut in range(len(parts), 0, -1):
        candidate = "/".join(parts[:cut]) + ".py"
        if index.lines(candidate):
            return "::".join([candidate, *parts[cut:], name])
    # no sources: classes are the capitalised tail of the dotted path
    cut = len(parts)
    while cut > 1 and parts[cut - 1][:1].isupper():
        cut -= 1
    return "::".join(["/".join(parts[:cut]) + ".py", *parts[cut:], name])


def _e_message(text: str | None) -> str | None:
    if not text:
        return None
    block = _Block(None, text.splitlines()[:MAX_BLOCK_LINES])
    return block.message()


def _read_junit(run: RunOutput, path: str, index: SourceIndex, report: TestReport,
                found: dict[str, TestResult]) -> None:
    target = run.resolve(path)
    if target is None or not target.is_file():
        report.warnings.append(f"JUnit report {path} was not written; used the console output")
        return
    reader = JUnitReader(target)
    for case in reader:
        if not case.classname and case.outcome in ("error", "skipped"):  # a module: error or skip at import
            file = case.file or case.name.replace(".", "/") + ".py"
            if case.outcome == "skipped":
                found[file] = TestResult(id=file, status=Status.SKIPPED, file=file,
                                         message=_skip_reason(case.text) or case.message)
                continue
            found[file] = TestResult(id=file, status=Status.ERRORED, file=file,
                                     message=_e_message(case.text) or case.message, details=case.text)
            report.build_error = True
            continue
        tid = _junit_id(case.classname, case.name, index)
        status = {"failure": Status.FAILED, "error": Status.ERRORED}.get(case.outcome, Status.PASSED)
        message = case.message
        if case.outcome == "skipped":
            status = Status.XFAILED if case.type == "pytest.xfail" else Status.SKIPPED
        elif case.outcome in ("failure", "error"):
            message = _e_message(case.text) or case.message
        if tid in found:  # a teardown error is a second <testcase> of the same test
            _put(found, tid, status, message)
            continue
        found[tid] = TestResult(id=tid, status=status, file=tid.split("::")[0], message=message,
                                details=case.text if status in (Status.FAILED, Status.ERRORED) else None,
                                duration_s=case.time)
    report.warnings.extend(reader.warnings)
    report.sources.append(f"junit-xml:{path}")


def _skip_reason(longrepr: object) -> str | None:
    """``('path', 50, 'Skipped: why')`` (as a tuple or its repr) -> ``why``."""
    value = longrepr
    if isinstance(longrepr, str) and longrepr.startswith("("):
        try:
            value = ast.literal_eval(longrepr)
        except (ValueError, SyntaxError):
            return longrepr
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return str(value[2]).removeprefix("Skipped: ")
    return str(longrepr) if longrepr else None


def _read_json(run: RunOutput, path: str, report: TestReport, found: dict[str, TestResult]) -> dict[Status, int] | None:
    target = run.resolve(path)
    data, why = read_json_file(target) if target is not None else (None, "not written")
    if why:
        report.warnings.append(f"JSON report {path} {'was' if why == 'not written' else 'is'} {why}; "
                               "used the console output")
        return None
    if not isinstance(data, dict):
        report.warnings.append(f"JSON report {path} is not a pytest-json-report document")
        return None
    module_skips = 0
    for col in data.get("collectors") or []:
        if isinstance(col, dict) and col.get("outcome") == "skipped" and col.get("nodeid"):
            # a module skipped at import: its summary leaves it out
            found[col["nodeid"]] = TestResult(id=col["nodeid"], status=Status.SKIPPED, file=col["nodeid"],
                                              message=_skip_reason(col.get("longrepr")))
            module_skips += 1
        elif isinstance(col, dict) and col.get("outcome") == "failed" and col.get("nodeid"):
            text = str(col.get("longrepr") or "")
            found[col["nodeid"]] = TestResult(id=col["nodeid"], status=Status.ERRORED, file=col["nodeid"],
                                              message=_e_message(text) or text or None, details=text or None)
            report.build_error = True
    for t in data.get("tests") or []:
        if not isinstance(t, dict) or not isinstance(t.get("nodeid"), str):
            continue
        status = JSON_STATUS.get(str(t.get("outcome")))
        if status is None:
            continue
        phases = [t.get(p) for p in ("setup", "call", "teardown") if isinstance(t.get(p), dict)]
        bad = next((p for p in phases if p.get("outcome") in ("failed", "skipped") or p.get("crash")), None)
        message = details = None
        if bad is not None:
            crash = bad.get("crash") if isinstance(bad.get("crash"), dict) else {}
            longrepr = bad.get("longrepr")
            if status == Status.SKIPPED:
                message = _skip_reason(longrepr)
            elif status in (Status.FAILED, Status.ERRORED):
                message = crash.get("message") or (str(longrepr) if longrepr else None)
                details = str(longrepr) if longrepr else None
        found[t["nodeid"]] = TestResult(
            id=t["nodeid"], status=status, file=t["nodeid"].split("::")[0], message=message, details=details,
            duration_s=sum(float(p.get("duration") or 0) for p in phases) if phases else None)
    report.sources.append(f"json-report:{path}")
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    counts = {s: int(summary[k]) for k, s in JSON_STATUS.items() if isinstance(summary.get(k), int)}
    if module_skips:
        counts[Status.SKIPPED] = counts.get(Status.SKIPPED, 0) + module_skips
    return counts


# ---------------------------------------------------------------- merging

def _put(found: dict[str, TestResult], tid: str, status: Status, message: str | None = None) -> TestResult:
    """Record one reading of a test (the shared merge rule of parsers/normalize.py)."""
    return add(found, TestResult(id=tid, status=status, file=tid.split("::")[0], message=message))


def _align(tests: list[_Test], chars: str, c: _Console, teardown: Counter, calls: dict[str, Status],
           partial: bool) -> list[tuple[_Test, Status]] | None:
    """Progress letters mapped onto tests in collection order, or None when
    they disagree (deselected tests, random order, wrong sources)."""
    known = {**c.summary, **c.verbose}
    out: list[tuple[_Test, Status]] = []
    i = 0
    for t in tests:
        if i >= len(chars):
            break
        status = CHAR_STATUS[chars[i]]
        i += 1
        # a teardown error prints its own E after the test's letter
        words = c.words.get(t.id, set())
        if i < len(chars) and chars[i] == "E" and (
                teardown[t.head] or (Status.ERRORED in words and (status != Status.ERRORED or len(words) > 1))):
            i += 1
            calls[t.id] = status
            status = Status.ERRORED
        if t.id in known and known[t.id] != status:
            return None
        out.append((t, status))
    if i < len(chars) or (len(out) < len(tests) and not partial):
        return None
    return out


def _from_progress(c: _Console, selected: list[_Test], bad: set[str], found: dict[str, TestResult],
                   calls: dict[str, Status], partial: bool) -> list[_Test]:
    """Statuses from progress letters; returns the hanging test candidates."""
    teardown = Counter(b.title.removeprefix("ERROR at teardown of ") for b in c.errors
                       if b.title and b.title.startswith("ERROR at teardown of "))
    if "*" in bad:
        return []
    hanging: list[_Test] = []
    if c.file_chars:
        for n, (file, chars) in enumerate(c.file_chars):
            tests = [t for t in selected if t.file == file]
            last = n == len(c.file_chars) - 1
            aligned = _align(tests, chars, c, teardown, calls, partial and last) if file not in bad else None
            if aligned is None:
                continue
            for t, status in aligned:
                _put(found, t.id, status)
            if last and len(aligned) < len(tests):
                hanging = [tests[len(aligned)]]
    elif c.chars and not c.xdist and not bad:
        aligned = _align(selected, c.chars, c, teardown, calls, partial)
        if aligned is None:
            return []
        for t, status in aligned:
            _put(found, t.id, status)
        if len(aligned) < len(selected):
            hanging = [selected[len(aligned)]]
    return hanging


def _from_skip_lines(c: _Console, src: _Sources, found: dict[str, TestResult]) -> None:
    """``SKIPPED [N] file:line: reason`` -> the N tests defined around line."""
    for n, file, line, why in c.skip_lines:
        if line is None:
            continue
        cands = src.at(file, line)
        if not cands:
            continue
        known = [t for t in cands if t.id in found and found[t.id].status == Status.SKIPPED]
        unknown = [t for t in cands if t.id not in found]
        if len(cands) == n:
            targets = cands
        elif len(unknown) == n:
            targets = unknown
        else:
            targets = known if len(known) == n else []
        for t in targets:
            r = _put(found, t.id, Status.SKIPPED)
            if r.status == Status.SKIPPED:
                r.message = r.message or why


def _module_skips(c: _Console, src: _Sources, opts: _Options, found: dict[str, TestResult],
                  report: TestReport) -> dict[str, str | None]:
    """Modules skipped at import time (``pytest.skip(allow_module_level=True)``,
    ``pytest.importorskip``) -> reason. A report or a ``SKIPPED [1] file:line``
    line outside every test names them; otherwise pytest's count of them (the
    collected line's ``/ N skipped``, or the final skipped count less the
    skipped tests the progress shows) is matched with the modules whose
    import-time code can skip."""
    out = {tid: r.message for tid, r in found.items() if "::" not in tid and r.status == Status.SKIPPED}
    cands = {m.file: m for m in src.module_skips(opts)}
    for n, file, line, why in c.skip_lines:
        if n == 1 and line is not None and (file in cands or file in out) and not src.at(file, line):
            out[file] = why
    count = c.modules_skipped
    if count is None and c.counts is not None and (
            c.chars or c.file_chars or c.verbose or (c.collect_errors and c.stopped)):
        shown = sum(chars.count("s") for _, chars in c.file_chars) + c.chars.count("s") + \
            sum(s == Status.SKIPPED for s in c.verbose.values())
        count = c.counts.get(Status.SKIPPED, 0) - shown
    if report.sources:  # a report lists every module it skipped
        return out
    cands = {f: m for f, m in cands.items() if f not in out and f not in c.collect_errors}
    certain = [f for f, m in cands.items() if m.certain]
    maybe = [f for f, m in cands.items() if not m.certain]
    rest = None if count is None else count - len(out) - len(certain)
    add = certain
    if rest is None or rest == 0:
        pass
    elif rest == len(maybe):
        add = certain + maybe
    else:
        # which conditional skips fired: the reading whose remaining tests
        # match what pytest collected
        want = c.collected - c.deselected if c.collected is not None else \
            len(c.chars) + sum(len(chars) for _, chars in c.file_chars) or None
        fits = [list(combo) for combo in itertools.combinations(maybe, rest)
                if want is not None and len(maybe) <= 12 and rest > 0
                and len(src.selected(opts, {**c.collect_errors, **out, **dict.fromkeys(certain + list(combo))})[0])
                == want]
        if len(fits) == 1:
            add = certain + fits[0]
        else:
            report.warnings.append(f"pytest skipped {count} modules at import time; the sources do not say which")
    for f in add:
        out[f] = cands[f].reason
    return out


def _solve(c: _Console, src: _Sources, selected: list[_Test], bad: set[str], found: dict[str, TestResult],
           counts: dict[Status, int] | None, calls: dict[str, Status], opts: _Options, report: TestReport) -> None:
    """Tests no line names (xdist letters, reports that lose XPASS) solved
    against the final counts and the tests' skip/xfail markers. pytest counts
    a test with a teardown error twice: as its call outcome and as an error."""
    # JUnit XML shows a non-strict XPASS as a pass: the counts say how many,
    # or without counts an unconditional xfail marker does (a passing test
    # marked xfail is an XPASS unless --runxfail)
    have = Counter(t.status for t in found.values()) + Counter(calls.values())
    cands = [t for t in found.values() if t.status == Status.PASSED and "::" in t.id
             and (d := src.find(t.id)) is not None and d.xfail is not None and not d.xfail_strict
             and (counts or not d.xfail_maybe)]
    missing_xpass = counts.get(Status.XPASSED, 0) - have[Status.XPASSED] if counts else len(cands)
    if missing_xpass > 0 and len(cands) == missing_xpass and not opts.runxfail:
        for t in cands:
            t.status = Status.XPASSED
        have = Counter(t.status for t in found.values()) + Counter(calls.values())
    if not counts:
        return
    need = {s: counts.get(s, 0) - have[s] for s in RANK}
    if all(v == 0 for v in need.values()) or (c.collect_errors and c.stopped):
        return
    universe = selected
    if bad:
        report.warnings.append(f"could not rebuild the tests of {', '.join(sorted(bad))}; "
                               f"{sum(need.values())} results unknown")
        return
    if c.collected is not None and len(universe) != c.collected - c.deselected:
        report.warnings.append(f"pytest collected {c.collected - c.deselected} tests, the sources give "
                               f"{len(universe)}; some results are unknown")
        return
    unknown = [t for t in universe if t.id not in found]
    if any(v < 0 for v in need.values()) or sum(need.values()) != len(unknown) \
            or need[Status.FAILED] or need[Status.ERRORED]:
        report.warnings.append("the console names fewer tests than its counts; some results are unknown")
        return
    # a skipif/xfail condition or a pytest.skip() call may or may not fire:
    # try both readings, keep the one that fits the counts
    for lenient in (False, True):
        skips = [t for t in unknown if t.skip is not None or (t.skipif is not None and not lenient)]
        xfails = [t for t in unknown if t not in skips and t.xfail is not None and not (lenient and t.xfail_maybe)]
        plain = [t for t in unknown if t not in skips and t not in xfails]
        if len(skips) == need[Status.SKIPPED] and len(plain) == need[Status.PASSED]:
            break
    else:
        report.warnings.append("the unnamed results do not match the tests' markers; some results are unknown")
        return
    for t in skips:
        _put(found, t.id, Status.SKIPPED)
    for t in plain:
        _put(found, t.id, Status.PASSED)
    if need[Status.XPASSED] == 0 or need[Status.XFAILED] == 0:
        for t in xfails:
            _put(found, t.id, Status.XPASSED if need[Status.XFAILED] == 0 else Status.XFAILED)
    elif xfails:
        report.warnings.append("which xfail-marked tests passed is not in the output; left them out")


def _messages(c: _Console, found: dict[str, TestResult], order: list[str]) -> None:
    """Failure/error sections matched to tests by headline, in report order."""
    by_title: dict[str, list[_Block]] = defaultdict(list)
    for b in c.failures + c.errors:
        if b.title:
            by_title[b.title].append(b)
    untitled = [b for b in c.failures if b.title is None]
    failed_order = {tid: n for n, tid in enumerate(t for t in order if t in found and found[t].status == Status.FAILED)}
    for tid in order:
        t = found.get(tid)
        if t is None or t.status not in (Status.FAILED, Status.ERRORED) or "::" not in tid:
            continue
        head = ".".join(tid.split("::")[1:])
        keys = [head] if t.status == Status.FAILED else \
            [f"ERROR at setup of {head}", f"ERROR at teardown of {head}", f"ERROR at call of {head}"]
        block = next((by_title[k].pop(0) for k in keys if by_title.get(k)), None)
        if block is None and t.status == Status.FAILED and untitled and len(untitled) == len(failed_order):
            block = untitled[failed_order[tid]]
        if block is not None:
            msg = block.message()
            if msg:
                t.message = msg
            if not t.details:
                t.details = "\n".join(block.lines + ([block.crash] if block.crash else [])) or None


def _finish(found: dict[str, TestResult], src: _Sources, index: SourceIndex) -> None:
    """Files from the ids (a module's entry is its path), skip and xfail
    reasons the output cut or left out from the markers, timeouts."""
    for t in found.values():
        if "::" not in t.id:
            t.file = index.relative(t.id) or t.id
            continue
        t.file = t.id.split("::", 1)[0]
        d = src.find(t.id) if not t.message and t.status != Status.PASSED else None
        if d is not None:
            if t.status == Status.SKIPPED:
                t.message = d.skip or d.skipif or None
            elif t.status in (Status.XFAILED, Status.XPASSED):
                t.message = d.xfail or None
        if t.status == Status.FAILED and t.message and TIMEOUT_MSG.search(t.message):
            t.timed_out = True


def _named(c: _Console, src: _Sources, selected: list[_Test], found: dict[str, TestResult], index: SourceIndex,
           report: TestReport) -> None:
    """Collection errors, tests named by -v/-r lines, and failure sections
    whose headline names a test no line names (``-r`` without ``f``/``E``)."""
    for path, msg in c.collect_errors.items():
        rel = index.relative(path) or path
        block = next((b for b in c.errors if b.title and b.title.endswith(f" {path}")), None)
        r = _put(found, rel, Status.ERRORED, (block.message() if block else None) or msg)
        if block is not None:
            r.line = r.line or block.syntax_line(rel)
            r.details = r.details or "\n".join(block.lines) or None
        report.build_error = True
    for tid, words in c.words.items():
        for status in words:
            _put(found, tid, status)
    heads = {".".join(t.split("::")[1:]) for t in found}
    by_head: dict[str, list[_Test]] = defaultdict(list)
    for t in selected:
        by_head[t.head].append(t)
    for b in c.failures + c.errors:
        title = b.title or ""
        head = re.sub(r"^ERROR at (?:setup|teardown|call) of ", "", title)
        if title and not title.startswith("ERROR collecting ") and head not in heads and len(by_head[head]) == 1:
            _put(found, by_head[head][0].id, Status.ERRORED if head != title else Status.FAILED)
    for b in c.failures:
        # a failing subtest's section ("<test> [msg] (i=1)") fails its test whatever the test's own
        # line said (pytest 9 prints PASSED for it, and -rN leaves out the SUBFAILED line)
        if not (m := SUBTEST_TITLE.match(b.title or "")):
            continue
        ids = {t.id for t in by_head[m.group("head")]} | \
            {tid for tid in found if ".".join(tid.split("::")[1:]) == m.group("head")}
        if len(ids) == 1:
            _put(found, ids.pop(), Status.FAILED)


def _teardown_calls(c: _Console) -> dict[str, Status]:
    """Tests with a teardown error and their own outcome (pytest counts both)."""
    calls = {tid: next(iter(w - {Status.ERRORED})) for tid, w in c.words.items()
             if Status.ERRORED in w and len(w) == 2}
    teardown = {b.title.removeprefix("ERROR at teardown of ") for b in c.errors
                if b.title and b.title.startswith("ERROR at teardown of ")}
    for tid, w in c.words.items():
        if tid not in calls and ".".join(tid.split("::")[1:]) in teardown:
            calls[tid] = Status.FAILED if Status.FAILED in w else Status.PASSED
    return calls


def locate(run: RunOutput, tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``path::Class::test[params]``: the ``def`` of the function pytest
    collects under that id (the project's ``python_files``/``classes``/
    ``functions`` rules; parameters the sources cannot spell fall back to the
    function). A module's own entry (``path``) has no line."""
    src = _Sources(sources, _config(sources))
    return {t.id: Location(d.file, d.line) for t in tests if "::" in t.id and (d := src.find(t.id)) is not None}


def parse(run: RunOutput) -> TestReport:
    """Parse one pytest run: reports named by the command, cross-checked with
    (or replaced by) the console output."""
    report = TestReport(framework=FRAMEWORK)
    index = SourceIndex(run.sources_root)
    cfg = _config(index)
    addopts = cfg.get("addopts", "")
    opts = _options(command_words(addopts if isinstance(addopts, str) else " ".join(addopts))
                    + _pytest_words(run.command))
    src = _Sources(index, cfg)
    found: dict[str, TestResult] = {}
    counts = None
    if opts.junit:
        _read_junit(run, opts.junit, index, report, found)
    if opts.json_report:
        counts = _read_json(run, opts.json_report, report, found)
    c = _read_console(run, opts.uncaptured)
    c.xdist = c.xdist or opts.xdist
    if c.doubtful:  # -q prints no "collected N items": the sources say how many tests ran
        _settle_doubtful(c, c.collected - c.deselected if c.collected is not None
                         else len(src.selected(opts, c.collect_errors)[0]) or None)
    module_skips = _module_skips(c, src, opts, found, report)
    for file, why in module_skips.items():
        r = _put(found, file, Status.SKIPPED, why)
        r.line = None
    selected, bad = src.selected(opts, {**c.collect_errors, **module_skips})
    if c.seen_pytest or c.verbose or c.summary or c.chars or c.file_chars or c.collect_errors:
        report.sources.append("console")

    _named(c, src, selected, found, index, report)
    killed = run.killed_by_timeout or c.thread_timeout
    calls = _teardown_calls(c)
    hanging = _from_progress(c, selected, bad, found, calls, partial=killed or c.stopped) if not c.xdist else []
    _from_skip_lines(c, src, found)
    _solve(c, src, selected, bad, found, c.counts or counts, calls, opts, report)

    for tid, msg in c.summary_msg.items():
        if tid in found and found[tid].message is None:
            found[tid].message = ELLIPSIS.sub("", msg).rstrip() or None
    order = list(dict.fromkeys([*c.summary, *c.verbose, *found]))
    _messages(c, found, order)
    for tid, why in c.reasons.items():
        t = found.get(tid)
        if t is None or t.message:
            continue
        d = src.find(tid)
        # -v cuts long reasons ("needs bank"): the marker has them whole
        full = next((r for r in (d.skip, d.skipif, d.xfail) if r and r.startswith(why)), None) if d else None
        t.message = full or why

    if killed:
        report.timed_out = True
        started = [tid for tid in c.started if tid not in found]
        for tid in started or [t.id for t in hanging if t.id not in found]:
            r = _put(found, tid, Status.FAILED, "killed while running (timeout)")
            r.timed_out = True
    _finish(found, src, index)
    report.tests = list(found.values())
    report.timed_out = report.timed_out or any(t.timed_out for t in report.tests)
    total = c.counts or counts
    if total is not None:
        # A test whose teardown errored is one errored entry but counted twice
        # (its call's outcome and the error): errors are left out of the check.
        teardown = Counter(calls.values())
        report.summary_counts = {s.value: n - teardown[s] for s, n in total.items() if s != Status.ERRORED}
    if not report.tests and run.exit_code not in (0, 5, None):
        report.per_test = False
        report.output_tail = run.tail()
        report.warnings.append("no per-test results found in the pytest output")
    return report


# ---------------------------------------------------------------------- running it (parsers/plugin.py)

RUNNER_NAMES = ("pytest", "py.test", "pytest-3")
SELECT_VALUE_OPTIONS = {
    "-p", "-k", "-m", "-c", "-o", "-W", "-n", "--maxfail", "--junitxml", "--junit-xml", "--rootdir", "--confcutdir",
    "--basetemp", "--tb", "--deselect", "--ignore", "--ignore-glob", "--durations", "--log-level", "--log-cli-level",
    "--timeout", "--cov", "--cov-report", "--dist", "--import-mode", "--json-report-file", "--override-ini",
    "--capture", "--color", "--html", "--reruns", "-r",
}
DEFAULT_INVOCATION = "python -m pytest"
REPORT_OPTIONS = " --junitxml={reports}/pytest.xml"
SELECTION_REPORTS = "end"
RESUMABLE = True
# A ``-v`` line naming the test about to run, with no outcome after it yet.
RUNNING_LINE = re.compile(r"^(?P<id>\S+::\S.*?)\s*$")
OUTCOME = re.compile(r"\b(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b|\[\s*\d+%\]\s*$")


def runner_end(words: list[str]) -> int | None:
    values = [unquote(w) for w in words]
    for i, v in enumerate(values):
        if bin_name(words[i]) in RUNNER_NAMES:
            return i + 1
        if v == "-m" and i + 1 < len(values) and values[i + 1] == "pytest":
            return i + 2
    return None


def select(tests: list[TestResult], inv: Invocation, default: bool) -> list[str]:
    return [shlex.quote(t.id) for t in tests]


def exited_early(command: str, exit_code: int | None, root: Path) -> bool:
    """The session ended by itself in the middle (a test called ``os._exit``): the JUnit
    report pytest writes when a session ends, and that the command asks for, is missing.
    (Usage and internal errors, exit codes 3 and 4, write none either.)"""
    if exit_code in (3, 4, 126, 127):
        return False
    path = junit_path(command)
    return path is not None and not (root / path).exists()


def running_test(output_end: str) -> str | None:
    """The test a ``pytest -v`` run was in when it died: its last line names it, with no outcome."""
    lines = [line for line in output_end.splitlines() if line.strip()]
    if not lines:
        return None
    last = lines[-1]
    m = RUNNING_LINE.match(last)
    if m is None or OUTCOME.search(last):
        return None
    return m.group("id")


def running(output_end: str, report: TestReport, root: Path | None, ended: bool) -> list[TestResult]:
    name = running_test(output_end) if ended else None
    return [TestResult(id=name, status=Status.ERRORED)] if name else []


def rerun_command(command: str, invocation: Callable[[], Invocation], scope: str | None,
                  skip: list[TestResult], listed: tuple[str, list[str]] | None) -> str | None:
    """``-v`` names each test before it runs; ``--deselect`` leaves the done ones out."""
    return f"{command} -v" + "".join(f" --deselect {shlex.quote(t.id)}" for t in skip)


def suite_command(root: Path) -> tuple[str, list[str]]:
    return DEFAULT_INVOCATION, ["pytest", "python -m unittest discover -v"]
