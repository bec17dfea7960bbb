"""Fault localization: how the signals rank the functions that may hold a bug."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from greenloop.analysis.context import build_context
from greenloop.analysis.localize import FailingTest, Localizer, Spectrum, failing_test
from greenloop.analysis.patterns import Frame, classify
from greenloop.parsers import RunOutput, parse
from greenloop.parsers.locate import SourceIndex
from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.runner import impact

# A shop whose price() is used by every path; its discount() holds the bug, two calls below the test.
SHOP = {
    "shop/__init__.py": "",
    "shop/money.py": "def cents(x):\n    return round(x * 100)\n\n\ndef price(x):\n    return cents(x) / 100\n",
    "shop/rules.py": "from shop.money import price\n\n\ndef discount(total):\n    if total >= 100:\n"
                     "        return price(total * 0.9)\n    return price(total * 0.9)\n",
    "shop/cart.py": "from shop.money import price\nfrom shop.rules import discount\n\n\n"
                    "def subtotal(items):\n    return price(sum(items))\n\n\n"
                    "def total(items):\n    return discount(subtotal(items))\n",
    "tests/__init__.py": "",
    "tests/test_cart.py": "from shop.cart import subtotal, total\n\n\n"
                          "def test_small_order_has_no_discount():\n    assert total([10, 20]) == 30\n\n\n"
                          "def test_tiny_order_has_no_discount():\n    assert total([1]) == 1\n\n\n"
                          "def test_big_order_is_discounted():\n    assert total([100, 100]) == 180\n\n\n"
                          "def test_subtotal():\n    assert subtotal([1, 2]) == 3\n",
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_spectrum_ranks_what_failing_tests_run_and_passing_ones_do_not(tmp_path):
    write(tmp_path, SHOP)
    # Synthetic coverage: discount's last line runs only in the failing tests; price everywhere.
    spectrum = Spectrum(files={
        "shop/rules.py": {"small": [5, 7], "tiny": [5, 7], "big": [5, 6]},
        "shop/money.py": {t: [2, 6] for t in ("small", "tiny", "big", "sub")},
        "shop/cart.py": {t: [6, 10] for t in ("small", "tiny", "big")} | {"sub": [6]},
    })
    loc = Localizer(SourceIndex(tmp_path), spectrum=spectrum, passing=["big", "sub"], failing=["small", "tiny"])
    ranked = loc.rank(FailingTest(id="small", file="tests/test_cart.py", line=4))
    assert ranked[0].function == "discount"
    assert "run by 2 failing tests and no passing test" in ranked[0].reasons
    assert "called 2 calls below the test" in ranked[0].reasons
    # price runs in every test: below the functions only failing tests and few passing ones run
    names = [s.function for s in ranked]
    assert names.index("price") > names.index("discount")


def test_the_innermost_traceback_frame_ranks_first_and_test_files_are_never_suspects(tmp_path):
    write(tmp_path, SHOP)
    loc = Localizer(SourceIndex(tmp_path))
    frames = [Frame(file="shop/money.py", line=2), Frame(file="shop/money.py", line=6),
              Frame(file="shop/cart.py", line=6), Frame(file="tests/test_cart.py", line=17)]
    ranked = loc.rank(FailingTest(id="tests/test_cart.py::test_subtotal", file="tests/test_cart.py", line=16,
                                  frames=frames))
    assert [s.function for s in ranked[:3]] == ["cents", "price", "subtotal"]
    assert ranked[0].reasons[0] == "in the traceback (innermost project frame)"
    assert all(not s.file.startswith("tests/") for s in ranked)


def test_a_suspect_shared_by_failing_tests_ranks_higher(tmp_path):
    write(tmp_path, {"lib/a.py": "def alpha():\n    return 1\n", "lib/b.py": "def beta():\n    return 2\n",
                     "tests/test_x.py": "def test_one():\n    alpha()\n    beta()\n\n\ndef test_two():\n    beta()\n"})
    loc = Localizer(SourceIndex(tmp_path))
    one = FailingTest(id="tests/test_x.py::test_one", file="tests/test_x.py", line=1)
    two = FailingTest(id="tests/test_x.py::test_two", file="tests/test_x.py", line=6)
    alone = [s.function for s in loc.rank(one)]
    assert sorted(alone) == ["alpha", "beta"]
    together = loc.rank(one, [one, two])
    assert together[0].function == "beta" and "also suspected for 1 other failing test" in together[0].reasons


def test_a_name_defined_in_many_places_is_not_followed(tmp_path):
    files = {f"lib/m{i}.py": "def run():\n    return 0\n" for i in range(8)}
    files["tests/test_r.py"] = "from lib.m0 import run\n\n\ndef test_run():\n    assert run() == 1\n"
    write(tmp_path, files)
    assert Localizer(SourceIndex(tmp_path)).rank(FailingTest(id="t", file="tests/test_r.py", line=4)) == []


def test_real_pytest_coverage_finds_the_bug_two_calls_below_the_test(tmp_path):
    """The coverage plugin Greenloop loads into pytest records each test's lines; the failing
    tests' first message then shows the function that must change, whole, first among suspects."""
    write(tmp_path, SHOP)
    impact.prepare(tmp_path)
    command = impact.command(f"{sys.executable} -m pytest -q -p no:cacheprovider tests")
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    report = parse(RunOutput(command=command, exit_code=done.returncode, stdout_text=done.stdout,
                             stderr_text=done.stderr, cwd=tmp_path), "pytest")
    failing = sorted(t.id for t in report.failing)
    assert failing == ["tests/test_cart.py::test_small_order_has_no_discount",
                       "tests/test_cart.py::test_tiny_order_has_no_discount"]
    lines = impact.collect_lines(tmp_path, {t.id for t in report.tests})
    assert lines["shop/rules.py"]["tests/test_cart.py::test_big_order_is_discounted"] == [5, 6]
    index = SourceIndex(tmp_path)
    loc = Localizer(index, spectrum=Spectrum(files=lines), failing=failing,
                    passing=[t.id for t in report.tests if t.id not in failing])
    test = report.find(failing[0])
    assert test is not None
    ctx = build_context(tmp_path, test, classify(test, set(index.files())), loc)
    assert (ctx.suspects[0].file, ctx.suspects[0].function) == ("shop/rules.py", "discount")
    assert "    7|     return price(total * 0.9)" in ctx.render()
    assert ctx.snippets[1].file == "shop/rules.py"


def test_a_js_test_block_and_a_required_module_lead_to_the_exported_function(tmp_path):
    """A tape/mocha test is an anonymous block; the module it requires exports an anonymous function."""
    write(tmp_path, {
        "index.js": "'use strict';\nmodule.exports = function (args) {\n  return helper(args) + 1;\n};\n\n"
                    "function helper(x) {\n  return x * 2;\n}\n",
        "test/parse.js": "var parse = require('../');\nvar test = require('tape');\n\n"
                         "test('parses', function (t) {\n  t.equal(parse(1), 3);\n  t.end();\n});\n"})
    ranked = Localizer(SourceIndex(tmp_path)).rank(FailingTest(id="parses", file="test/parse.js", line=4))
    assert [(s.function, s.start, s.end) for s in ranked] == [("module.exports", 2, 4), ("helper", 6, 8)]
    assert ranked[0].reasons == ["called by the test"] and ranked[1].reasons == ["called 2 calls below the test"]


# Two writers the test reaches alike (two calls below it, run by it and by the same passing tests):
# only the failure's output tells which one wrote what the assertion compared.
REPORTS = {
    "report/__init__.py": "",
    "report/write.go": "package report\n\nimport \"fmt\"\n\n"
                       "func unified(a, b int) string {\n\t// a comment's \"@@@@\" is not output\n"
                       "\treturn fmt.Sprintf(\"@@ -%d +%d @@\", a, b)\n}\n\n"
                       "func context(a, b int) string {\n\treturn fmt.Sprintf(\"*** %d ****\\n--- %d ----\", a, b+1)\n}\n\n"
                       "func Unified(a, b int) string {\n\treturn unified(a, b)\n}\n\n"
                       "func Context(a, b int) string {\n\treturn context(a, b)\n}\n",
    "report/write_test.go": "package report\n\nimport \"testing\"\n\nfunc TestBoth(t *testing.T) {\n"
                            "\tu := Unified(1, 2)\n\tc := Context(1, 2)\n\tcheck(t, u, \"@@ -1 +2 @@\")\n"
                            "\tcheck(t, c, \"*** 1 ****\\n--- 2 ----\")\n}\n",
}


def test_the_suspect_whose_text_is_in_the_failures_output_ranks_above_its_twin(tmp_path):
    write(tmp_path, REPORTS)
    loc = Localizer(SourceIndex(tmp_path))
    test = FailingTest(id="TestBoth", file="report/write_test.go", line=5,
                       output="write_test.go:9: *** 1 ****\n--- 3 ---- != *** 1 ****\n--- 2 ----")
    ranked = loc.rank(test)
    names = [s.function for s in ranked]
    assert names.index("context") < names.index("unified")
    assert "its text '****' is in the failure's output" in ranked[names.index("context")].reasons
    # Without the output they tie, in file order; a comment's quotes never count.
    alone = [s.function for s in loc.rank(test.model_copy(update={"output": "@@@@"}))]
    assert alone.index("unified") < alone.index("context")
    assert not any("failure's output" in r for s in loc.rank(test.model_copy(update={"output": "@@@@"}))
                   for r in s.reasons)


def test_a_test_that_runs_the_projects_program_suspects_its_functions(tmp_path):
    """flat's CLI tests run ``cli.js`` (package.json's ``bin``) in a process: no call and no stack
    frame leads there, the test's ``exec`` does."""
    write(tmp_path, {
        "package.json": '{"name": "flat", "bin": "cli.js", "main": "index.js"}\n',
        "index.js": "function flatten(x) {\n  return x;\n}\n\nmodule.exports = flatten;\n",
        "cli.js": "#!/usr/bin/env node\nconst flat = require('./index');\n\nfunction out(data) {\n"
                  "  process.stdout.write(JSON.stringify(flat(data), null, 3));\n}\n\nout(require(process.argv[2]));\n",
        "test/test.js": "const { exec } = require('child_process');\nconst flatten = require('../index');\n\n"
                        "test('can take filename', function (done) {\n  exec(`${cli} ${pkgJSON}`, (err, stdout) => {\n"
                        "    assert.strictEqual(stdout, JSON.stringify(flatten(pkg), null, 2));\n    done();\n  });\n});\n\n"
                        "test('flattens', function () {\n  assert.deepStrictEqual(flatten({}), {});\n});\n",
    })
    loc = Localizer(SourceIndex(tmp_path))
    ranked = loc.rank(FailingTest(id="can take filename", file="test/test.js", line=4))
    out = next(s for s in ranked if s.function == "out")
    assert out.file == "cli.js" and "in cli.js, the program the test runs" in out.reasons
    # A test that starts no process does not suspect the program.
    assert "out" not in [s.function for s in loc.rank(FailingTest(id="flattens", file="test/test.js", line=11))]


def test_a_build_error_reported_in_the_source_points_at_its_function(tmp_path):
    """go test reports a package that does not build as one errored "test" at the compiler's line:
    that line's function is the suspect, and the source file is no test file for holding it."""
    write(tmp_path, {
        "go.mod": "module example.com/diff\n\ngo 1.19\n",
        "diff/diff.go": "package diff\n\nimport \"io\"\n\nfunc Write(w io.Writer, s string) {\n"
                        "\tio.WriteString(w, s)\n}\n\nfunc String(s string) string {\n\tvar b strings.Builder\n"
                        "\tWrite(s, &b)\n\treturn b.String()\n}\n",
        "diff/diff_test.go": "package diff\n\nimport \"testing\"\n\nfunc TestString(t *testing.T) {\n"
                             "\tif String(\"a\") != \"a\" {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
    })
    message = ("diff/diff.go:11:8: cannot use s (variable of type string) as io.Writer value in argument to Write\n"
               "diff/diff.go:11:11: cannot use &b (value of type *strings.Builder) as string value")
    test = TestResult(id="example.com/diff/diff", status=Status.ERRORED, file="diff/diff.go", line=11,
                      message=message)
    report = TestReport(framework="go", tests=[test])
    index = SourceIndex(tmp_path)
    loc = Localizer.for_report(index, report)
    ranked = loc.rank(failing_test(test, classify(test, set(index.files()))))
    assert ranked and ranked[0].function == "String"
    assert ranked[0].reasons[0] == "in the traceback (innermost project frame)"


# A parser whose entry point reaches its helpers alike (tape runs every test file in one process: no per-test
# coverage tells them apart).
PARSE = {
    "package.json": '{"name": "parse", "main": "index.js"}',
    "index.js": "'use strict';\n\nfunction isNumber(x) {\n\treturn /^\\d+$/.test(x);\n}\n\n"
                "function hasKey(obj, key) {\n\treturn key in obj;\n}\n\n"
                "module.exports = function (args) {\n\tvar out = {};\n\targs.forEach(function (a) {\n"
                "\t\tif (!hasKey(out, a)) { out[a] = isNumber(a) ? Number(a) : a; }\n\t});\n\treturn out;\n};\n",
    "test/num.js": "var test = require('tape');\nvar parse = require('../');\n\n"
                   "test('nums', function (t) {\n\tt.deepEqual(parse(['1']), { 1: 1 });\n\tt.end();\n});\n",
}


def test_without_coverage_the_function_the_test_is_named_for_ranks_above_its_siblings(tmp_path):
    write(tmp_path, PARSE)
    loc = Localizer(SourceIndex(tmp_path))
    ranked = loc.rank(FailingTest(id="nums", file="test/num.js", line=4))
    names = [s.function for s in ranked]
    # hasKey comes first in the file and is reached the same way: "nums" (and num.js) name isNumber.
    assert names.index("isNumber") < names.index("hasKey")
    assert "named by the test's name" in ranked[names.index("isNumber")].reasons


def test_with_coverage_the_name_adds_nothing(tmp_path):
    """With the test's coverage the spectrum decides: the function named like the test (the entry
    point) must not climb over the helper only the failing test ran."""
    write(tmp_path, PARSE)
    lines = {"index.js": {"nums": [4, 8, 12, 13, 14, 15, 16], "other": [4, 12, 13, 14, 15, 16]}}
    loc = Localizer(SourceIndex(tmp_path), spectrum=Spectrum(files=lines), passing=["other"], failing=["nums"])
    ranked = loc.rank(FailingTest(id="nums", file="test/num.js", line=4))
    assert ranked[0].function == "hasKey"
    assert all("named by the test's name" not in s.reasons for s in ranked)


def test_suspects_no_signal_tells_apart_rank_by_their_own_code(tmp_path):
    """Functions the test's calls reach alike: the one with more code of its own first, whatever the
    file's order; a function's own code leaves out the functions defined inside it."""
    write(tmp_path, {
        "lib/calc.js": "function outer(x) {\n\tfunction inner(y) {\n\t\tvar a = y + 1;\n\t\tvar b = a * 2;\n"
                       "\t\tvar c = b - 3;\n\t\tvar d = c / 4;\n\t\treturn d % 5;\n\t}\n\treturn inner(x);\n}\n\n"
                       "function plain(x) {\n\tvar a = x + 1;\n\tvar b = a * 2;\n\tvar c = b - 3;\n\treturn c;\n}\n\n"
                       "function run(x) {\n\treturn outer(x) + plain(x);\n}\n\nmodule.exports = { run: run };\n",
        "test/calc.js": "var calc = require('../lib/calc');\n\nit('adds up', function () {\n\tcalc.run(1);\n});\n",
    })
    loc = Localizer(SourceIndex(tmp_path))
    ranked = loc.rank(FailingTest(id="adds up", file="test/calc.js", line=3))
    by = {s.function: s for s in ranked}
    assert by["outer"].score == by["plain"].score  # both called by what the test calls
    names = [s.function for s in ranked]
    # plain's 6 lines are its own; outer's 10 hold inner's 7: 3 of its own
    assert names.index("plain") < names.index("outer")
