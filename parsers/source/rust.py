"""Rust sources, for the cargo test parser: packages and their targets
(test binaries), the #[test] functions each target's files define with their
module paths and #[ignore] reasons, and doc-test fences (rustdoc names a doc
test by file, item and line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..locate import SourceIndex

# #[test], #[tokio::test], #[test_log::test]...: macros that keep the fn's name as the test name
# (rstest/test_case generate other names and are found by their fn only when they fail).
TEST_ATTR = re.compile(r"#\[\s*(?:[\w:]+::)?test\s*(?:\]|\()")
IGNORE_ATTR = re.compile(r"#\[\s*ignore\b(?:\s*=\s*\"(?P<reason>[^\"]*)\")?")
PATH_ATTR = re.compile(r'#\[\s*path\s*=\s*"(?P<path>[^"]+)"\s*\]')
FN_DEF = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern(?:\s+\"\w+\")?)\s+)*fn\s+"
                    r"(?P<name>r#\w+|\w+)")
MOD_DEF = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(?P<name>r#\w+|\w+)\s*(?P<end>[;{])")
IMPL_DEF = re.compile(r"^\s*(?:unsafe\s+)?impl\b(?:\s*<[^{]*?>)?\s+(?:(?P<trait>[^{]+?)\s+for\s+)?(?P<ty>[^{]+?)\s*"
                      r"(?:where\b[^{]*)?\{?\s*$")
TRAIT_DEF = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait\s+(?P<name>\w+)")
ITEM_DEF = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern(?:\s+\"\w+\")?|default)\s+)*"
                      r"(?:fn|struct|enum|union|trait|type|mod|const|static|macro_rules!)\s+(?P<name>r#\w+|\w+)")
DOC_LINE = re.compile(r"^\s*//(?P<kind>[/!])(?!/)\s?(?P<text>.*)$")
FENCE = re.compile(r"^\s*(?P<fence>```+|~~~+)\s*(?P<info>[^`]*)$")
DOC_ID = re.compile(r"^(?P<file>.+?\.rs) - (?P<item>.*?)\s?\(line (?P<line>\d+)\)(?: - .*)?$")
RAW_START = re.compile(r'b?r(#*)"')
NOT_RUST_FENCE = {"text", "console", "sh", "bash", "shell", "json", "toml", "yaml", "txt", "plain", "c", "cpp",
                  "python", "js", "javascript", "html", "xml", "sql", "diff", "ignore-text", "mermaid", "ini"}
CHAR_LIT = re.compile(r"b?'(?:[^'\\]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.))'")


@dataclass
class TestBinary:
    """One test binary cargo ran, as its ``Running``/``Doc-tests`` line says."""

    label: str  # "unittests src/lib.rs", "tests/x.rs", "doc-tests"
    crate: str | None = None  # from the executable name or the Doc-tests line
    path: str | None = None  # the target's root source, relative to its package

    @property
    def doc(self) -> bool:
        return self.label == "doc-tests"

    @property
    def integration(self) -> bool:
        return self.path is not None and self.path.startswith("tests/")


@dataclass
class RustTest:
    id: str
    file: str
    line: int
    ignored: bool = False
    reason: str | None = None


class RustSources:
    """The Rust sources of the project: packages, and per target the tests its
    files define (``#[test]`` functions with module paths, doc-test fences)."""

    def __init__(self, index: SourceIndex) -> None:
        self.index = index
        self._packages: dict[str, str] | None = None
        self._defs: dict[str, list[RustTest]] = {}
        self._fns: dict[str, list[tuple[str, int]]] | None = None
        self._files_of: dict[str, set[str]] = {}

    def packages(self) -> dict[str, str]:
        """Crate name (underscored) -> package directory ('' for the root)."""
        if self._packages is None:
            found: dict[str, str] = {}
            for rel in self.index.files([".toml"]):
                if PurePosixPath(rel).name != "Cargo.toml":
                    continue
                directory = str(PurePosixPath(rel).parent)
                directory = "" if directory == "." else directory
                section = ""
                for line in self.index.lines(rel):
                    s = line.strip()
                    if s.startswith("["):
                        section = s
                    elif section in ("[package]", "[lib]") and (m := re.match(r'name\s*=\s*"([^"]+)"', s)):
                        found.setdefault(m.group(1).replace("-", "_"), directory)
            self._packages = found
        return self._packages

    def files_of(self, root: str | None) -> set[str]:
        """The files of the target rooted at ``root`` that define tests."""
        if root is None:
            return set()
        if root not in self._files_of:
            self._files_of[root] = {d.file for d in self.defs(root)} | {root}
        return self._files_of[root]

    def fns(self) -> dict[str, list[tuple[str, int]]]:
        """Every ``fn`` of the project's Rust files: name -> [(file, line)]."""
        if self._fns is None:
            self._fns = {}
            for rel in self.index.files([".rs"]):
                for i, line in enumerate(self.index.lines(rel)):
                    if "fn" in line and (m := FN_DEF.match(line)):
                        self._fns.setdefault(m.group("name").removeprefix("r#"), []).append((rel, i + 1))
        return self._fns

    def root_file(self, binary: TestBinary | None) -> str | None:
        """The target's root source file, relative to the project."""
        if binary is None:
            return None
        path = "src/lib.rs" if binary.doc else binary.path
        if path is None:
            return None
        pkg = self.packages().get(binary.crate or "")
        if pkg is not None:
            cand = f"{pkg}/{path}" if pkg else path
            if self.index.lines(cand):
                return cand
        if self.index.lines(path):
            return path
        hits = [f for f in self.index.files([".rs"]) if f.endswith("/" + path)]
        return hits[0] if len(hits) == 1 else None

    def defs(self, root: str | None) -> list[RustTest]:
        """Every test the target rooted at ``root`` defines, with doc tests when
        ``root`` is a library root."""
        if root is None:
            return []
        if root not in self._defs:
            defs: list[RustTest] = []
            self._scan(root, [], defs, set(), PurePosixPath(root).parent)
            self._defs[root] = defs
        return self._defs[root]

    def _child_file(self, rel: str, inline: list[str], name: str, path_attr: str | None, root: bool) -> str | None:
        p = PurePosixPath(rel)
        if path_attr:
            return str(p.parent / path_attr)
        # A crate root (lib.rs, main.rs, tests/x.rs, src/bin/x.rs) and mod.rs own their directory.
        base = p.parent if root or p.name == "mod.rs" else p.parent / p.stem
        base = base.joinpath(*inline) if inline else base
        for cand in (base / f"{name}.rs", base / name / "mod.rs"):
            if self.index.lines(str(cand)):
                return str(cand)
        return None

    def _scan(self, rel: str, modpath: list[str], defs: list[RustTest], seen: set[str], pkg_src: PurePosixPath) -> None:
        """Walk one file: ``#[test]`` fns, doc fences, inline and file modules."""
        if rel in seen or len(seen) > 2000:
            return
        seen.add(rel)
        doc_prefix = str(PurePosixPath(rel).relative_to(pkg_src.parent)) if _under(rel, pkg_src.parent) else rel
        lines = self.index.lines(rel)
        codes = _code_lines(lines)
        depth = 0
        scopes: list[tuple[str, str, int]] = []  # (kind: mod|impl|trait, name, depth inside)
        test_attr = False
        ignored: tuple[bool, str | None] = (False, None)
        path_attr: str | None = None
        fences: list[int] = []  # doc-test fence lines of the pending doc comment
        in_fence: str | None = None
        attr_open = 0
        for i, raw in enumerate(lines):
            d = DOC_LINE.match(raw)
            if d:
                text = d.group("text")
                if f := FENCE.match(text):
                    if in_fence is None:
                        in_fence = f.group("fence")
                        if _is_rust_fence(f.group("info")):
                            if d.group("kind") == "!":
                                self._doc_def(defs, doc_prefix, modpath, scopes, None, i + 1, f.group("info"))
                            else:
                                fences.append((i + 1, f.group("info")))  # type: ignore[arg-type]
                    elif f.group("fence").startswith(in_fence) and not f.group("info").strip():
                        in_fence = None
                continue
            in_fence = None
            code = codes[i]
            s = code.strip()
            if not s:
                continue
            if attr_open > 0:  # inside a multi-line attribute
                attr_open += s.count("[") - s.count("]")
                continue
            if s.startswith("#"):
                if TEST_ATTR.search(s):
                    test_attr = True
                if m := IGNORE_ATTR.search(raw):  # the raw line: the reason is a string literal
                    ignored = (True, m.group("reason"))
                if m := PATH_ATTR.search(raw):
                    path_attr = m.group("path")
                if s.startswith(("#[", "#![")):
                    attr_open = max(0, s.count("[") - s.count("]"))
                    continue
            inline = [n for k, n, _ in scopes if k == "mod"]
            if m := MOD_DEF.match(code):
                name = m.group("name").removeprefix("r#")
                self._flush_docs(defs, doc_prefix, modpath + inline, scopes, name, fences)
                if m.group("end") == ";":
                    child = self._child_file(rel, inline, name, path_attr, not modpath)
                    if child:
                        self._scan(child, modpath + inline + [name], defs, seen, pkg_src)
                else:
                    scopes.append(("mod", name, depth + 1))
            elif m := FN_DEF.match(code):
                name = m.group("name").removeprefix("r#")
                self._flush_docs(defs, doc_prefix, modpath + inline, scopes, name, fences)
                if test_attr:
                    defs.append(RustTest("::".join(modpath + inline + [name]), rel, i + 1, *ignored))
            elif m := IMPL_DEF.match(code):
                self._flush_docs(defs, doc_prefix, modpath + inline, scopes, None, fences)
                scopes.append(("impl", re.sub(r"\s+", " ", m.group("ty")).strip(), depth + 1))
            elif m := TRAIT_DEF.match(code):
                self._flush_docs(defs, doc_prefix, modpath + inline, scopes, m.group("name"), fences)
                scopes.append(("impl", m.group("name"), depth + 1))
            elif m := ITEM_DEF.match(code):
                self._flush_docs(defs, doc_prefix, modpath + inline, scopes, m.group("name").removeprefix("r#"),
                                 fences)
            elif fences and not s.startswith("#"):
                fences.clear()
            test_attr, ignored, path_attr = False, (False, None), None
            depth += code.count("{") - code.count("}")
            while scopes and depth < scopes[-1][2]:
                scopes.pop()

    def _flush_docs(self, defs: list[RustTest], prefix: str, modpath: list[str], scopes: list[tuple[str, str, int]],
                    item: str | None, fences: list) -> None:
        for line, info in fences:
            self._doc_def(defs, prefix, modpath, scopes, item, line, info)
        fences.clear()

    @staticmethod
    def _doc_def(defs: list[RustTest], prefix: str, modpath: list[str], scopes: list[tuple[str, str, int]],
                 item: str | None, line: int, info: str) -> None:
        parts = list(modpath) + [n for k, n, _ in scopes if k == "impl"][-1:]
        if item:
            parts.append(item)
        path = "::".join(parts)
        ident = f"{prefix} - {path} (line {line})" if path else f"{prefix} - (line {line})"
        defs.append(RustTest("doc:" + ident, prefix, line, "ignore" in _fence_words(info)))


def _under(rel: str, parent: PurePosixPath) -> bool:
    return str(parent) in ("", ".") or rel.startswith(str(parent) + "/")


def _code_lines(lines: list[str]) -> list[str]:
    """The lines with string/char literals and comments blanked, so braces can
    be counted (strings and block comments may span lines; raw strings too)."""
    out: list[str] = []
    state = ""  # "" code, '"' string, "r" raw string, "/*" block comment
    hashes = 0
    depth = 0  # nesting of block comments
    for line in lines:
        code: list[str] = []
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if state == '"':
                if c == "\\":
                    i += 2
                    continue
                if c == '"':
                    state = ""
                    code.append('"')
                i += 1
            elif state == "r":
                if c == '"' and line.startswith("#" * hashes, i + 1):
                    state = ""
                    code.append('"')
                    i += 1 + hashes
                else:
                    i += 1
            elif state == "/*":
                if line.startswith("*/", i):
                    depth -= 1
                    state = "" if depth == 0 else "/*"
                    i += 2
                elif line.startswith("/*", i):
                    depth += 1
                    i += 2
                else:
                    i += 1
            elif line.startswith("//", i):
                break
            elif line.startswith("/*", i):
                state, depth = "/*", 1
                i += 2
            elif c == '"':
                state = '"'
                code.append('"')
                i += 1
            elif (m := RAW_START.match(line, i)) and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_")):
                state, hashes = "r", len(m.group(1))
                code.append('"')
                i = m.end()
            elif c == "'" and (m := CHAR_LIT.match(line, i)):
                code.append("' '")
                i = m.end()
            else:
                code.append(c)
                i += 1
        out.append("".join(code))
    return out


def _fence_words(info: str) -> set[str]:
    return {w.strip() for w in re.split(r"[,\s]+", info.strip().strip("{}")) if w.strip()}


def _is_rust_fence(info: str) -> bool:
    words = _fence_words(info)
    return not words or not (words & NOT_RUST_FENCE) and all(
        w in {"rust", "ignore", "should_panic", "no_run", "compile_fail", "edition2015", "edition2018",
              "edition2021", "edition2024", "test_harness", "allow_fail", "standalone_crate"}
        or w.startswith(("edition", "E0", "ignore-", "only-")) for w in words)
