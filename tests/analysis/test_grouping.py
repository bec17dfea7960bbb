"""Root-cause grouping and the whole-run ``FailureAnalysis``: failures sharing
an error site, a frame in the project's own code, or a message are one group
(unrelated ones are not), and each group's root comes first."""

from __future__ import annotations

from greenloop.analysis.failure_analysis import FailureAnalysis, analyze_report
from greenloop.analysis.grouping import group_failures
from greenloop.analysis.patterns import SUGGESTIONS, FailureKind, classify
from greenloop.parsers.models import Status, TestReport, TestResult

PY_FILES = {"shop/__init__.py", "shop/cart.py", "shop/tax.py", "tests/test_cart.py", "tests/test_tax.py"}
JS_FILES = {"src/cart.js", "src/price.js", "src/tax.js", "test/cart.test.js", "test/tax.test.js"}


def failing(id: str, message: str, details: str = "", file: str | None = None) -> TestResult:
    return TestResult(id=id, status=Status.FAILED, message=message, details=details, file=file)


def pytest_keyerror(test_line: int, via_total: bool) -> str:
    """pytest's long repr of ``KeyError: 'kiwi'`` raised in price(), called
    from the test directly or through total()."""
    hops = [f"    def test_x():\n>       assert ... \n\ntests/test_cart.py:{test_line}: \n_ _ _ _\n"]
    if via_total:
        hops.append(">       return sum(price(i) for i in items)\n\nshop/cart.py:9: \n_ _ _ _\n")
    hops.append(">       return PRICES[name]\nE       KeyError: 'kiwi'\n\nshop/cart.py:5: KeyError")
    return "\n".join(hops)


def by_id(tests: list[TestResult], files: set[str]):
    return [classify(t, files) for t in tests]


def test_shared_error_site_groups_and_the_most_direct_test_is_the_root():
    tests = [
        failing("tests/test_cart.py::test_total_kiwi", "KeyError: 'kiwi'", pytest_keyerror(20, True), "tests/test_cart.py"),
        failing("tests/test_cart.py::test_price_kiwi", "KeyError: 'kiwi'", pytest_keyerror(13, False), "tests/test_cart.py"),
        failing("tests/test_tax.py::test_rate", "AssertionError: assert 0.2 == 0.25",
                ">       assert rate() == 0.25\nE       AssertionError: assert 0.2 == 0.25\n\ntests/test_tax.py:4: AssertionError",
                "tests/test_tax.py"),
    ]
    groups = group_failures(by_id(tests, PY_FILES))
    assert [g.tests for g in groups] == [
        ["tests/test_cart.py::test_price_kiwi", "tests/test_cart.py::test_total_kiwi"],
        ["tests/test_tax.py::test_rate"],
    ]
    assert groups[0].root_test == "tests/test_cart.py::test_price_kiwi"  # calls price() directly
    assert "shop/cart.py:5" in groups[0].reason and groups[0].kind is FailureKind.KEY_ERROR
    assert groups[1].reason == "no shared cause found"


def test_a_shared_frame_in_project_code_groups_failures_with_different_sites():
    tests = [
        failing("cart adds", "TypeError: Cannot read properties of undefined (reading 'rate')",
                "    at price (/w/proj/src/price.js:5:12)\n    at total (/w/proj/src/cart.js:9:20)\n"
                "    at Object.<anonymous> (/w/proj/test/cart.test.js:6:5)\n    at node:internal/process:1:1",
                "test/cart.test.js"),
        failing("cart taxes", "RangeError: Invalid array length",
                "    at taxes (/w/proj/src/tax.js:3:9)\n    at total (/w/proj/src/cart.js:9:20)\n"
                "    at Object.<anonymous> (/w/proj/test/cart.test.js:12:5)", "test/cart.test.js"),
        # its own site and frames: not related to the others
        failing("tax rounds", "expect(received).toBe(expected)\n\nExpected: 3\nReceived: 2",
                "    at Object.<anonymous> (/w/proj/test/tax.test.js:4:20)", "test/tax.test.js"),
    ]
    classified = by_id(tests, JS_FILES)
    assert [c.error_site.file for c in classified] == ["src/price.js", "src/tax.js", "test/tax.test.js"]
    groups = group_failures(classified)
    assert [g.tests for g in groups] == [["cart adds", "cart taxes"], ["tax rounds"]]
    assert "src/cart.js:9" in groups[0].reason


def test_lines_of_the_same_test_file_are_not_a_shared_cause():
    tests = [
        failing("a", "AssertionError: assert 1 == 2", "tests/test_cart.py:4: AssertionError", "tests/test_cart.py"),
        failing("b", "AssertionError: assert 3 == 5", "tests/test_cart.py:8: AssertionError", "tests/test_cart.py"),
    ]
    assert [g.tests for g in group_failures(by_id(tests, PY_FILES))] == [["a"], ["b"]]


def test_same_message_without_a_site_groups_but_different_messages_do_not():
    tests = [
        failing("tests/test_api.py", "ModuleNotFoundError: No module named 'requests'"),
        failing("tests/test_client.py", "ModuleNotFoundError: No module named 'requests'"),
        failing("tests/test_db.py", "ModuleNotFoundError: No module named 'psycopg'"),  # masked: same signature
        failing("tests/test_slow.py", "Failed: Timeout >5.0s"),
    ]
    groups = group_failures(by_id(tests, PY_FILES))
    assert [g.tests for g in groups] == [
        ["tests/test_api.py", "tests/test_client.py", "tests/test_db.py"], ["tests/test_slow.py"],
    ]
    assert groups[0].reason == "fail with the same import_error message"


def test_build_and_fixture_errors_are_fixed_first_and_lead_their_group():
    setup = ">       raise ConnectionError('db down')\nE       ConnectionError: db down\n\ntests/conftest.py:7: ConnectionError"
    files = PY_FILES | {"tests/conftest.py"}
    tests = [
        failing("tests/test_cart.py::test_a", "AssertionError: assert 1 == 2", "tests/test_cart.py:4: AssertionError",
                "tests/test_cart.py"),
        failing("tests/test_tax.py::test_b", "ConnectionError: db down", "tests/conftest.py:7: ConnectionError",
                "tests/test_tax.py"),
        failing("tests/test_tax.py::test_c", "ERROR at setup of test_c", setup, "tests/test_tax.py"),
        failing("shop", "SyntaxError: invalid syntax", 'E     File "/w/shop/tax.py", line 3', None),
    ]
    groups = group_failures(by_id(tests, files))
    assert [g.tests for g in groups] == [
        ["shop"], ["tests/test_tax.py::test_c", "tests/test_tax.py::test_b"], ["tests/test_cart.py::test_a"],
    ]
    assert [g.kind for g in groups] == [FailureKind.BUILD_ERROR, FailureKind.FIXTURE_ERROR, FailureKind.ASSERTION]
    assert groups[1].root_test == "tests/test_tax.py::test_c"


def report(tests: list[TestResult], **kw) -> TestReport:
    return TestReport(framework="pytest", tests=tests, **kw)


def test_failure_analysis_is_typed_and_names_one_root_cause(tmp_path):
    for rel in PY_FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    tests = [
        failing("tests/test_cart.py::test_total_kiwi", "KeyError: 'kiwi'", pytest_keyerror(20, True), "tests/test_cart.py"),
        failing("tests/test_cart.py::test_price_kiwi", "KeyError: 'kiwi'", pytest_keyerror(13, False), "tests/test_cart.py"),
        failing("tests/test_tax.py::test_none", "AttributeError: 'NoneType' object has no attribute 'rate'",
                "tests/test_tax.py:9: AttributeError", "tests/test_tax.py"),
        TestResult(id="tests/test_tax.py::test_ok", status=Status.PASSED),
    ]
    analysis = analyze_report(report(tests), tmp_path)
    assert FailureAnalysis.model_validate_json(analysis.model_dump_json()) == analysis
    assert [c.test_id for c in analysis.failures] == [t.id for t in tests[:3]]
    assert [(p.type, p.frequency, p.test_names) for p in analysis.error_patterns] == [
        (FailureKind.KEY_ERROR, 2, ["tests/test_cart.py::test_total_kiwi", "tests/test_cart.py::test_price_kiwi"]),
        (FailureKind.NULL_REFERENCE, 1, ["tests/test_tax.py::test_none"]),
    ]
    assert analysis.error_patterns[0].message == "KeyError: 'kiwi'"
    # the suggestions point at the error site
    assert analysis.suggestions == [
        f"{SUGGESTIONS[FailureKind.KEY_ERROR]} (error site shop/cart.py:5)",
        f"{SUGGESTIONS[FailureKind.NULL_REFERENCE]} (error site tests/test_tax.py:9)",
    ]
    assert analysis.affected_files == ["shop/cart.py", "tests/test_tax.py", "tests/test_cart.py"]
    assert analysis.root_cause == "2 of 3 failures fail at the same place, shop/cart.py:5: likely one root cause"
    assert analysis.groups[0].root_test == "tests/test_cart.py::test_price_kiwi"


def test_root_cause_for_builds_environments_and_independent_failures():
    build = report([failing("pkg", "error[E0432]: unresolved import `crate::pricing`")], build_error=True)
    assert analyze_report(build, None).root_cause.startswith("the build fails")
    env = report([failing(f"t{i}", f"Failed: Timeout >{i}.0s", f"+++ Timeout +++ {i}") for i in range(3)])
    # three timeouts with different messages: no shared cause, but one kind everywhere
    env.tests[0].message, env.tests[1].message = "Failed: Timeout", "test timed out after 5s"
    assert analyze_report(env, None).root_cause == "every failure is a timeout: likely configuration or environment"
    mixed = report([failing("a", "KeyError: 'x'"), failing("b", "IndexError: list index out of range")])
    assert analyze_report(mixed, None).root_cause == "2 independent failure group(s)"
    assert analyze_report(report([TestResult(id="ok", status=Status.PASSED)]), None).root_cause == "no failures"


def _project(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_three_bugs_with_one_generic_assertion_message_are_three_groups(tmp_path):
    """A bare assertion message says nothing about where the bug is: grouping follows the suspects."""
    _project(tmp_path, {
        "lib/a.py": "def area(w):\n    return w * 3\n", "lib/b.py": "def perimeter(w):\n    return w * 5\n",
        "lib/c.py": "def volume(w):\n    return w * 7\n",
        "tests/test_geo.py": "from lib.a import area\nfrom lib.b import perimeter\nfrom lib.c import volume\n\n\n"
                             "def test_area():\n    assert area(2) == 4\n\n\ndef test_perimeter():\n"
                             "    assert perimeter(2) == 8\n\n\ndef test_volume():\n    assert volume(2) == 8\n"})
    tests = [failing(f"tests/test_geo.py::test_{n}", "AssertionError: assert 6 == 4",
                     f"tests/test_geo.py:{line}: AssertionError", "tests/test_geo.py")
             for n, line in (("area", 7), ("perimeter", 11), ("volume", 15))]
    for t, line in zip(tests, (6, 10, 14)):
        t.line = line
    analysis = analyze_report(TestReport(framework="pytest", tests=tests), tmp_path)
    assert sorted(len(g.tests) for g in analysis.groups) == [1, 1, 1]


def test_two_messages_one_suspect_are_one_group(tmp_path):
    """One broken function fails two tests with unrelated messages: one group, one request."""
    _project(tmp_path, {
        "lib/text.py": "def slug(s):\n    return s.lower().replace(' ', '_')\n\n\n"
                       "def title(s):\n    return s.title()\n",
        "tests/test_text.py": "from lib.text import slug\n\n\ndef test_slug_spaces():\n"
                              "    assert slug('A B') == 'a-b'\n\n\ndef test_slug_len():\n"
                              "    assert len(slug('A B C')) == 4\n"})
    tests = [failing("tests/test_text.py::test_slug_spaces", "AssertionError: assert 'a_b' == 'a-b'",
                     "tests/test_text.py:5: AssertionError", "tests/test_text.py"),
             failing("tests/test_text.py::test_slug_len", "AssertionError: assert 5 == 4",
                     "tests/test_text.py:9: AssertionError", "tests/test_text.py")]
    tests[0].line, tests[1].line = 4, 8
    analysis = analyze_report(TestReport(framework="pytest", tests=tests), tmp_path)
    assert [sorted(g.tests) for g in analysis.groups] == [sorted(t.id for t in tests)]
    assert analysis.groups[0].reason == "share their most likely cause, slug (lib/text.py:1)"


def test_a_failure_reaching_a_larger_groups_cause_through_its_own_function_joins_that_group():
    # One bug in ``separator`` (shop/fmt.py): three failures rank it first; a fourth reaches it through
    # ``duration`` and ranks it second; a fifth only has it fourth (too far down) and stays alone.
    from greenloop.domain.suspects import Suspect

    def s(function: str, start: int) -> Suspect:
        return Suspect(file="shop/fmt.py", function=function, start=start, end=start + 3, score=1.0)

    sep, dur, other = s("separator", 3), s("duration", 20), s("other", 40)
    tests = [failing(f"tests/test_cart.py::test_{n}", "AssertionError: assert '1.000' == '1,000'",
                     file="tests/test_cart.py") for n in "abcde"]
    ranked = {"tests/test_cart.py::test_a": [sep], "tests/test_cart.py::test_b": [sep, dur],
              "tests/test_cart.py::test_c": [sep], "tests/test_cart.py::test_d": [dur, sep, other],
              "tests/test_cart.py::test_e": [other, dur, s("x", 60), sep]}
    groups = group_failures(by_id(tests, PY_FILES), ranked)
    assert [sorted(g.tests) for g in groups] == [
        [f"tests/test_cart.py::test_{n}" for n in "abcd"], ["tests/test_cart.py::test_e"]]
    assert "separator" in groups[0].reason
    # Without the shared cause among its runners-up, the fourth is a group of its own.
    ranked["tests/test_cart.py::test_d"] = [dur, other]
    assert [len(g.tests) for g in group_failures(by_id(tests, PY_FILES), ranked)] == [3, 1, 1]


def test_failures_whose_shared_helper_ranks_first_only_with_agreement_are_one_group(tmp_path):
    """Each test names its own function and a shared helper that holds the bug: alone, each ranks
    its own function first; with the other failing tests' agreement (as the fixer's first message
    ranks them) the helper is first for all, and one request serves the three."""
    _project(tmp_path, {
        "lib/helpers.py": "def same(a, b):\n    return a != b\n",
        "lib/a.py": "def alpha(x):\n    return x\n", "lib/b.py": "def beta(x):\n    return x\n",
        "lib/c.py": "def gamma(x):\n    return x\n",
        "tests/test_ids.py": "from lib.a import alpha\nfrom lib.b import beta\nfrom lib.c import gamma\n"
                             "from lib.helpers import same\n\n\n"
                             "def test_alpha():\n    assert same(alpha(1), 1)\n\n\ndef test_beta():\n"
                             "    assert same(beta(2), 2)\n\n\ndef test_gamma():\n    assert same(gamma(3), 3)\n"})
    tests = [failing(f"tests/test_ids.py::test_{n}", "AssertionError: assert False",
                     f"tests/test_ids.py:{line + 1}: AssertionError", "tests/test_ids.py")
             for n, line in (("alpha", 7), ("beta", 11), ("gamma", 15))]
    for t, line in zip(tests, (7, 11, 15)):
        t.line = line
    analysis = analyze_report(TestReport(framework="pytest", tests=tests), tmp_path)
    assert [sorted(g.tests) for g in analysis.groups] == [sorted(t.id for t in tests)]
    assert analysis.groups[0].reason == "share their most likely cause, same (lib/helpers.py:1)"
