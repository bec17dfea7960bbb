"""PHP test sources, for the PHPUnit parser: test classes and their test
methods (`test*` names, `@test`/`#[Test]`), data providers with the data
set names PHPUnit gives their rows (literal arrays, `yield` keys, `#[TestWith]`),
`@testdox`/`#[TestDox]` texts and groups, read with a small PHP tokenizer;
rows that cannot be counted from the text leave the count unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..locate import SourceIndex

# ============================================================== PHP sources
PHP_TOKEN = re.compile(
    r"""(?P<ws>\s+)|(?P<comment>//[^\n]*|\#(?!\[)[^\n]*|/\*.*?\*/)"""
    r"""|(?P<sq>'(?:[^'\\]|\\.)*')|(?P<dq>"(?:[^"\\]|\\.)*")"""
    r"""|(?P<num>-?\d+(?:\.\d+)?)|(?P<id>[A-Za-z_\\][\w\\]*)|(?P<op>=>|::|\#\[|\S)""",
    re.S,
)
CLASS_DECL = re.compile(
    r"^\s*(?P<mods>(?:(?:abstract|final|readonly)\s+)*)class\s+(?P<name>\w+)(?:\s+extends\s+(?P<parent>[\w\\]+))?"
)
NAMESPACE = re.compile(r"^\s*namespace\s+(?P<ns>[\w\\]+)\s*[;{]")
METHOD_DECL = re.compile(
    r"^\s*(?P<mods>(?:(?:public|protected|private|static|final|abstract)\s+)*)function\s+&?\s*(?P<name>\w+)\s*\("
)
DATA_PROVIDER = re.compile(
    r"@dataProvider\s+(?:(?P<cls>[\w\\]+)::)?(?P<name>\w+)"
    r"|#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?DataProvider\(\s*(?:method(?:Name)?\s*:\s*)?['\"](?P<aname>\w+)['\"]"
    r"|#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?DataProviderExternal\(\s*\\?(?P<xcls>[\w\\]+)::class\s*,\s*['\"](?P<xname>\w+)['\"]"
)
TEST_WITH_ATTR = re.compile(r"#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?TestWith(?:Json)?\(")
TEST_ANNOTATION = re.compile(r"@test\b(?![\w-])|#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?Test\s*[\]\(,]")
TESTDOX_ANNOTATION = re.compile(
    r"@testdox\s+(?P<text>.+?)\s*(?:\*/)?$|#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?TestDox\(\s*(?P<q>['\"])(?P<atext>.*?)(?P=q)\s*\)"
)
GROUP_ANNOTATION = re.compile(
    r"@(?:group|ticket)\s+(?P<name>\S+)|#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?(?:Group|Ticket)\(\s*['\"](?P<aname>[^'\"]+)['\"]"
)
MAX_DATA_SETS = 10_000
MAX_TEST_FILES = 5_000


class _Unknown(Exception):
    """A data provider whose rows cannot be known without running PHP."""


@dataclass
class _Method:
    name: str
    line: int
    public: bool
    doc: str  # docblock and attributes above the method
    is_test: bool
    providers: list[tuple[str | None, str]] = field(default_factory=list)
    test_with: int = 0
    testdox: str | None = None
    groups: set[str] = field(default_factory=set)


@dataclass
class _Class:
    name: str  # fully qualified, without leading backslash
    short: str
    file: str
    line: int
    parent: str | None
    abstract: bool
    methods: list[_Method] = field(default_factory=list)
    testdox: str | None = None
    groups: set[str] = field(default_factory=set)


@dataclass
class PhpTest:
    """One test the suite would run."""

    id: str
    cls: _Class
    method: _Method
    data_set: str | None  # '#0' / '"name"' / None


def _php_string(tok_kind: str, text: str) -> str:
    body = text[1:-1]
    if tok_kind == "sq":
        return re.sub(r"\\([\\'])", r"\1", body)
    if re.search(r"(?<!\\)\$[A-Za-z_{]", body):
        raise _Unknown("interpolated string key")
    esc = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "e": "\x1b", "f": "\f", "\\": "\\", "$": "$", '"': '"', "0": "\0"}
    return re.sub(r"\\(.)", lambda m: esc.get(m.group(1), "\\" + m.group(1)), body)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in PHP_TOKEN.finditer(text):
        kind = m.lastgroup or "op"
        if kind in ("ws", "comment"):
            continue
        out.append((kind, m.group(0)))
    return out


def _matching(toks: list[tuple[str, str]], start: int) -> int:
    """Index of the bracket closing the one at ``start``."""
    pairs = {"[": "]", "(": ")", "{": "}", "#[": "]"}
    stack: list[str] = []
    for i in range(start, len(toks)):
        t = toks[i][1]
        if toks[i][0] == "op" and t in pairs:
            stack.append(pairs[t])
        elif toks[i][0] == "op" and stack and t == stack[-1]:
            stack.pop()
            if not stack:
                return i
    raise _Unknown("unbalanced brackets")


def _split_top(toks: list[tuple[str, str]], sep: str) -> list[list[tuple[str, str]]]:
    parts: list[list[tuple[str, str]]] = [[]]
    depth = 0
    for kind, t in toks:
        if kind == "op" and t in ("[", "(", "{", "#["):
            depth += 1
        elif kind == "op" and t in ("]", ")", "}"):
            depth -= 1
        if depth == 0 and kind == "op" and t == sep:
            parts.append([])
            continue
        parts[-1].append((kind, t))
    return parts


def _key_of(key: list[tuple[str, str]]) -> int | str:
    if len(key) == 1 and key[0][0] in ("sq", "dq"):
        value = _php_string(*key[0])
        # PHP turns decimal integer strings into integer keys
        if re.fullmatch(r"-?(?:0|[1-9]\d*)", value):
            return int(value)
        return value
    if len(key) == 1 and key[0][0] == "num" and "." not in key[0][1]:
        return int(key[0][1])
    raise _Unknown("computed data set key")


def _data_set_keys(elements: list[list[tuple[str, str]]]) -> list[int | str]:
    """Keys of literal array elements / yielded values (PHP's own key rules)."""
    names: dict[int | str, None] = {}
    next_int = 0
    for el in elements:
        if not el:
            continue
        if el[0][1] == ".":
            raise _Unknown("spread")
        parts = _split_top(el, "=>")
        if len(parts) > 1:
            key = _key_of(parts[0])
        else:
            key = next_int
        if isinstance(key, int):
            next_int = max(next_int, key + 1)
        names[key] = None
        if len(names) > MAX_DATA_SETS:
            raise _Unknown("too many data sets")
    return list(names)


def _data_set_names(keys: list[int | str]) -> list[str]:
    """Data set names as PHPUnit prints them: it merges the providers' rows
    so that integer keys are renumbered 0, 1, 2... and string keys are kept
    (the first position wins for a repeated one)."""
    out: dict[str, None] = {}
    n = 0
    for key in keys:
        if isinstance(key, int):
            out[f"#{n}"] = None
            n += 1
        else:
            out[f'"{key}"'] = None
    return list(out)


def _provider_rows(toks: list[tuple[str, str]]) -> list[int | str]:
    """Data set keys from a provider method's body tokens."""
    ids = {t for k, t in toks if k == "id"}
    if ids & {"foreach", "for", "while", "do", "array_map", "array_merge", "range", "array_fill", "array_combine"}:
        raise _Unknown("data built at run time")
    if "yield" in ids:
        elements: list[list[tuple[str, str]]] = []
        for stmt in _split_top(toks, ";"):
            if stmt and stmt[0] == ("id", "yield"):
                if len(stmt) > 1 and stmt[1] == ("id", "from"):
                    raise _Unknown("yield from")
                elements.append(stmt[1:])
        return _data_set_keys(elements)
    for i, (kind, t) in enumerate(toks):
        if kind == "id" and t == "return" and i + 1 < len(toks):
            nxt = toks[i + 1]
            if nxt == ("op", "["):
                end = _matching(toks, i + 1)
            elif nxt[0] == "id" and nxt[1].lower() == "array" and i + 2 < len(toks) and toks[i + 2] == ("op", "("):
                end = _matching(toks, i + 2)
                i += 1
            else:
                raise _Unknown("provider does not return a literal array")
            if end + 1 < len(toks) and toks[end + 1] != ("op", ";"):
                raise _Unknown("provider returns an expression")
            return _data_set_keys(_split_top(toks[i + 2: end], ","))
    raise _Unknown("no return")


class PhpSources:
    """Test classes and methods of the project's PHP files, parsed lazily."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self._classes: dict[str, list[_Class]] = {}
        self._by_name: dict[str, _Class] | None = None
        self._pretty_strings: dict[str, int] = {}

    def classes_in(self, rel: str) -> list[_Class]:
        """The classes declared in one PHP file."""
        if rel not in self._classes:
            self._classes[rel] = self._parse(rel)
        return self._classes[rel]

    def _parse(self, rel: str) -> list[_Class]:
        lines = self.index.lines(rel)
        ns = ""
        out: list[_Class] = []
        doc: list[str] = []
        attr_depth = 0
        cur: _Class | None = None
        for i, line in enumerate(lines):
            if m := NAMESPACE.match(line):
                ns = m["ns"].strip("\\")
            if m := CLASS_DECL.match(line):
                fq = f"{ns}\\{m['name']}" if ns else m["name"]
                text = "\n".join(doc)
                cur = _Class(name=fq, short=m["name"], file=rel, line=i + 1, parent=m["parent"],
                             abstract="abstract" in m["mods"], testdox=_testdox(text),
                             groups=_groups(text))
                out.append(cur)
                doc = []
                continue
            if (m := METHOD_DECL.match(line)) and cur is not None:
                text = "\n".join(doc)
                mods = m["mods"]
                public = "private" not in mods and "protected" not in mods
                name = m["name"]
                meth = _Method(name=name, line=i + 1, public=public, doc=text,
                               is_test=public and (name.startswith("test") or bool(TEST_ANNOTATION.search(text))))
                for p in DATA_PROVIDER.finditer(text):
                    if p["name"]:
                        meth.providers.append((p["cls"], p["name"]))
                    elif p["aname"]:
                        meth.providers.append((None, p["aname"]))
                    else:
                        meth.providers.append((p["xcls"], p["xname"]))
                meth.test_with = len(TEST_WITH_ATTR.findall(text)) or _test_with_rows(text)
                meth.testdox = _testdox(text)
                meth.groups = _groups(text)
                if "static" in mods and meth.is_test and not name.startswith("test"):
                    meth.is_test = False
                cur.methods.append(meth)
                doc = []
                continue
            stripped = line.strip()
            if attr_depth > 0 or stripped.startswith("#["):
                # attributes may span lines: follow their brackets
                attr_depth = max(0, attr_depth + stripped.count("[") - stripped.count("]"))
                doc.append(stripped)
            elif stripped.startswith(("/**", "*", "*/")):
                doc.append(stripped)
            elif stripped:
                doc = []
        return out

    def by_name(self, name: str) -> _Class | None:
        """A class by its (fully qualified or short) name, anywhere in the project."""
        if self._by_name is None:
            self._by_name = {}
            for rel in self.index.files([".php"]):
                for c in self.classes_in(rel):
                    self._by_name.setdefault(c.name, c)
                    self._by_name.setdefault(c.short, c)
        name = name.lstrip("\\")
        return self._by_name.get(name) or self._by_name.get(name.rsplit("\\", 1)[-1])

    def test_methods(self, cls: _Class, depth: int = 0) -> list[_Method]:
        """Test methods in reflection order: the class's own, then inherited ones."""
        own = [m for m in cls.methods if m.is_test]
        if depth > 5 or not cls.parent or cls.parent.rsplit("\\", 1)[-1] == "TestCase":
            return own
        parent = self.by_name(cls.parent)
        if parent is None or parent is cls:
            return own
        names = {m.name.lower() for m in cls.methods}
        return own + [m for m in self.test_methods(parent, depth + 1) if m.name.lower() not in names]

    def data_sets(self, cls: _Class, meth: _Method) -> list[str] | None:
        """Data set names of a test method, [] when it takes none, None when unknown."""
        if not meth.providers:
            return [f"#{i}" for i in range(meth.test_with)]
        keys: list[int | str] = []
        for pcls, pname in meth.providers:
            owner = self.by_name(pcls) if pcls else cls
            rows = self._provider(owner, pname) if owner is not None else None
            if rows is None:
                return None
            keys.extend(rows)
        return _data_set_names(keys)

    def _provider(self, cls: _Class, name: str, depth: int = 0) -> list[int | str] | None:
        for meth in cls.methods:
            if meth.name.lower() == name.lower():
                lines = self.index.lines(cls.file)
                toks = _tokens("\n".join(lines[meth.line - 1:]))
                try:
                    start = next(i for i, t in enumerate(toks) if t == ("op", "{"))
                    end = _matching(toks, start)
                    return _provider_rows(toks[start + 1: end])
                except (_Unknown, StopIteration):
                    return None
        if cls.parent and depth < 5 and (parent := self.by_name(cls.parent)) is not None and parent is not cls:
            return self._provider(parent, name, depth + 1)
        return None

    def body_calls(self, cls: _Class, meth: _Method) -> set[str]:
        """Names called in a method's body (identifiers followed by ``(``)."""
        toks = _tokens("\n".join(self.index.lines(cls.file)[meth.line - 1:]))
        try:
            start = next(i for i, t in enumerate(toks) if t == ("op", "{"))
            body = toks[start + 1: _matching(toks, start)]
        except (_Unknown, StopIteration):
            return set()
        return {t for (k, t), nxt in zip(body, body[1:]) if k == "id" and nxt == ("op", "(")}

    def pretty_method(self, name: str) -> str:
        """PHPUnit's ``NamePrettifier::prettifyTestMethodName`` (stateful like PHPUnit's)."""
        if not name:
            return ""
        string = name.rstrip("0123456789")
        if string in self._pretty_strings:
            name = string
        elif string == name:
            self._pretty_strings[string] = 1
        if name.startswith("test_"):
            name = name[5:]
        elif name.startswith("test"):
            name = name[4:]
        if not name:
            return ""
        name = name[0].upper() + name[1:]
        if "_" in name:
            return name.replace("_", " ").strip()
        buf = []
        was_numeric = False
        for i, ch in enumerate(name):
            if i > 0 and "A" <= ch <= "Z":
                buf.append(" " + ch.lower())
            else:
                is_numeric = "0" <= ch <= "9"
                if not was_numeric and is_numeric:
                    buf.append(" ")
                    was_numeric = True
                if was_numeric and not is_numeric:
                    was_numeric = False
                buf.append(ch)
        return "".join(buf)


def pretty_class(name: str) -> str:
    """PHPUnit's ``NamePrettifier::prettifyTestClassName`` (without annotations)."""
    parts = name.lstrip("\\").split("\\")
    short = parts.pop()
    if short.endswith("Test"):
        short = short[:-4]
    if short.startswith("Tests"):
        short = short[5:]
    elif short.startswith("Test"):
        short = short[4:]
    if not short:
        short = "UnnamedTests"
    fq = "\\".join([*parts, short]) if parts else short
    result = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", short)
    return f"{result} ({fq})" if fq != short else result


def _testdox(doc: str) -> str | None:
    m = TESTDOX_ANNOTATION.search(doc)
    if not m:
        return None
    return (m["text"] or m["atext"] or "").strip() or None


def _groups(doc: str) -> set[str]:
    return {m["name"] or m["aname"] for m in GROUP_ANNOTATION.finditer(doc)}


def _test_with_rows(doc: str) -> int:
    rows = 0
    inside = False
    for line in doc.splitlines():
        text = line.strip().lstrip("/*").strip()
        if text.startswith("@testWith"):
            inside = True
            text = text[len("@testWith"):].strip()
            if text:
                rows += 1
            continue
        if inside:
            if not text or text.startswith("@"):
                inside = False
            else:
                rows += 1
    return rows
