"""Go sources, for the go test parser: packages (module path, directory,
build constraints), their Test/Example/Fuzz functions, and the subtests a
function runs with t.Run over literal names or table-driven loops, with the
skips the sources make certain (t.Skip, testing.Short() under -short).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..locate import SourceIndex


@dataclass
class GoTestFlags:
    """What the go test command asks for: which tests run, -short, build tags, where JSON goes."""

    run: list[str] = field(default_factory=list)
    skip: list[str] = field(default_factory=list)
    short: bool = False
    failfast: bool = False
    json: bool = False
    tags: set[str] = field(default_factory=set)
    jsonfile: str | None = None
    redirect: str | None = None


GOOS = {"aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "linux", "nacl",
        "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos"}
GOARCH = {"386", "amd64", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le", "ppc64", "ppc64le",
          "riscv64", "s390x", "wasm"}
FUNC = re.compile(r"^func\s+(?P<name>(?:Test|Example|Fuzz)\w*)\s*\((?P<params>[^)]*)\)\s*\{", re.M)
TESTMAIN = re.compile(r"^func\s+TestMain\s*\(", re.M)
PARAM = re.compile(r"^\s*(?:(?P<var>\w+)\s+)?\*\s*(?:\w+\.)?(?P<type>[TF])\s*$")
OUTPUT_COMMENT = re.compile(r"//\s*(?:Unordered output|Output):")
BUILD_TAG = re.compile(r"^//go:build\s+(?P<expr>.+)$", re.M)
PACKAGE = re.compile(r"^package\s+(?P<name>\w+)", re.M)
MODULE = re.compile(r"^module\s+(?P<path>\S+)", re.M)
RUN_CALL = r"\b{var}\.Run\s*\("
SKIP_CALL = r"\b{var}\.Skip(?:f|Now)?\s*\("
RANGE = re.compile(r"\bfor\s+(?:(?P<k>\w+)\s*(?:,\s*(?P<v>\w+))?\s*:?=\s*)?range\s+")
STRING = re.compile(r'^"(?:[^"\\\n]|\\.)*"$|^`[^`]*`$')


@dataclass
class GoFunc:
    name: str
    file: str
    line: int
    var: str | None
    body: str  # between the braces
    skip: str | None = None  # why the sources say it skips ("" = unconditional)
    subtests: list[tuple[str, bool]] | None = None  # (name, skipped); None = unknown


class GoSources:
    """Go sources of the project, read through a SourceIndex."""

    def __init__(self, index: SourceIndex, flags: GoTestFlags) -> None:
        self.index = index
        self.flags = flags
        self._modules: list[tuple[str, str]] | None = None
        self._funcs: dict[str, list[GoFunc]] = {}
        self._lines: dict[str, dict[str, tuple[str | None, int | None]]] = {}
        self._dirs: set[str] | None = None

    def modules(self) -> list[tuple[str, str]]:
        """(module path, directory) from every go.mod, longest path first."""
        if self._modules is None:
            mods = []
            for rel in self.index.files(["go.mod"]):
                if rel == "go.mod" or rel.endswith("/go.mod"):
                    m = MODULE.search("\n".join(self.index.lines(rel)[:50]))
                    if m:
                        mods.append((m.group("path").strip('"'), str(PurePosixPath(rel).parent)))
            self._modules = sorted(mods, key=lambda x: -len(x[0]))
        return self._modules

    def module_path(self) -> str | None:
        mods = self.modules()
        root = [m for m, d in mods if d == "."]
        return root[0] if root else (mods[-1][0] if mods else None)

    def pkg_dir(self, path: str) -> str | None:
        """The directory (relative, '.' for the root) of an import path."""
        if self._dirs is None:
            self._dirs = {str(PurePosixPath(f).parent) for f in self.index.files([".go"])}
        dirs = self._dirs
        for mod, d in self.modules():
            if path == mod or path.startswith(mod + "/"):
                sub = path[len(mod):].lstrip("/")
                cand = str(PurePosixPath(d) / sub) if sub else d
                if cand in dirs:
                    return cand
        hits = sorted((d for d in dirs if path == d or path.endswith("/" + d)), key=len, reverse=True)
        return hits[0] if hits else None

    def import_path(self, directory: str) -> str | None:
        """The import path of a directory, through its innermost go.mod."""
        owners = [(mod, d) for mod, d in self.modules()
                  if d == "." or directory == d or directory.startswith(d + "/")]
        if not owners:
            return None
        mod, d = max(owners, key=lambda x: 0 if x[1] == "." else len(x[1]))
        sub = directory if d == "." else directory[len(d):].lstrip("/")
        return f"{mod}/{sub}" if sub and sub != "." else mod

    def test_files(self, directory: str) -> list[str]:
        """The directory's _test.go files in build order: the package's own
        files, then the external ``_test`` package's, each sorted."""
        files = [f for f in self.index.files(["_test.go"]) if str(PurePosixPath(f).parent) == directory]
        internal, external = [], []
        for f in sorted(files):
            text = "\n".join(self.index.lines(f))
            if not self._builds(f, text):
                continue
            m = PACKAGE.search(text)
            (external if m and m.group("name").endswith("_test") else internal).append(f)
        return internal + external

    def _builds(self, rel: str, text: str) -> bool:
        """Whether the file is compiled on linux/amd64 with the run's -tags."""
        stem = PurePosixPath(rel).name[: -len("_test.go")]
        parts = stem.split("_")[1:]
        if parts and parts[-1] in GOARCH and parts[-1] != "amd64":
            return False
        if parts and parts[-1] in GOARCH:
            parts = parts[:-1]
        if parts and parts[-1] in GOOS and parts[-1] != "linux":
            return False
        head = text.split("\npackage ", 1)[0]
        m = BUILD_TAG.search(head)
        return m is None or _build_expr(m.group("expr"), {"linux", "amd64", "unix", "gc", *self.flags.tags})

    def funcs(self, directory: str) -> list[GoFunc]:
        """Tests, fuzz targets and examples (with an output comment) in run order."""
        if directory in self._funcs:
            return self._funcs[directory]
        tests: list[GoFunc] = []
        fuzz: list[GoFunc] = []
        examples: list[GoFunc] = []
        for rel in self.test_files(directory):
            text = "\n".join(self.index.lines(rel))
            for m in FUNC.finditer(text):
                name = m.group("name")
                prefix = next(p for p in ("Test", "Example", "Fuzz") if name.startswith(p))
                if len(name) > len(prefix) and name[len(prefix)].islower():
                    continue
                if name == "TestMain":
                    continue
                end = _match(text, m.end() - 1)
                if end is None:
                    continue
                body = text[m.end():end]
                line = text.count("\n", 0, m.start()) + 1
                if prefix == "Example":
                    if m.group("params").strip() or not OUTPUT_COMMENT.search(body):
                        continue
                    examples.append(GoFunc(name, rel, line, None, body, subtests=[]))
                    continue
                pm = PARAM.match(m.group("params"))
                if pm is None or pm.group("type") != ("T" if prefix == "Test" else "F"):
                    continue
                f = GoFunc(name, rel, line, pm.group("var"), body, subtests=[])
                (tests if prefix == "Test" else fuzz).append(f)
        for f in tests:
            if f.var:
                f.skip = _skips(f.body, f.var, self.flags)
                f.subtests = _subtests(f.body, f.var, self, directory, self.flags)
        self._funcs[directory] = tests + fuzz + examples
        return self._funcs[directory]

    def func_lines(self, directory: str | None) -> dict[str, tuple[str | None, int | None]]:
        """Test function name -> (file, line) for a package directory."""
        if directory is None:
            return {}
        if directory not in self._lines:
            self._lines[directory] = {f.name: (f.file, f.line) for f in self.funcs(directory)}
        return self._lines[directory]

    def func_line(self, directory: str | None, name: str) -> tuple[str | None, int | None]:
        """File and line of the ``func`` of a test (or of its top-level test)."""
        if directory is None:
            return None, None
        top = name.split("/", 1)[0]
        if top in self.func_lines(directory):
            return self._lines[directory][top]
        pat = re.compile(rf"^func\s+{re.escape(top)}\s*\(")  # e.g. a benchmark
        found: tuple[str | None, int | None] = (None, None)
        for rel in self.test_files(directory):
            line = self.index.find_in(rel, pat)
            if line is not None:
                found = (rel, line)
                break
        self._lines[directory][top] = found
        return found

    def testmain(self, directory: str | None) -> tuple[str, int] | None:
        """Where TestMain makes the package fail: its first ``os.Exit(n)``
        with n != 0, ``log.Fatal`` or ``panic``, else its ``func`` line."""
        if directory is None:
            return None
        for rel in self.test_files(directory):
            text = "\n".join(self.index.lines(rel))
            m = TESTMAIN.search(text)
            if m is None:
                continue
            start = text.count("\n", 0, m.start())
            brace = text.find("{", m.end())
            end = _match(text, brace) if brace >= 0 else None
            last = text.count("\n", 0, end) if end is not None else start
            fail = re.compile(r"\bos\.Exit\(\s*(?:[1-9]\d*|-\d+)\s*\)|\blog\.Fatal\w*\(|\bpanic\(")
            for i, ln in enumerate(self.index.lines(rel)[start:last + 1], start=start):
                if fail.search(ln.split("//", 1)[0]):
                    return rel, i + 1
            return rel, start + 1
        return None

    def package_funcs(self, directory: str) -> str:
        """All Go source of a directory (for helpers like ``func Zones()``)."""
        files = [f for f in self.index.files([".go"]) if str(PurePosixPath(f).parent) == directory]
        return "\n".join("\n".join(self.index.lines(f)) for f in sorted(files))


def _build_expr(expr: str, tags: set[str]) -> bool:
    """Evaluate a //go:build expression (``a && (b || !c)``)."""
    tokens = re.findall(r"&&|\|\||!|\(|\)|[\w.]+", expr)
    pos = 0

    def atom() -> bool:
        nonlocal pos
        if pos >= len(tokens):
            return False
        tok = tokens[pos]
        pos += 1
        if tok == "!":
            return not atom()
        if tok == "(":
            val = disj()
            pos += 1
            return val
        return tok in tags or tok.startswith("go1.")

    def conj() -> bool:
        nonlocal pos
        val = atom()
        while pos < len(tokens) and tokens[pos] == "&&":
            pos += 1
            val = atom() and val
        return val

    def disj() -> bool:
        nonlocal pos
        val = conj()
        while pos < len(tokens) and tokens[pos] == "||":
            pos += 1
            val = conj() or val
        return val

    try:
        return disj()
    except RecursionError:
        return True


def _skip_literal(text: str, i: int) -> int:
    """Index after a string, rune or comment starting at ``i`` (``i`` if none)."""
    c = text[i]
    if c == "/" and text.startswith("//", i):
        j = text.find("\n", i)
        return len(text) if j < 0 else j
    if c == "/" and text.startswith("/*", i):
        j = text.find("*/", i + 2)
        return len(text) if j < 0 else j + 2
    if c == "`":
        j = text.find("`", i + 1)
        return len(text) if j < 0 else j + 1
    if c in "\"'":
        j = i + 1
        while j < len(text) and text[j] != c and text[j] != "\n":
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return i


def _match(text: str, open_at: int) -> int | None:
    """Index of the bracket closing the one at ``open_at``."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    i = open_at
    while i < len(text):
        j = _skip_literal(text, i)
        if j != i:
            i = j
            continue
        c = text[i]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return i
        i += 1
    return None


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split at top-level separators (outside brackets, strings, comments)."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(text):
        j = _skip_literal(text, i)
        if j != i:
            i = j
            continue
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if _strip_comments(p).strip()]


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def _go_string(lit: str) -> str | None:
    """The value of a Go string literal, None when ``lit`` is not one."""
    lit = _strip_comments(lit).strip()
    if not STRING.match(lit):
        return None
    if lit.startswith("`"):
        return lit[1:-1]
    try:
        return json.loads(lit) if "\\x" not in lit and "\\'" not in lit and "\\a" not in lit \
            else lit[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    except (ValueError, UnicodeError):
        return lit[1:-1]


def _go_value(expr: str) -> str | bool | None:
    expr = _strip_comments(expr).strip()
    if expr in ("true", "false"):
        return expr == "true"
    return _go_string(expr)


def subtest_name(name: str) -> str:
    """A subtest name as ``testing`` prints it: spaces become ``_`` and
    unprintable runes are escaped (``rewrite`` in testing/match.go)."""
    out = []
    for ch in name:
        if ch.isspace():
            out.append("_")
        elif not ch.isprintable():
            escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
            cp = ord(ch)
            out.append(escapes.get(ch) or (f"\\x{cp:02x}" if cp < 0x80 else f"\\u{cp:04x}" if cp < 0x10000
                                           else f"\\U{cp:08x}"))
        else:
            out.append(ch)
    return "".join(out)


def unique_names(names: list[str]) -> list[str]:
    """Go's de-duplication: an empty name is ``#00``, repeats get ``#01``..."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        if n == "":
            n = "#00"
            seen.setdefault(n, 0)
        elif n in seen:
            seen[n] += 1
            n = f"{n}#{seen[n]:02d}"
        else:
            seen[n] = 0
        out.append(n)
    return out


def _skips(body: str, var: str, flags: GoTestFlags) -> str | None:
    """Whether a test body skips at its top level, as far as the sources
    tell: an unconditional ``t.Skip``, ``testing.Short()`` with -short, an
    unset environment variable, a GOOS other than linux."""
    depth = 0
    i = 0
    skip = re.compile(SKIP_CALL.format(var=re.escape(var)))
    cond_if = re.compile(r"\bif\s+(?P<cond>[^{]+)\{")
    while i < len(body):
        j = _skip_literal(body, i)
        if j != i:
            i = j
            continue
        c = body[i]
        if c == "{" and depth == 0 and (m := _last_if(body, i, cond_if)):
            end = _match(body, i)
            if end is None:
                return None
            inner = body[i + 1:end]
            sm = skip.search(_strip_comments(inner))
            if sm and _condition_true(m.group("cond"), flags):
                return _skip_reason(inner[sm.end() - 1:]) or ""
            i = end + 1
            continue
        if c in "{([":
            end = _match(body, i)
            if end is None:
                return None
            i = end + 1
            continue
        if depth == 0 and (sm := skip.match(body, i)) and (i == 0 or not body[i - 1].isalnum()):
            return _skip_reason(body[sm.end() - 1:]) or ""
        i += 1
    return None


def _last_if(body: str, brace: int, cond_if: re.Pattern[str]) -> re.Match[str] | None:
    """The ``if cond {`` whose brace is at ``brace``, on the same line."""
    line_start = body.rfind("\n", 0, brace) + 1
    m = cond_if.search(body, line_start, brace + 1)
    return m if m and m.end() == brace + 1 else None


def _skip_reason(args: str) -> str | None:
    end = _match(args, 0) if args.startswith("(") else None
    if end is None:
        return None
    parts = _split_top(args[1:end])
    return _go_string(parts[0]) if parts else None


def _condition_true(cond: str, flags: GoTestFlags) -> bool:
    """Evaluate the common skip conditions; False when unsure."""
    cond = _strip_comments(cond).strip()
    if ";" in cond:  # if v, ok := os.LookupEnv("X"); !ok
        init, cond = cond.split(";", 1)
        cond = cond.strip()
        if "os.LookupEnv" in init or "os.Getenv" in init:
            var = re.match(r"\s*(?:(\w+)\s*,\s*)?(\w+)\s*:?=", init)
            if var:
                ok = var.group(2) if var.group(1) else None
                val = var.group(1) or var.group(2)
                if ok and re.fullmatch(rf"!\s*{ok}", cond):
                    return True
                if re.fullmatch(rf'{val}\s*==\s*""', cond) or re.fullmatch(rf'len\({val}\)\s*==\s*0', cond):
                    return True
        return False
    if re.fullmatch(r"testing\.Short\(\)", cond):
        return flags.short
    if re.fullmatch(r"!\s*testing\.Short\(\)", cond):
        return not flags.short
    if re.fullmatch(r'os\.Getenv\("[^"]*"\)\s*==\s*""', cond) or \
            re.fullmatch(r'len\(os\.Getenv\("[^"]*"\)\)\s*==\s*0', cond):
        return True
    if m := re.fullmatch(r'runtime\.GOOS\s*(?P<op>==|!=)\s*"(?P<os>\w+)"', cond):
        return (m.group("os") == "linux") == (m.group("op") == "==")
    return False


def _subtests(body: str, var: str, src: GoSources, directory: str, flags: GoTestFlags,
              depth: int = 0) -> list[tuple[str, bool]] | None:
    """Subtest names (nested ones as ``a/b``) of a test body: ``t.Run`` with a
    literal name, or a name taken from the rows of the table the enclosing
    loop ranges over; None when a ``t.Run`` name cannot be worked out."""
    found: list[tuple[str, bool, list[tuple[str, bool]]]] = []
    call = re.compile(RUN_CALL.format(var=re.escape(var)))
    pos = 0
    plain = _blank_literals(body)
    while (m := call.search(plain, pos)) is not None:
        open_at = m.end() - 1
        end = _match(body, open_at)
        if end is None:
            return None
        args = _split_top(body[open_at + 1:end])
        pos = end + 1
        if len(args) < 2:
            return None
        closure = args[1]
        cvar = re.match(r"func\s*\(\s*(\w+)\s+\*\s*(?:\w+\.)?T\s*\)", closure)
        rows = _run_names(args[0], body, m.start(), src, directory)
        if rows is None:
            return None
        inner: list[tuple[str, bool]] = []
        brace = closure.find("{")
        if cvar and brace >= 0 and depth < 4:
            inner_end = _match(closure, brace)
            nested = _subtests(closure[brace + 1:inner_end or len(closure)], cvar.group(1), src, directory, flags,
                               depth + 1)
            if nested is None:
                return None
            inner = nested
        skip_rows = _closure_skips(closure, cvar.group(1) if cvar else var, rows, flags)
        found.extend((subtest_name(name), skipped, inner) for (name, _), skipped in zip(rows, skip_rows))
    names: list[tuple[str, bool]] = []
    for name, (_, skipped, inner) in zip(unique_names([n for n, _, _ in found]), found):
        names.append((name, skipped))
        if not skipped:
            names.extend((f"{name}/{sub}", sub_skipped) for sub, sub_skipped in inner)
    return names


def _blank_literals(text: str) -> str:
    """``text`` with strings and comments blanked (same length), for searching code."""
    out = list(text)
    i = 0
    while i < len(text):
        j = _skip_literal(text, i)
        if j != i:
            for k in range(i, min(j, len(text))):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        else:
            i += 1
    return "".join(out)


def _run_names(arg: str, body: str, at: int, src: GoSources, directory: str) -> list[tuple[str, dict]] | None:
    """The names a ``t.Run(arg, ...)`` call produces, with each table row's
    literal fields (for skip conditions)."""
    lit = _go_string(arg)
    if lit is not None:
        return [(lit, {})]
    m = re.fullmatch(r"(?P<base>\w+)(?:\.(?P<field>\w+))?", arg.strip())
    if m is None:
        return None
    loop = brace = None
    for lm in RANGE.finditer(_blank_literals(body), 0, at):
        b = _loop_brace(body, lm.end())
        close = _match(body, b) if b is not None else None
        if b is not None and close is not None and b < at < close:
            loop, brace = lm, b  # the innermost loop around the call
    if loop is None or brace is None:
        return None
    expr = body[loop.end():brace].strip()
    table = _table(expr, body, src, directory)
    if table is None:
        return None
    key, val = loop.group("k"), loop.group("v")
    base, fld = m.group("base"), m.group("field")
    rows: list[tuple[str, dict]] = []
    for row_key, row in table:
        if base == key and fld is None and val is not None:
            name = row_key  # map key
        elif base == (val if val is not None else key) and fld is None:
            name = row if isinstance(row, str) else None
        elif base == (val if val is not None else key) and isinstance(row, dict):
            name = row.get(fld) if isinstance(row.get(fld), str) else None
        else:
            name = None
        if not isinstance(name, str):
            return None
        rows.append((name, {"__key__": row_key, "__val__": row, **(row if isinstance(row, dict) else {})}))
    return rows


def _loop_brace(body: str, start: int) -> int | None:
    """The ``{`` opening a for loop's body: after the range expression, which
    may itself be a composite literal (``[]struct{...}{...}``)."""
    i = start
    while i < len(body) and body[i] in " \t":
        i += 1
    literal = body.startswith(("[", "map["), i)
    while i < len(body):
        j = _skip_literal(body, i)
        if j != i:
            i = j
            continue
        c = body[i]
        if c == "{":
            if literal:
                # a struct type's braces, then the literal's own
                end = _match(body, i)
                if end is None:
                    return None
                if not re.search(r"(?:struct|interface)\s*$", body[start:i]):
                    literal = False
                i = end + 1
                continue
            return i
        if c in "([":
            end = _match(body, i)
            if end is None:
                return None
            i = end + 1
            continue
        if c == "\n" and not literal:
            return None
        i += 1
    return None


def _table(expr: str, body: str, src: GoSources, directory: str) -> list[tuple[str | None, object]] | None:
    """Rows of the composite literal a range expression names: (map key or
    None, a string or a {field: literal} dict)."""
    expr = expr.strip()
    if "{" in expr:
        return _literal_rows(expr, src, directory)
    name = re.fullmatch(r"(?P<name>\w+)(?P<call>\(\s*\))?", expr)
    if name is None:
        return None
    ident = name.group("name")
    if name.group("call"):
        code = src.package_funcs(directory)
        fm = re.search(rf"^func\s+{re.escape(ident)}\s*\(\s*\)[^{{\n]*\{{", code, re.M)
        if fm is None:
            return None
        end = _match(code, fm.end() - 1)
        ret = re.search(r"\breturn\s+", code[fm.end():end or len(code)])
        if ret is None:
            return None
        return _literal_rows(code[fm.end() + ret.end():end], src, directory)
    decl = re.compile(rf"(?:\b{re.escape(ident)}\s*:=|\bvar\s+{re.escape(ident)}(?:\s+[^=\n]+)?\s*=|"
                      rf"^\s*{re.escape(ident)}\s*=)\s*", re.M)
    for text in (body, src.package_funcs(directory)):
        dm = decl.search(_blank_literals(text))
        if dm is not None:
            return _literal_rows(text[dm.end():], src, directory)
    return None


def _literal_rows(text: str, src: GoSources, directory: str) -> list[tuple[str | None, object]] | None:
    """Parse ``[]T{...}`` / ``map[K]V{...}`` / ``[]string{...}`` at the start of ``text``."""
    text = text.lstrip()
    brace = None
    i = 0
    while i < len(text):  # the type, then the literal's brace
        c = text[i]
        if c == "{":
            if re.search(r"struct\s*$", text[:i]) or re.search(r"interface\s*$", text[:i]):
                end = _match(text, i)
                if end is None:
                    return None
                i = end + 1
                continue
            brace = i
            break
        if c in "\n;" or c == "(":
            return None
        if c == "[":
            end = _match(text, i)
            if end is None:
                return None
            i = end + 1
            continue
        i += 1
    if brace is None:
        return None
    typ = text[:brace].strip()
    end = _match(text, brace)
    if end is None:
        return None
    fields = _struct_fields(typ, src, directory)
    rows: list[tuple[str | None, object]] = []
    is_map = typ.startswith("map[")
    for elem in _split_top(text[brace + 1:end]):
        key = None
        if is_map:
            parts = _split_top(elem, ":")
            key = _go_string(parts[0]) if len(parts) >= 2 else None
            if key is None:
                return None
            elem = ":".join(parts[1:])
        elem = re.sub(r"^&?[\w.]*\s*(?=\{)", "", elem.strip())
        if elem.startswith("{"):
            inner_end = _match(elem, 0)
            if inner_end is None:
                return None
            values = _split_top(elem[1:inner_end])
            row: dict[str, object] = {}
            for pos, v in enumerate(values):
                kv = _split_top(v, ":")
                if len(kv) == 2 and re.fullmatch(r"\w+", kv[0]):
                    row[kv[0]] = _go_value(kv[1])
                elif fields and pos < len(fields):
                    row[fields[pos]] = _go_value(v)
            rows.append((key, row))
        else:
            rows.append((key, _go_string(elem)))
    return rows


def _struct_fields(typ: str, src: GoSources, directory: str) -> list[str]:
    """Field names, in order, of the element type of ``[]struct{...}`` / ``[]T``."""
    m = re.search(r"struct\s*\{", typ)
    if m is None:
        tm = re.search(r"([A-Za-z_]\w*)\s*$", typ)
        if tm is None:
            return []
        code = src.package_funcs(directory)
        dm = re.search(rf"\btype\s+{re.escape(tm.group(1))}\s+struct\s*\{{", code)
        if dm is None:
            return []
        typ, m = code[dm.start():], re.search(r"struct\s*\{", code[dm.start():])
        assert m is not None
    end = _match(typ, m.end() - 1)
    if end is None:
        return []
    names: list[str] = []
    for decl in re.split(r"[;\n]", _strip_comments(typ[m.end():end])):
        decl = decl.strip()
        if not decl:
            continue
        fm = re.match(r"^((?:\w+\s*,\s*)*\w+)\s+\S", decl)
        if fm:
            names.extend(n.strip() for n in fm.group(1).split(","))
        else:
            names.append(decl.split(".")[-1].lstrip("*"))  # embedded field
    return names


def _closure_skips(closure: str, var: str, rows: list[tuple[str, dict]], flags: GoTestFlags) -> list[bool]:
    """Per row: does the subtest's body skip? Handles an unconditional
    ``t.Skip`` and ``if <row value> == "lit" { t.Skip }`` / ``if tc.skip``."""
    brace = closure.find("{")
    end = _match(closure, brace) if brace >= 0 else None
    if end is None:
        return [False] * len(rows)
    body = closure[brace + 1:end]
    if _skips(body, var, flags) is not None:
        return [True] * len(rows)
    out = []
    skip = re.compile(SKIP_CALL.format(var=re.escape(var)))
    conds = []
    for m in re.finditer(r"\bif\s+(?P<cond>[^{]+)\{", _blank_literals(body)):
        inner_end = _match(body, m.end() - 1)
        if inner_end is not None and skip.search(_strip_comments(body[m.end():inner_end])):
            conds.append(body[m.start("cond"):m.end("cond")].strip())
    for _, row in rows:
        out.append(any(_row_condition(c, row) for c in conds))
    return out


def _row_condition(cond: str, row: dict) -> bool:
    if m := re.fullmatch(r"(?P<neg>!?)\s*\w+\.(?P<f>\w+)", cond):
        val = row.get(m.group("f"))
        return isinstance(val, bool) and val != bool(m.group("neg"))
    if m := re.fullmatch(r'(?P<lhs>\w+(?:\.\w+)?)\s*(?P<op>==|!=)\s*(?P<rhs>"(?:[^"\\]|\\.)*")', cond):
        lhs = m.group("lhs")
        val = row.get(lhs.split(".", 1)[1]) if "." in lhs else row.get("__val__") if isinstance(
            row.get("__val__"), str) else row.get("__key__")
        if not isinstance(val, str):
            return False
        return (val == _go_string(m.group("rhs"))) == (m.group("op") == "==")
    return False
