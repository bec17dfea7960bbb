"""Java helpers shared by the JUnit console launcher and Maven Surefire parsers.

Both frameworks name tests by class and method (``com.acme.OrderTest#total``)
and print Java stack traces and ``javac`` errors, so this module holds what
they share:

* ``JavaSources``: where a class lives in the project (nested classes
  ``Outer$Inner`` live in ``Outer.java``), where a test method is declared,
  which tests a class declares (for tests that never started because their
  class failed), and which class or method carries a ``@DisplayName``;
* ``CompileErrors``: ``javac`` (``File.java:12: error: ...``) and
  maven-compiler-plugin (``[ERROR] /x/File.java:[12,5] ...``) errors turned
  into one errored entry per source file;
* small readers for exception text: the key line(s) of a stack trace, stack
  frames, timeouts and assumption failures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..junit_xml import JUnitCase
from ..locate import Location, SourceIndex
from ..models import Status, TestResult

SOURCE_SUFFIXES = (".java", ".kt", ".groovy")

# "\tat com.acme.OrderTest.total(OrderTest.java:12)", with an optional module or
# class-loader prefix ("java.base/", "app//").
FRAME_RE = re.compile(
    r"^\s*at\s+(?:[\w.$-]*/+)?(?P<cls>[\w.$]+)\.(?P<meth>[\w$<>]+)\((?P<src>[^:)]*)(?::(?P<line>\d+))?\)"
)
# The start of a stack trace inside exception text: a frame, a "Caused by:" or "Suppressed:" line.
STACK_START_RE = re.compile(r"^\s*(?:at\s+\S+\(|Caused by: |Suppressed: |\.\.\. \d+ more|\[\.\.\.\])")
TIMEOUT_TYPES = (
    "java.util.concurrent.TimeoutException",
    "org.junit.runners.model.TestTimedOutException",
    "org.junit.jupiter.api.AssertTimeoutPreemptively$ExecutionTimeoutException",
)
# @Timeout ("x() timed out after 500 milliseconds"), assertTimeoutPreemptively
# ("execution timed out after 50 ms"), assertTimeout ("execution exceeded timeout
# of 10 ms by 91 ms"), JUnit 4 @Test(timeout) ("test timed out after 50 milliseconds").
TIMEOUT_MSG_RE = re.compile(r"\btimed out after \d+|\bexceeded timeout of \d+")
ABORT_TYPES_RE = re.compile(
    r"^(?:org\.opentest4j\.Test(?:Aborted|Skipped)Exception"
    r"|org\.junit\.(?:internal\.)?AssumptionViolatedException|org\.testng\.SkipException)\b"
)

PACKAGE_RE = re.compile(r"^\s*package\s+([\w.]+)\s*;?")
DISPLAY_NAME_RE = re.compile(r'@DisplayName\(\s*"((?:[^"\\]|\\.)*)"\s*\)')
TEST_ANNOTATION_RE = re.compile(
    r"@(?:org\.junit\.(?:jupiter\.api\.|jupiter\.params\.)?)?"
    r"(?P<kind>Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b(?!\w)"
)
NESTED_ANNOTATION_RE = re.compile(r"@(?:org\.junit\.jupiter\.api\.)?Nested\b")
METHOD_NAME_RE = re.compile(r"\b(?:fun\s+`?)?(?P<name>[A-Za-z_$][\w$]*)`?\s*\(")
# A method declaration: annotations, modifiers, then "Type name(" or Kotlin "fun name(".
DECL_RE = re.compile(
    r"^\s*(?:@[\w.]+(?:\((?:[^()]|\([^()]*\))*\))?\s+)*"
    r"(?:(?:public|protected|private|static|final|abstract|synchronized|default|native|strictfp"
    r"|override|suspend|internal|open)\s+)*"
    r"(?:fun\s+(?:<[^>]*>\s*)?(?:`(?P<kq>[^`]+)`|(?P<kname>[\w$]+))\s*\("
    r"|(?:<[^>]*>\s+)?(?P<type>[\w$.]+(?:<.*?>)?(?:\[\])*)\s+(?P<name>[A-Za-z_$][\w$]*)\s*\()"
)
METHOD_SPLIT_RE = re.compile(r"[({\[]")
NOT_A_TYPE = {"return", "new", "throw", "else", "case", "yield", "assert", "await", "package", "import"}
JAVA_KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "new", "synchronized", "super", "this"}
MODIFIERS = {
    "public", "protected", "private", "static", "final", "abstract", "synchronized", "default",
    "native", "strictfp", "transient", "volatile",
}

# javac: "src/x/Order.java:39: error: incompatible types: ..."
JAVAC_ERROR_RE = re.compile(r"^(?P<file>\S[^:]*\.(?:java|kt)):(?P<line>\d+): error: (?P<msg>.*)$")
JAVAC_COUNT_RE = re.compile(r"^\d+ errors?$")
# maven-compiler-plugin: "[ERROR] /abs/x/Order.java:[39,37] incompatible types: ..."
MAVEN_COMPILE_RE = re.compile(
    r"^\[ERROR\]\s+(?P<file>\S.*?\.(?:java|kt|groovy)):\[(?P<line>\d+)(?:,(?P<col>\d+))?\]\s*(?P<msg>.*)$"
)


def exception_head(text: str | None) -> str | None:
    """The key line(s) of an exception text: everything before the first stack frame
    (multi-line messages keep all their lines)."""
    if not text:
        return None
    head: list[str] = []
    for line in text.strip("\n").splitlines():
        if STACK_START_RE.match(line):
            break
        head.append(line)
    result = "\n".join(head).strip()
    return result or None


def exception_type(head: str | None) -> str | None:
    """The exception class name that starts ``head`` (``java.lang.X: msg`` -> ``java.lang.X``)."""
    if not head:
        return None
    m = re.match(r"^([\w$]+(?:\.[\w$]+)+)(?::|$|\s)", head.strip())
    return m.group(1) if m else None


def is_timeout(etype: str | None, message: str | None) -> bool:
    """Whether an exception is a test timeout (JUnit 5 @Timeout, assertTimeout*, JUnit 4 timeout)."""
    if etype and etype.rstrip(":") in TIMEOUT_TYPES:
        return True
    return bool(message and TIMEOUT_MSG_RE.search(message))


def xml_failure(case: JUnitCase) -> tuple[str | None, bool]:
    """A JUnit XML ``<failure>``/``<error>``'s message (``Type: message``, else
    the key lines of its trace, else its type) and whether it is a timeout."""
    etype = (case.type or "").rstrip(":") or None
    if case.message:
        message = f"{etype}: {case.message}" if etype else case.message
    else:
        message = exception_head(case.text) or etype
    return message, is_timeout(etype, case.message)


def is_abort(head: str | None) -> bool:
    """Whether exception text is an assumption failure (a test that aborted, not failed)."""
    return bool(head and ABORT_TYPES_RE.match(head.strip()))


def frames(text: str | None) -> Iterable[re.Match[str]]:
    """Stack frames of an exception text, outermost exception first."""
    for line in (text or "").splitlines():
        m = FRAME_RE.match(line)
        if m:
            yield m


def short_type(etype: str) -> str:
    """Surefire's short exception name: simple name without ``Exception``/``Error``."""
    name = etype.rstrip(":").rsplit(".", 1)[-1].rsplit("$", 1)[-1]
    for suffix in ("Exception", "Error"):
        if name.endswith(suffix) and name != suffix:
            return name[: -len(suffix)]
    return name


def simple_type(jvm_type: str) -> str:
    """A parameter type as ``Class.getSimpleName()`` prints it, from the fully
    qualified or JVM form a unique id or MethodSource uses (``[I`` -> ``int[]``)."""
    t = jvm_type.strip()
    dims = 0
    while t.startswith("["):
        dims += 1
        t = t[1:]
    if dims:
        prims = {"I": "int", "J": "long", "Z": "boolean", "B": "byte", "C": "char", "S": "short",
                 "F": "float", "D": "double"}
        t = prims.get(t, t[1:-1] if t.startswith("L") and t.endswith(";") else t)
    while t.endswith("[]"):
        dims += 1
        t = t[:-2]
    t = t.rsplit(".", 1)[-1].rsplit("$", 1)[-1]
    return t + "[]" * dims


def simple_params(params: str) -> str:
    """``java.lang.String, int`` -> ``String, int`` (the legacy reporting form)."""
    if not params.strip():
        return ""
    return ", ".join(simple_type(p) for p in params.split(","))


def method_of(test_name: str) -> str:
    """The Java method behind a reported test name: ``discountTable(int)[2]``,
    ``discountTable{int}[2]``, ``same[0]`` and ``total`` -> the bare method name."""
    return METHOD_SPLIT_RE.split(test_name, maxsplit=1)[0].strip()


def _unescape_java(s: str) -> str:
    def repl(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc.startswith("u"):
            return chr(int(esc[1:], 16))
        return {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0"}.get(esc, esc)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", repl, s)


@dataclass
class DeclaredTest:
    """A test declared in source: its class, legacy name (``name(Types)``) and line."""

    klass: str
    name: str
    method: str
    line: int


@dataclass
class _ClassSpan:
    name: str  # binary name: com.acme.Outer$Inner
    file: str
    start: int  # 0-based line of the declaration
    end: int  # 0-based line of the closing brace (inclusive)
    nested: bool = False
    children: list[str] = field(default_factory=list)


class JavaSources:
    """Answers where Java classes and test methods are declared in a project.

    Lookups are cached; everything degrades to ``None``/empty when the
    sources are not there (a parser must still work on output alone).
    """

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self._class_files: dict[str, str | None] = {}
        self._spans: dict[str, dict[str, _ClassSpan]] = {}
        self._decls: dict[str, list[tuple[int, str]]] = {}
        self._all_decls: dict[str, list[tuple[str, int]]] | None = None
        self._all_classes: dict[str, list[str]] | None = None
        self._display_methods: dict[str, dict[str, tuple[str, str]]] = {}
        self._method_hits: dict[tuple[str, str], tuple[str, int] | None] = {}

    # -- classes -------------------------------------------------------------

    def class_file(self, klass: str) -> str | None:
        """The source file declaring ``klass`` (a nested class's outer file)."""
        outer = klass.split("$", 1)[0]
        if outer in self._class_files:
            return self._class_files[outer]
        found: str | None = None
        parts = outer.split(".")
        simple = parts[-1]
        files = self.index.files(SOURCE_SUFFIXES)
        suffixes = ["/".join(parts) + sfx for sfx in SOURCE_SUFFIXES]
        by_path = [f for f in files if any(f == s or f.endswith("/" + s) for s in suffixes)]
        if by_path:
            found = sorted(by_path, key=lambda f: ("/test/" not in "/" + f, len(f)))[0]
        else:
            # A non-public class may live in a file of another name: find its
            # declaration in a file of the right package.
            pkg = ".".join(parts[:-1])
            found = next((f for f in self._project_classes().get(simple, []) if self._package(f) == pkg), None)
        self._class_files[outer] = found
        return found

    def _project_classes(self) -> dict[str, list[str]]:
        """Simple class name -> files declaring it (built once)."""
        if self._all_classes is None:
            self._all_classes = {}
            decl = re.compile(r"(?<![.\w@])(?:class|interface|enum|record|object)\s+([A-Za-z_$][\w$]*)")
            for rel in self.index.files(SOURCE_SUFFIXES):
                for line in self.index.lines(rel):
                    for m in decl.finditer(_strip_code(line)):
                        self._all_classes.setdefault(m.group(1), []).append(rel)
        return self._all_classes

    def _package(self, rel: str) -> str:
        for line in self.index.lines(rel)[:200]:
            m = PACKAGE_RE.match(line)
            if m:
                return m.group(1)
        return ""

    def _class_spans(self, rel: str) -> dict[str, _ClassSpan]:
        """Every class declared in a file, by binary name, with its line span."""
        if rel in self._spans:
            return self._spans[rel]
        spans: dict[str, _ClassSpan] = {}
        lines = self.index.lines(rel)
        pkg = self._package(rel)
        stack: list[tuple[_ClassSpan, int]] = []  # (span, brace depth at which its body opened)
        depth = 0
        pending: tuple[str, int, bool] | None = None  # class name seen, body brace not yet
        nested_mark = False
        decl = re.compile(r"(?<![.\w@])(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)")
        in_comment = False
        for i, raw in enumerate(lines):
            line, in_comment = _strip_comments(_strip_code(raw), in_comment)
            if NESTED_ANNOTATION_RE.search(raw):
                nested_mark = True
            m = decl.search(line)
            if m and pending is None:
                pending = (m.group(1), i, nested_mark)
                nested_mark = False
            for ch in line:
                if ch == "{":
                    depth += 1
                    if pending is not None:
                        name, start, is_nested = pending
                        parent = stack[-1][0].name if stack else None
                        full = f"{parent}${name}" if parent else (f"{pkg}.{name}" if pkg else name)
                        span = _ClassSpan(full, rel, start, len(lines) - 1, nested=is_nested)
                        spans[full] = span
                        if parent:
                            spans[parent].children.append(full)
                        stack.append((span, depth))
                        pending = None
                elif ch == "}":
                    if stack and stack[-1][1] == depth:
                        stack[-1][0].end = i
                        stack.pop()
                    depth -= 1
        self._spans[rel] = spans
        return spans

    def class_span(self, klass: str) -> _ClassSpan | None:
        rel = self.class_file(klass)
        if rel is None:
            return None
        return self._class_spans(rel).get(klass)

    def class_line(self, klass: str) -> tuple[str, int] | None:
        """(file, 1-based line) of the class declaration."""
        span = self.class_span(klass)
        if span is not None:
            return span.file, span.start + 1
        rel = self.class_file(klass)
        return (rel, 1) if rel else None

    def resolve_class(self, display: str, outer: str | None = None) -> str | None:
        """The binary class name for a class display name (simple name or
        ``@DisplayName``), nested in ``outer`` when given."""
        if outer is not None:
            span = self.class_span(outer)
            if span is None:
                return None
            for child in span.children:
                if child.rsplit("$", 1)[-1] == display:
                    return child
            for child in span.children:
                if self._display_of_class(self._class_spans(span.file)[child]) == display:
                    return child
            return None
        if re.fullmatch(r"[\w$]+(?:\.[\w$]+)+", display) and self.class_file(display):
            return display
        files = self.index.files(SOURCE_SUFFIXES)
        if re.fullmatch(r"[A-Za-z_$][\w$]*", display):
            exact = [f for f in files if f.rsplit("/", 1)[-1].rsplit(".", 1)[0] == display]
            exact.sort(key=lambda f: ("/test/" not in "/" + f, len(f)))
            for f in exact:
                for name, span in self._class_spans(f).items():
                    if "$" not in name and name.rsplit(".", 1)[-1] == display:
                        return name
        for f in files:
            for name, span in self._class_spans(f).items():
                if "$" not in name and self._display_of_class(span) == display:
                    return name
        return None

    def _display_of_class(self, span: _ClassSpan) -> str | None:
        lines = self.index.lines(span.file)
        for i in range(span.start, max(-1, span.start - 6), -1):
            m = DISPLAY_NAME_RE.search(lines[i]) if i < len(lines) else None
            if m:
                return _unescape_java(m.group(1))
            if i != span.start and lines[i].strip().endswith(("}", ";")):
                break
        return None

    # -- methods -------------------------------------------------------------

    def method_line(self, klass: str, method: str) -> tuple[str, int] | None:
        """(file, 1-based line) where ``method`` of ``klass`` is declared.

        The class's own span first (nested classes with equally named methods
        resolve right), then its file, then (inherited test methods) the one
        project file that declares it. Declarations are indexed once per file,
        so a report with many thousands of tests stays fast."""
        key = (klass, method)
        if key in self._method_hits:
            return self._method_hits[key]
        hit: tuple[str, int] | None = None
        rel = self.class_file(klass)
        if rel is not None:
            lines_of = [ln for ln, name in self._declarations(rel) if name == method]
            span = self._class_spans(rel).get(klass)
            inside = [ln for ln in lines_of if span is not None and span.start <= ln - 1 <= span.end]
            if inside or lines_of:
                hit = rel, (inside or lines_of)[0]
        if hit is None:
            found = self._project_declarations().get(method, [])
            if len({f for f, _ in found}) == 1:
                hit = found[0]
        self._method_hits[key] = hit
        return hit

    def _declarations(self, rel: str) -> list[tuple[int, str]]:
        """(1-based line, method name) of every method declaration in a file."""
        if rel not in self._decls:
            out: list[tuple[int, str]] = []
            for i, raw in enumerate(self.index.lines(rel)):
                m = DECL_RE.match(_strip_code(raw))
                if m is None:
                    continue
                name = m.group("kq") or m.group("kname") or m.group("name")
                if m.group("type") in NOT_A_TYPE or name in JAVA_KEYWORDS:
                    continue
                out.append((i + 1, name))
            self._decls[rel] = out
        return self._decls[rel]

    def _project_declarations(self) -> dict[str, list[tuple[str, int]]]:
        if self._all_decls is None:
            self._all_decls = {}
            for rel in self.index.files(SOURCE_SUFFIXES):
                for line, name in self._declarations(rel):
                    self._all_decls.setdefault(name, []).append((rel, line))
        return self._all_decls

    def locate_test(self, klass: str, test_name: str) -> tuple[str | None, int | None]:
        """File and line of a test reported as ``klass`` + ``test_name``
        (method name, legacy name or display name)."""
        method = method_of(test_name)
        if method and re.fullmatch(r"[A-Za-z_$][\w$]*", method):
            hit = self.method_line(klass, method)
            if hit:
                return hit
        found = self.method_for_display(klass, test_name)
        if found:
            hit = self.method_line(klass, found[0])
            if hit:
                return hit
        cl = self.class_line(klass)
        if cl:
            return cl[0], None
        return None, None

    def method_for_display(self, klass: str, display: str) -> tuple[str, str] | None:
        """(method name, legacy name ``name(Types)``) of the method of ``klass``
        annotated ``@DisplayName(display)``."""
        if klass not in self._display_methods:
            found: dict[str, tuple[str, str]] = {}
            span = self.class_span(klass)
            if span is not None:
                lines = self.index.lines(span.file)
                for i in range(span.start, min(span.end + 1, len(lines))):
                    m = DISPLAY_NAME_RE.search(lines[i])
                    if not m:
                        continue
                    for j in range(i, min(i + 8, len(lines))):
                        sig = _signature_at(lines, j)
                        if sig:
                            found.setdefault(_unescape_java(m.group(1)), sig)
                            break
            self._display_methods[klass] = found
        return self._display_methods[klass].get(display)

    def declared_tests(self, klass: str) -> list[DeclaredTest]:
        """Tests ``klass`` declares, as the JUnit Platform names them before they
        run: ``@Test`` methods and the not-yet-expanded parameterized, repeated
        and factory methods, then those of its ``@Nested`` classes."""
        span = self.class_span(klass)
        if span is None:
            return []
        lines = self.index.lines(span.file)
        spans = self._class_spans(span.file)
        inner = [spans[c] for c in span.children]
        out: list[DeclaredTest] = []
        i = span.start + 1
        while i <= min(span.end, len(lines) - 1):
            child = next((c for c in inner if c.start <= i <= c.end), None)
            if child is not None:
                i = child.end + 1
                continue
            if TEST_ANNOTATION_RE.search(_strip_code(lines[i])):
                for j in range(i, min(i + 12, len(lines))):
                    sig = _signature_at(lines, j)
                    if sig:
                        out.append(DeclaredTest(klass, sig[1], sig[0], j + 1))
                        i = j
                        break
            i += 1
        for c in inner:
            if c.nested:
                out.extend(self.declared_tests(c.name))
        return out


def locate_methods(tests: Sequence[TestResult], sources: SourceIndex) -> dict[str, Location]:
    """``Parser.locate`` of the JUnit runners: a result ``pkg.Class#test``
    (its ``suite`` the class; the test a method name, a legacy
    ``method(Types)`` name or a display name) is the method in the class's
    source file, else the class's file."""
    java = JavaSources(sources)
    out: dict[str, Location] = {}
    for t in tests:
        klass = t.suite
        if not klass or not t.id.startswith(klass + "#"):
            continue
        file, line = java.locate_test(klass, t.id[len(klass) + 1:])
        if file is not None:
            out[t.id] = Location(file, line)
    return out


def _strip_code(line: str) -> str:
    """A source line without string literals and // comments (for brace counting)."""
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    line = re.sub(r"'(?:[^'\\]|\\.)*'", "''", line)
    return line.split("//", 1)[0]


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """Remove /* block comments */ from a line; the flag carries an open comment over."""
    out = ""
    while line:
        if in_comment:
            end = line.find("*/")
            if end < 0:
                return out, True
            line, in_comment = line[end + 2:], False
        else:
            start = line.find("/*")
            if start < 0:
                return out + line, False
            out, line, in_comment = out + line[:start], line[start + 2:], True
    return out, in_comment


def _signature_at(lines: list[str], j: int) -> tuple[str, str] | None:
    """(method, legacy name) when line ``j`` starts a method declaration."""
    code = _strip_code(lines[j])
    if code.lstrip().startswith("@") and "(" in code and not re.search(r"\)\s*[\w<]", code):
        # An annotation with arguments, not a declaration.
        rest = re.sub(r"^\s*(?:@[\w.]+(?:\((?:[^()]|\([^()]*\))*\))?\s*)+", "", code)
        if not rest.strip():
            return None
        code = rest
    m = None
    for cand in METHOD_NAME_RE.finditer(code):
        if cand.group("name") in JAVA_KEYWORDS or cand.group("name") in MODIFIERS:
            continue
        before = code[: cand.start("name")].strip()
        if not before or before.endswith(("=", ".", "(", ",", "return")):
            continue
        m = cand
        break
    if m is None:
        return None
    # Collect the parameter list, possibly over several lines.
    text = code[m.end():]
    k = j
    while text.count("(") + 1 > text.count(")") and k + 1 < len(lines) and k < j + 10:
        k += 1
        text += " " + _strip_code(lines[k])
    params, depth = "", 1
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                break
        params += ch
    types = []
    for p in _split_params(params):
        p = re.sub(r"@[\w.]+(?:\([^)]*\))?\s*", "", p).replace("final ", "").strip()
        if not p:
            continue
        if ":" in p:  # Kotlin "name: Type"
            t = p.split(":", 1)[1].strip()
        else:
            t = p.rsplit(None, 1)[0] if len(p.split()) > 1 else p
        t = re.sub(r"<.*>", "", t).strip()
        if t.endswith("..."):
            t = t[:-3] + "[]"
        types.append(simple_type(t))
    name = m.group("name")
    return name, f"{name}({', '.join(types)})"


def _split_params(params: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


@dataclass
class _CompileError:
    file: str
    line: int
    text: str
    details: list[str] = field(default_factory=list)


class CompileErrors:
    """Collects javac / maven-compiler-plugin errors from streamed lines and
    turns them into one errored entry per source file (id = the file)."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self.errors: list[_CompileError] = []
        self._seen: set[tuple[str, int, str]] = set()
        self._current: _CompileError | None = None

    def feed(self, line: str) -> bool:
        """Read one ANSI-stripped output line; True when it was a compile error line."""
        m = JAVAC_ERROR_RE.match(line)
        if m:
            self._add(m.group("file"), int(m.group("line")), f"error: {m.group('msg')}", line)
            return True
        m = MAVEN_COMPILE_RE.match(line)
        if m:
            self._add(m.group("file"), int(m.group("line")), m.group("msg"), line[len("[ERROR] "):].strip())
            return True
        if self._current is not None:
            if not line.strip() or JAVAC_COUNT_RE.match(line.strip()) or line.startswith("["):
                self._current = None
            elif len(self._current.details) < 20:
                self._current.details.append(line)
        return False

    def _add(self, path: str, line: int, msg: str, raw: str) -> None:
        rel = self.index.relative(path) or path
        key = (rel, line, msg)
        if key in self._seen:  # Maven repeats every error in its failure summary
            self._current = None
            return
        self._seen.add(key)
        text = raw.replace(path, rel, 1)
        self._current = _CompileError(rel, line, text)
        self.errors.append(self._current)

    def results(self) -> list[TestResult]:
        """One errored entry per file: its first error's line, every error as message."""
        by_file: dict[str, list[_CompileError]] = {}
        for e in self.errors:
            by_file.setdefault(e.file, []).append(e)
        out = []
        for rel, errs in by_file.items():
            details = "\n".join("\n".join([e.text, *e.details]) for e in errs)
            out.append(
                TestResult(
                    id=rel,
                    status=Status.ERRORED,
                    file=rel,
                    line=errs[0].line,
                    message="\n".join(e.text for e in errs),
                    details=details,
                    native_status="compilation error",
                )
            )
        return out
