"""Error patterns on realistic failure output from pytest, Jest,
go test, cargo test and JUnit: each failure gets its kind and the evidence
line that shows it (the line itself, not the first line of the output)."""

from __future__ import annotations

import re

import pytest

from greenloop.analysis.patterns import SUGGESTIONS, FailureKind, classify
from greenloop.parsers.models import Status, TestResult


def failing(message: str, details: str = "", **kw) -> TestResult:
    return TestResult(id=kw.pop("id", "t"), status=Status.FAILED, message=message, details=details, **kw)


K = FailureKind
# (framework, message, details, kind, evidence line)
CASES = [
    # --- assertions with expected/actual ---------------------------------------------------------
    ("pytest", "AssertionError: assert 6 == 7\n +  where 6 = total(['apple', 'pear'])",
     "    def test_total():\n>       assert total(['apple', 'pear']) == 7\nE       AssertionError: assert 6 == 7\n",
     K.ASSERTION, "AssertionError: assert 6 == 7"),
    ("jest", "expect(received).toBe(expected) // Object.is equality\n\nExpected: 900\nReceived: 700",
     "    at Object.<anonymous> (/app/test/price.test.js:7:25)", K.ASSERTION,
     "expect(received).toBe(expected) // Object.is equality"),
    ("go", "cart_test.go:14: Total() = 6, got 6, want 7", "", K.ASSERTION, "cart_test.go:14: Total() = 6, got 6, want 7"),
    ("cargo", "thread 'tests::total' panicked at src/lib.rs:20:9:\nassertion `left == right` failed\n  left: 6\n right: 7",
     "", K.ASSERTION, "assertion `left == right` failed"),
    ("junit", "org.opentest4j.AssertionFailedError: expected: <7> but was: <6>",
     "\tat org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)\n"
     "\tat com.shop.CartTest.total(CartTest.java:15)", K.ASSERTION,
     "org.opentest4j.AssertionFailedError: expected: <7> but was: <6>"),
    # --- None / nil / null dereference -------------------------------------------------------------
    ("pytest", "AttributeError: 'NoneType' object has no attribute 'price'",
     "    def total(self):\n>       return self.item.price\nE       AttributeError: 'NoneType' object has no attribute 'price'",
     K.NULL_REFERENCE, "AttributeError: 'NoneType' object has no attribute 'price'"),
    ("jest", "TypeError: Cannot read properties of null (reading 'qty')",
     "    at total (/app/src/cart.js:4:21)", K.NULL_REFERENCE, "TypeError: Cannot read properties of null (reading 'qty')"),
    ("go", "panic: runtime error: invalid memory address or nil pointer dereference [recovered]",
     "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4f6c2a]\n\ngoroutine 7 [running]:\n"
     "example.com/shop.(*Cart).Total(0x0)\n\t/home/u/shop/cart.go:12 +0x2a",
     K.NULL_REFERENCE, "panic: runtime error: invalid memory address or nil pointer dereference [recovered]"),
    ("cargo", "thread 'tests::first' panicked at src/lib.rs:8:22:\ncalled `Option::unwrap()` on a `None` value",
     "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", K.NULL_REFERENCE,
     "called `Option::unwrap()` on a `None` value"),
    ("junit", "java.lang.NullPointerException: Cannot invoke \"com.shop.Item.price()\" because \"item\" is null",
     "\tat com.shop.Cart.total(Cart.java:21)\n\tat com.shop.CartTest.total(CartTest.java:15)", K.NULL_REFERENCE,
     "java.lang.NullPointerException: Cannot invoke \"com.shop.Item.price()\" because \"item\" is null"),
    # --- index out of range ----------------------------------------------------------------------
    ("pytest", "IndexError: list index out of range", ">       return items[0]\nE       IndexError: list index out of range",
     K.INDEX_OUT_OF_RANGE, "IndexError: list index out of range"),
    ("jest", "RangeError: Invalid array length", "    at new Array (<anonymous>)\n    at pad (/app/src/pad.js:2:10)",
     K.INDEX_OUT_OF_RANGE, "RangeError: Invalid array length"),
    ("go", "panic: runtime error: index out of range [3] with length 3 [recovered]",
     "goroutine 6 [running]:\nexample.com/shop.Last(...)\n\t/home/u/shop/cart.go:30", K.INDEX_OUT_OF_RANGE,
     "panic: runtime error: index out of range [3] with length 3 [recovered]"),
    ("cargo", "thread 'tests::last' panicked at src/lib.rs:30:5:\nindex out of bounds: the len is 3 but the index is 3",
     "", K.INDEX_OUT_OF_RANGE, "index out of bounds: the len is 3 but the index is 3"),
    ("junit", "java.lang.ArrayIndexOutOfBoundsException: Index 3 out of bounds for length 3",
     "\tat com.shop.Cart.last(Cart.java:30)", K.INDEX_OUT_OF_RANGE,
     "java.lang.ArrayIndexOutOfBoundsException: Index 3 out of bounds for length 3"),
    # --- key errors ------------------------------------------------------------------------------
    ("pytest", "KeyError: 'kiwi'", ">       return PRICES[name]\nE       KeyError: 'kiwi'", K.KEY_ERROR, "KeyError: 'kiwi'"),
    ("junit", "java.util.NoSuchElementException: No value present",
     "\tat java.base/java.util.Optional.get(Optional.java:143)\n\tat com.shop.Cart.find(Cart.java:40)",
     K.KEY_ERROR, "java.util.NoSuchElementException: No value present"),
    # --- type mismatches -------------------------------------------------------------------------
    ("pytest", "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
     ">       return a + b\nE       TypeError: unsupported operand type(s) for +: 'int' and 'str'", K.TYPE_MISMATCH,
     "TypeError: unsupported operand type(s) for +: 'int' and 'str'"),
    ("jest", "TypeError: cart.total is not a function", "    at Object.<anonymous> (/app/test/cart.test.js:9:17)",
     K.TYPE_MISMATCH, "TypeError: cart.total is not a function"),
    ("junit", "java.lang.ClassCastException: class java.lang.String cannot be cast to class java.lang.Integer",
     "\tat com.shop.Cart.qty(Cart.java:50)", K.TYPE_MISMATCH,
     "java.lang.ClassCastException: class java.lang.String cannot be cast to class java.lang.Integer"),
    # --- import / module / dependency ------------------------------------------------------------
    ("pytest", "ModuleNotFoundError: No module named 'requests'",
     "ImportError while importing test module '/app/tests/test_api.py'.\nE   ModuleNotFoundError: No module named 'requests'",
     K.IMPORT_ERROR, "ModuleNotFoundError: No module named 'requests'"),
    ("jest", "Cannot find module './pricing' from 'src/cart.js'",
     "Require stack:\n  src/cart.js\n  test/cart.test.js", K.IMPORT_ERROR, "Cannot find module './pricing' from 'src/cart.js'"),
    ("go", "cart_test.go:5:2: no required module provides package github.com/stretchr/testify/assert; "
     "to add it:\n\tgo get github.com/stretchr/testify/assert", "", K.IMPORT_ERROR,
     "cart_test.go:5:2: no required module provides package github.com/stretchr/testify/assert; to add it:"),
    ("junit", "java.lang.NoClassDefFoundError: com/shop/Pricing",
     "Caused by: java.lang.ClassNotFoundException: com.shop.Pricing", K.IMPORT_ERROR,
     "java.lang.NoClassDefFoundError: com/shop/Pricing"),
    # --- timeouts --------------------------------------------------------------------------------
    ("pytest", "Failed: Timeout >5.0s", "+++++++ Timeout +++++++\n  File \"/app/shop/net.py\", line 9, in fetch",
     K.TIMEOUT, "Failed: Timeout >5.0s"),
    ("jest", "thrown: \"Exceeded timeout of 5000 ms for a test.\nAdd a timeout value to this test to increase the timeout",
     "", K.TIMEOUT, "thrown: \"Exceeded timeout of 5000 ms for a test."),
    ("go", "panic: test timed out after 30s\n\trunning tests:\n\t\tTestSlow (30s)", "", K.TIMEOUT,
     "panic: test timed out after 30s"),
    ("junit", "java.util.concurrent.TimeoutException: total() timed out after 2 seconds",
     "\tat org.junit.jupiter.engine.extension.TimeoutExtension.intercept(TimeoutExtension.java:156)",
     K.TIMEOUT, "java.util.concurrent.TimeoutException: total() timed out after 2 seconds"),
    # --- panic / crash / segfault ----------------------------------------------------------------
    ("go", "panic: boom [recovered]\n\tpanic: boom", "goroutine 8 [running]:\nexample.com/shop.Explode()", K.CRASH,
     "panic: boom [recovered]"),
    ("cargo", "process didn't exit successfully: `/app/target/debug/deps/shop-1f2e` "
     "(signal: 11, SIGSEGV: invalid memory reference)", "", K.CRASH,
     "process didn't exit successfully: `/app/target/debug/deps/shop-1f2e` (signal: 11, SIGSEGV: invalid memory reference)"),
    ("pytest", "Fatal Python error: Segmentation fault", "Current thread 0x00007f (most recent call first):",
     K.CRASH, "Fatal Python error: Segmentation fault"),
    ("cargo", "thread 'main' has overflowed its stack\nfatal runtime error: stack overflow", "", K.CRASH,
     "fatal runtime error: stack overflow"),
    # --- build / compile -------------------------------------------------------------------------
    ("cargo", "error[E0308]: mismatched types\n --> src/lib.rs:12:5\n   |\n12 |     \"seven\"\n   |     ^^^^^^^ expected `u32`, found `&str`",
     "error: could not compile `shop` (lib) due to 1 previous error", K.BUILD_ERROR, "error[E0308]: mismatched types"),
    ("go", "# example.com/shop [example.com/shop.test]\n./cart.go:12:9: undefined: totl\nFAIL\texample.com/shop [build failed]",
     "", K.BUILD_ERROR, "FAIL\texample.com/shop [build failed]"),
    ("junit", "[ERROR] COMPILATION ERROR : \n[ERROR] /app/src/main/java/com/shop/Cart.java:[12,9] cannot find symbol",
     "", K.BUILD_ERROR, "[ERROR] COMPILATION ERROR :"),
    ("pytest", "SyntaxError: invalid syntax", "E     File \"/app/shop/cart.py\", line 3\nE       def total(\nE                ^",
     K.BUILD_ERROR, "SyntaxError: invalid syntax"),
    ("jest", "SyntaxError: /app/src/cart.js: Unexpected token (3:10)", "", K.BUILD_ERROR,
     "SyntaxError: /app/src/cart.js: Unexpected token (3:10)"),
    # --- fixture / hook --------------------------------------------------------------------------
    ("pytest", "ERROR at setup of test_checkout", "    @pytest.fixture\n    def db():\n>       raise ConnectionError('db down')",
     K.FIXTURE_ERROR, "ERROR at setup of test_checkout"),
    ("pytest", "fixture 'dbsession' not found", "available fixtures: cache, capfd, tmp_path", K.FIXTURE_ERROR,
     "fixture 'dbsession' not found"),
    ("mocha", "\"before each\" hook for \"adds items\": Error: connect ECONNREFUSED 127.0.0.1:5432", "", K.FIXTURE_ERROR,
     "\"before each\" hook for \"adds items\": Error: connect ECONNREFUSED 127.0.0.1:5432"),
    ("jest", "Error: db down", "    at Object.beforeAll (/app/test/cart.test.js:3:9)", K.FIXTURE_ERROR,
     "at Object.beforeAll (/app/test/cart.test.js:3:9)"),
]


@pytest.mark.parametrize("framework, message, details, kind, evidence", CASES,
                         ids=[f"{c[0]}-{c[3].value}-{i}" for i, c in enumerate(CASES)])
def test_kind_and_evidence_line(framework, message, details, kind, evidence):
    c = classify(failing(message, details))
    assert (c.kind, c.evidence) == (kind, evidence)
    assert c.suggestion.startswith(SUGGESTIONS[kind])


def test_every_kind_is_covered_across_languages():
    covered = {c[3] for c in CASES}
    assert covered == set(FailureKind) - {FailureKind.OTHER}
    assert {c[0] for c in CASES} >= {"pytest", "jest", "go", "cargo", "junit"}


@pytest.mark.parametrize("message, details, expected, actual", [
    # JUnit 5 and 4 formats
    ("org.opentest4j.AssertionFailedError: expected: <7> but was: <6>", "", "7", "6"),
    ("java.lang.AssertionError: expected:<[apple]> but was:<[pear]>", "", "[apple]", "[pear]"),
    # Jest on a multi-line message: the Expected/Received pair, not the matcher line
    ("expect(received).toEqual(expected) // deep equality\n\nExpected: {\"qty\": 2}\nReceived: {\"qty\": 1}", "",
     "{\"qty\": 2}", "{\"qty\": 1}"),
    # go test's "got X, want Y" convention
    ("cart_test.go:14: Total() got 6, want 7", "", "7", "6"),
])
def test_expected_and_actual_across_frameworks(message, details, expected, actual):
    c = classify(failing(message, details))
    assert c.kind is FailureKind.ASSERTION
    assert (c.expected, c.actual) == (expected, actual)


def test_no_expected_actual_outside_assertions():
    # The traceback quotes the test's assert line, but the KeyError happened
    # before any comparison: there is no actual value to report.
    details = ('    def test_price():\n>       assert price("kiwi") == 2\n\ntests/test_cart.py:13:\n'
               '>       return PRICES[name]\nE       KeyError: \'kiwi\'\n\nshop/cart.py:5: KeyError')
    c = classify(failing("KeyError: 'kiwi'", details, file="tests/test_cart.py"), {"tests/test_cart.py", "shop/cart.py"})
    assert c.kind is FailureKind.KEY_ERROR
    assert (c.expected, c.actual) == (None, None)


@pytest.mark.parametrize("details, site", [
    # pytest long repr: outermost first, the raise site last
    ("    def test_total():\n>       assert total(['kiwi']) == 3\n\ntests/test_cart.py:9:\n"
     "_ _ _\n\n>       return sum(price(i) for i in items)\n\nshop/cart.py:9:\n_ _ _\n\n"
     ">       return PRICES[name]\nE       KeyError: 'kiwi'\n\nshop/cart.py:5: KeyError", ("shop/cart.py", 5)),
    # a Python traceback: the same order
    ('Traceback (most recent call last):\n  File "/abs/proj/tests/test_cart.py", line 9, in test_total\n'
     '  File "/abs/proj/shop/cart.py", line 9, in total\n  File "/abs/proj/shop/cart.py", line 5, in price\n'
     "KeyError: 'kiwi'", ("shop/cart.py", 5)),
    # a JS stack: innermost first
    ("TypeError: x\n    at price (/abs/proj/src/price.js:5:3)\n    at total (/abs/proj/src/cart.js:9:10)\n"
     "    at Object.<anonymous> (/abs/proj/test/cart.test.js:9:3)", ("src/price.js", 5)),
    # a Java stack: innermost first, bare file names, JDK frames ignored
    ("java.lang.NullPointerException\n\tat java.base/java.util.Objects.requireNonNull(Objects.java:209)\n"
     "\tat com.shop.Cart.total(Cart.java:21)\n"
     "\tat com.shop.CartTest.total(CartTest.java:15)", ("src/main/java/com/shop/Cart.java", 21)),
])
def test_error_site_is_the_innermost_project_frame_in_every_stack_order(details, site):
    files = {"tests/test_cart.py", "shop/cart.py", "src/price.js", "src/cart.js", "test/cart.test.js",
             "src/main/java/com/shop/Cart.java", "src/test/java/com/shop/CartTest.java"}
    test_file = next(f for f in ("tests/test_cart.py", "test/cart.test.js", "src/test/java/com/shop/CartTest.java")
                     if f.rsplit("/", 1)[-1] in details)
    message = next(re.sub(r"^E\s+", "", line) for line in details.splitlines()
                   if re.match(r"(E\s+)?(KeyError|TypeError|java\.)", line))
    c = classify(failing(message, details, file=test_file), files)
    assert c.error_site is not None and (c.error_site.file, c.error_site.line) == site
    assert f"{site[0]}:{site[1]}" in c.suggestion


def test_bare_file_names_resolve_only_when_unique():
    files = {"pkg/cart/cart.go", "pkg/cart/cart_test.go", "a/index.js", "b/index.js"}
    c = classify(failing("cart_test.go:14: Total() got 6, want 7", file="pkg/cart/cart_test.go"), files)
    assert [(f.file, f.line) for f in c.project_frames] == [("pkg/cart/cart_test.go", 14)]
    # two index.js files: a bare "index.js" could be either, so it is no frame
    c = classify(failing("TypeError: x is not a function", "    at f (index.js:3:1)"), files)
    assert c.project_frames == []


def test_a_go_panic_stack_names_the_function_that_panicked():
    # A table-driven test's row recovered the panic and re-panicked: the goroutine's stack lists the
    # testing package, the test's deferred function, then the project's frames, innermost first.
    details = ("panic: runtime error: slice bounds out of range [:-1] [recovered]\n"
               "\tpanic: runtime error: slice bounds out of range [:-1]\n\ngoroutine 305 [running]:\n"
               "testing.tRunner.func1.2({0x648ae0, 0xc0000185b8})\n\t/usr/lib/go-1.19/src/testing/testing.go:1396 +0x24e\n"
               "panic({0x648ae0, 0xc0000185b8})\n\t/usr/lib/go-1.19/src/runtime/panic.go:884 +0x212\n"
               "github.com/google/go-cmp/cmp_test.TestDiff.func1.1.1()\n\t/w/ws/cmp/compare_test.go:153 +0x6a\n"
               "github.com/google/go-cmp/cmp.(*pointerReferences).Pop(0xc00039fe08?)\n"
               "\t/w/ws/cmp/report_references.go:67 +0x32\n"
               "github.com/google/go-cmp/cmp.formatOptions.FormatValue({0x2d, 0x1}, ...)\n"
               "\t/w/ws/cmp/report_reflect.go:181 +0x1b3a\n")
    files = {"cmp/compare_test.go", "cmp/report_references.go", "cmp/report_reflect.go"}
    c = classify(failing("panic: runtime error: slice bounds out of range [:-1] [recovered]", details,
                         file="cmp/compare_test.go"), files)
    assert c.kind is FailureKind.INDEX_OUT_OF_RANGE
    assert [(f.file, f.line) for f in c.project_frames] == [
        ("cmp/compare_test.go", 153), ("cmp/report_references.go", 67), ("cmp/report_reflect.go", 181)]
    assert c.error_site is not None and (c.error_site.file, c.error_site.line) == ("cmp/report_references.go", 67)
