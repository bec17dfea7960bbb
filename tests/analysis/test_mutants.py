"""Single-point mutants: where they may go, what they change, and how they are drawn."""

from __future__ import annotations

import ast
from pathlib import Path

from greenloop.analysis.mutants import mutants_of, sample, source_files
from greenloop.parsers.locate import SourceIndex

PY = '''"""Module docs: a < b and True."""
LIMIT = 10


def clamp(x, low, high):
    """Docs mention x > high and 1."""
    if x < low:  # a comment with == and 3
        return low
    total = x - 1
    return min(high, total) if x >= 0 else -x
'''


def write(root: Path, files: dict[str, str]) -> SourceIndex:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return SourceIndex(root)


def test_python_mutants_touch_only_code_in_function_bodies(tmp_path):
    index = write(tmp_path, {"lib/clamp.py": PY})
    found = {(m.line, m.operator, m.after.strip()) for m in mutants_of(index, "lib/clamp.py")}
    assert (7, "operator", "if x <= low:  # a comment with == and 3") in found
    assert (9, "operator", "total = x + 1") in found
    assert (9, "constant", "total = x - 2") in found
    assert (9, "statement", "pass") in found
    assert (10, "operator", "return min(high, total) if x > 0 else -x") in found
    assert (10, "arguments", "return min(total, high) if x >= 0 else -x") in found
    assert all(m.line >= 7 for m in mutants_of(index, "lib/clamp.py"))  # no docstring, no module constant
    assert not any(m.after.endswith("else +x") for m in mutants_of(index, "lib/clamp.py"))  # -x's sign: no operator
    for m in mutants_of(index, "lib/clamp.py"):
        ast.parse(m.apply(PY))  # every Python mutant still parses
        assert m.reverse.apply(m.apply(PY)) == PY


def test_brace_language_mutants_skip_strings_comments_and_generics(tmp_path):
    js = ("function paginate(items, page) {\n  // page < 1 is an error\n  const start = (page - 1) * 10;\n"
          "  if (page < 1 && items.length > 0) return \"a < b\";\n  return items.slice(start, start + 10);\n}\n")
    rust = "pub fn first(v: Vec<u32>) -> Option<u32> {\n    v.get(0).copied()\n}\n"
    index = write(tmp_path, {"src/page.js": js, "src/lib.rs": rust})
    found = {(m.line, m.after.strip()) for m in mutants_of(index, "src/page.js")}
    assert (3, "const start = (page + 1) * 10;") in found
    assert (3, "const start = (page - 2) * 10;") in found
    assert (4, "if (page <= 1 && items.length > 0) return \"a < b\";") in found
    assert (4, "if (page < 1 || items.length > 0) return \"a < b\";") in found
    assert not any(m.line == 2 for m in mutants_of(index, "src/page.js"))
    assert {m.after.strip() for m in mutants_of(index, "src/lib.rs")} == {"v.get(1).copied()"}


def test_go_mutants(tmp_path):
    go = "package m\n\nfunc Max(a, b int) int {\n\tif a > b {\n\t\treturn a\n\t}\n\treturn b\n}\n"
    index = write(tmp_path, {"max.go": go})
    assert [m.after.strip() for m in mutants_of(index, "max.go")] == ["if a >= b {"]


def test_sources_leave_tests_out_and_sampling_is_spread_and_repeatable(tmp_path):
    files = {f"lib/m{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(6)}
    files["tests/test_m.py"] = "def test_x():\n    assert 1 + 1 == 2\n"
    index = write(tmp_path, files)
    assert source_files(index) == [f"lib/m{i}.py" for i in range(6)]
    first = sample(index, 6, seed=3)
    assert len({m.function for m in first}) == 6  # one per function before any function gets two
    assert sample(index, 6, seed=3) == first and sample(index, 6, seed=4) != first
