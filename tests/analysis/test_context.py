"""The fixer's context for one failure, from a real git repository: the
failing test's source, the project frames of its stack with surrounding
lines, the files it imports, recent commits touching them; bounded in size."""

from __future__ import annotations

import subprocess
from pathlib import Path

from greenloop.analysis.context import MAX_CONTEXT_CHARS, MAX_SHOWN, MAX_SHOWN_SMALL, build_context
from greenloop.analysis.patterns import classify
from greenloop.parsers.locate import SourceIndex
from greenloop.parsers.models import Status, TestResult

CART = '''"""Cart totals."""
from shop.util import money

PRICES = {"apple": 3, "pear": 4}


def price(name):
    return PRICES[name]


def total(items):
    return money(sum(price(i) for i in items))
'''
UTIL = '''def money(x):
    return round(x, 2)
'''
TEST = '''from shop.cart import total
from shop.util import money
from .helpers import basket


def test_total_kiwi():
    assert total(basket("kiwi")) == 3
'''
HELPERS = '''def basket(*names):
    return list(names)
'''


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def make_repo(root: Path) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    for rel, text in {"shop/__init__.py": "", "shop/cart.py": CART.replace("PRICES[name]", "PRICES.get(name, 0)"),
                      "shop/util.py": UTIL, "tests/__init__.py": "", "tests/helpers.py": HELPERS,
                      "tests/test_cart.py": TEST, "README.md": "shop\n"}.items():
        write(root, rel, text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial shop")
    write(root, "shop/cart.py", CART)
    git(root, "commit", "-qam", "price raises on unknown fruit")
    write(root, "README.md", "shop, documented\n")
    git(root, "commit", "-qam", "docs only")


def kiwi_failure(root: Path) -> TestResult:
    details = (
        f"    def test_total_kiwi():\n>       assert total(basket('kiwi')) == 3\n\n{root}/tests/test_cart.py:7: \n"
        f"_ _ _ _\n>       return money(sum(price(i) for i in items))\n\n{root}/shop/cart.py:12: \n_ _ _ _\n"
        f">       return PRICES[name]\nE       KeyError: 'kiwi'\n\n{root}/shop/cart.py:8: KeyError"
    )
    return TestResult(id="tests/test_cart.py::test_total_kiwi", status=Status.FAILED, file="tests/test_cart.py",
                      line=6, message="KeyError: 'kiwi'", details=details)


def test_context_has_the_test_its_frames_its_imports_and_recent_changes(tmp_path):
    make_repo(tmp_path)
    test = kiwi_failure(tmp_path)
    c = classify(test, set(SourceIndex(tmp_path).files()))
    assert [(f.file, f.line) for f in c.project_frames] == [("tests/test_cart.py", 7), ("shop/cart.py", 12),
                                                            ("shop/cart.py", 8)]
    ctx = build_context(tmp_path, test, c)
    # The test's own function, then the suspects whole, in rank order, each saying why it is shown:
    # the innermost frame's function first, then its caller, then what the test's calls call.
    assert [(s.file, s.start_line, s.end_line) for s in ctx.snippets] == [
        ("tests/test_cart.py", 6, 7), ("shop/cart.py", 7, 8), ("shop/cart.py", 11, 12), ("shop/util.py", 1, 2)]
    assert [s.why for s in ctx.snippets[1:]] == [
        "suspect: price — in the traceback (innermost project frame); called 2 calls below the test",
        "suspect: total — in the traceback; called by the test; named by the test's name",
        "suspect: money — called 2 calls below the test",
    ]
    assert [(s.function, s.start, s.end) for s in ctx.suspects] == [("price", 7, 8), ("total", 11, 12),
                                                                    ("money", 1, 2)]
    assert "    8|     return PRICES[name]" in ctx.snippets[1].text
    assert "   12|     return money(" in ctx.snippets[2].text
    assert "    7|     assert total(basket(\"kiwi\")) == 3" in ctx.snippets[0].text
    # test helpers (tests/helpers.py) are never suspects
    assert all(not s.file.startswith("tests/") for s in ctx.suspects)
    # git history of the files in the context: the breaking commit, not the docs one
    assert "price raises on unknown fruit" in ctx.recent_changes and "initial shop" in ctx.recent_changes
    assert "docs only" not in ctx.recent_changes
    assert not ctx.truncated
    md = ctx.render()
    assert "### shop/cart.py lines 7-8 (suspect: price" in md and "### Recent git changes" in md


def test_a_bug_below_the_test_is_shown_whole_without_a_traceback(tmp_path):
    """An assertion failure prints only the test's line; the wrong value is computed two calls down."""
    write(tmp_path, "shop/__init__.py", "")
    write(tmp_path, "shop/tax.py", "def rate(region):\n    return {'eu': 0.2, 'us': 0.07}[region]\n\n\n"
                                   "def with_tax(amount, region):\n    return amount * (1 + rate(region) * 10)\n")
    write(tmp_path, "shop/cart.py", "from shop.tax import with_tax\n\n\ndef total(items, region):\n"
                                    "    return round(sum(with_tax(p, region) for p in items), 2)\n")
    write(tmp_path, "shop/unrelated.py", "".join(f"def helper{i}(x):\n    return x + {i}\n\n\n" for i in range(50)))
    write(tmp_path, "tests/test_cart.py", "from shop.cart import total\n\n\ndef test_total_eu():\n"
                                          "    assert total([10], 'eu') == 12\n")
    test = TestResult(id="tests/test_cart.py::test_total_eu", status=Status.FAILED, file="tests/test_cart.py",
                      line=4, message="assert 30.0 == 12",
                      details=f"{tmp_path}/tests/test_cart.py:5: in test_total_eu\nE   assert 30.0 == 12")
    ctx = build_context(tmp_path, test, classify(test, set(SourceIndex(tmp_path).files())))
    shown = [s.file + ":" + str(s.start_line) for s in ctx.snippets]
    assert shown[:1] == ["tests/test_cart.py:4"]
    assert set(shown[1:4]) == {"shop/cart.py:4", "shop/tax.py:5", "shop/tax.py:1"}
    assert "    6|     return amount * (1 + rate(region) * 10)" in ctx.render()
    assert not any("unrelated" in s for s in shown)


def test_js_relative_requires_resolve_from_the_test_directory(tmp_path):
    write(tmp_path, "src/cart.js", "const { price } = require('./price');\nmodule.exports = { total: () => 1 };\n")
    write(tmp_path, "src/price.js", "exports.price = () => 2;\n")
    write(tmp_path, "test/cart.test.js", "const { total } = require('../src/cart');\ntest('t', () => {});\n")
    test = TestResult(id="t", status=Status.FAILED, file="test/cart.test.js", line=2, message="Error: x")
    ctx = build_context(tmp_path, test, classify(test, set(SourceIndex(tmp_path).files())))
    assert [(s.file, s.why) for s in ctx.snippets] == [("test/cart.test.js", "the failing test"),
                                                        ("src/cart.js", "imported by test/cart.test.js")]
    assert ctx.recent_changes == ""  # not a git repository


def test_context_stays_bounded_with_huge_files_and_many_frames(tmp_path):
    make_repo(tmp_path)
    # an 8,000-line module with a minified 1 MB line near the failure, and a stack through 40 modules
    lines = [f"def f{i}(x):  # {'padding ' * 10}" for i in range(8_000)]
    lines[5_002] = "var a=" + "1," * 500_000 + "1;"
    write(tmp_path, "shop/huge.py", "\n".join(lines) + "\n")
    for i in range(40):
        write(tmp_path, f"shop/m{i}.py", "\n".join(f"v{j} = {j}  # {'x' * 150}" for j in range(400)) + "\n")
    frames = "".join(f'  File "{tmp_path}/shop/m{i}.py", line {200 + i}, in f\n' for i in range(40))
    details = (f'Traceback (most recent call last):\n  File "{tmp_path}/tests/test_cart.py", line 7, in test_total_kiwi\n'
               f'  File "{tmp_path}/shop/huge.py", line 5000, in f4999\n{frames}KeyError: \'kiwi\'')
    test = TestResult(id="tests/test_cart.py::test_total_kiwi", status=Status.FAILED, file="tests/test_cart.py",
                      line=6, message="KeyError: 'kiwi'", details=details)
    ctx = build_context(tmp_path, test, classify(test, set(SourceIndex(tmp_path).files())))
    assert ctx.snippets[0].why == "the failing test"
    # the frame nearest the error (Python prints it last) is shown first, around its line
    assert (ctx.snippets[1].file, ctx.snippets[1].start_line) == ("shop/m39.py", 231)
    assert sum(len(s.text) for s in ctx.snippets) <= MAX_CONTEXT_CHARS
    assert len(ctx.render()) < MAX_CONTEXT_CHARS + 6_000
    assert len(ctx.snippets) <= 9
    # further frames are named for the model to open, not pasted
    assert ctx.truncated and "Further suspects" in ctx.render()


def test_a_minified_line_is_cut(tmp_path):
    make_repo(tmp_path)
    write(tmp_path, "shop/huge.py", "x = 1\n" * 20 + "var a=" + "1," * 500_000 + "1;\n" + "y = 2\n" * 20)
    details = (f'Traceback (most recent call last):\n  File "{tmp_path}/tests/test_cart.py", line 7, in t\n'
               f'  File "{tmp_path}/shop/huge.py", line 22, in <module>\nKeyError: \'kiwi\'')
    test = TestResult(id="tests/test_cart.py::test_total_kiwi", status=Status.FAILED, file="tests/test_cart.py",
                      line=6, message="KeyError: 'kiwi'", details=details)
    ctx = build_context(tmp_path, test, classify(test, set(SourceIndex(tmp_path).files())))
    huge = next(s for s in ctx.snippets if s.file == "shop/huge.py")
    assert "...[line cut]" in huge.text and len(huge.text) < 3_000


def test_a_cluster_of_small_suspects_is_shown_past_the_usual_count(tmp_path):
    """Twelve one-line setters the test calls alike tie on every signal: small ones are shown past
    MAX_SHOWN, up to MAX_SHOWN_SMALL; the rest are named for the model to open, and a large one
    past MAX_SHOWN (one call further down) is not pasted."""
    setters = "".join(f"def set{i:02d}(box):\n    box[{i}] = {i}\n\n\n" for i in range(11))
    write(tmp_path, "shop/__init__.py", "")
    write(tmp_path, "shop/box.py", setters + "def set11(box):\n    big(box)\n\n\n" + "def big(box):\n"
          + "".join(f"    box[{i}] = {i} * 2  # {'pad ' * 8}\n" for i in range(40)))
    calls = "".join(f"    set{i:02d}(box)\n" for i in range(12))
    write(tmp_path, "tests/test_box.py", f"from shop.box import *\n\n\ndef test_box():\n    box = {{}}\n{calls}"
                                         "    assert box == {}\n")
    test = TestResult(id="tests/test_box.py::test_box", status=Status.FAILED, file="tests/test_box.py", line=4,
                      message="assert {...} == {}")
    ctx = build_context(tmp_path, test, classify(test, set(SourceIndex(tmp_path).files())))
    suspects = [s for s in ctx.snippets if s.why.startswith("suspect")]
    assert len(suspects) == MAX_SHOWN_SMALL > MAX_SHOWN
    assert all(s.end_line - s.start_line == 1 for s in suspects[MAX_SHOWN:])  # the small ones only
    assert "big" in [s.function for s in ctx.further] and "big(box):" not in ctx.render().split("Further")[0]
