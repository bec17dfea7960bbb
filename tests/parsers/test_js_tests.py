"""The one describe/it/test scanner of JavaScript sources (parsers/source/js_tests.py),
read through both of its views: Jest/Vitest (``collect_tests``) and Mocha/node:test
(``scan_spec``). Each case is a title that one of the two former evaluators could
not know; the runners' documented behaviour says what the title is."""

from __future__ import annotations

from greenloop.parsers.source.js_tests import collect_tests, iter_listable, iter_nodes, scan_spec


def _names(src: str, flavor: str) -> list[tuple[tuple[str, ...], str]]:
    return [(t.path, t.title) for t in iter_listable(collect_tests("a.test.js", src, flavor))]


def test_jest_titles_from_counting_loops_object_entries_and_expressions() -> None:
    src = (
        "const LIMITS = { low: 1, high: 9 };\n"
        "describe('calc ' + 'ops', () => {\n"
        "  for (let i = 0; i < 2; i++) {\n"
        "    test(`case ${i + 1}`, () => {});\n"
        "  }\n"
        "  Object.entries(LIMITS).forEach(([name, value]) => {\n"
        "    it(name.toUpperCase() + ' is ' + value, () => {});\n"
        "  });\n"
        "  ['a', 'b'].map((x, n) => test(`${n}:${x}`, () => {}));\n"
        "});\n"
    )
    ft = collect_tests("a.test.js", src, "jest")
    assert ft.complete
    assert [(t.path, t.title, t.line) for t in ft.tests] == [
        (("calc ops",), "case 1", 4), (("calc ops",), "case 2", 4),
        (("calc ops",), "LOW is 1", 7), (("calc ops",), "HIGH is 9", 7),
        (("calc ops",), "0:a", 9), (("calc ops",), "1:b", 9)]


def test_vitest_options_object_skips_and_marks_todo() -> None:
    # Vitest's test(name, options, fn): { skip: true } and { todo: true } as documented.
    src = (
        "test('off', { skip: true }, () => {});\n"
        "test('later', { todo: true }, () => {});\n"
        "test('on', { timeout: 100 }, () => {});\n"
    )
    tests = collect_tests("a.test.ts", src, "vitest").tests
    assert [(t.title, t.skip, t.todo) for t in tests] == [
        ("off", True, False), ("later", False, True), ("on", False, False)]


def test_each_table_and_tagged_template_read_constants_defined_before() -> None:
    src = (
        "const BASE = 10;\n"
        "const ROWS = [[1, BASE + 1], [2, BASE + 2]];\n"
        "describe.each(ROWS)('add %i', (n, expected) => {\n"
        "  test(`gives ${expected}`, () => {});\n"
        "});\n"
        "test.each`\n"
        "  a     | b\n"
        "  ${BASE} | ${'x'}\n"
        "`('$a with $b', ({ a, b }) => {});\n"
    )
    assert _names(src, "jest") == [
        (("add 1",), "gives 11"), (("add 2",), "gives 12"), ((), "10 with x")]


def test_each_over_unknown_rows_is_matched_not_listed() -> None:
    src = (
        "import { rows } from './rows';\n"
        "describe.each(rows)('row %s', (r) => {\n"
        "  test('works', () => {});\n"
        "});\n"
    )
    ft = collect_tests("a.test.js", src, "jest")
    assert not ft.complete and list(iter_listable(ft)) == []
    test = ft.tests[0]
    assert test.matches(("row 7",), "works") and not test.matches(("col 7",), "works")


def test_tests_in_a_loop_of_unknown_length_are_not_listed_for_jest() -> None:
    src = "for (const name of names) {\n  test('fixed title', () => {});\n}\n"
    ft = collect_tests("a.test.js", src, "jest")
    assert not ft.complete and list(iter_listable(ft)) == []
    assert ft.tests[0].matches((), "fixed title")
    # The Mocha view keeps the literal title (it matches by title, it does not list).
    node = next(n for n in iter_nodes(scan_spec("a.spec.js", src, "mocha")) if n.kind == "test")
    assert node.title == "fixed title" and node.uncertain


def test_skipif_runif_failing_and_only() -> None:
    src = (
        "test.skipIf(true)('skipped', () => {});\n"
        "test.runIf(1 + 1 === 2)('unknown condition', () => {});\n"
        "test.runIf(false)('not run', () => {});\n"
        "test.failing('expected to fail', () => {});\n"
        "fit('focused', () => {});\n"
    )
    ft = collect_tests("a.test.js", src, "jest")
    by_title = {t.title: t for t in ft.tests}
    assert by_title["skipped"].skip and by_title["not run"].skip
    assert by_title["unknown condition"].conditional and not by_title["unknown condition"].skip
    assert by_title["expected to fail"].fails
    assert ft.has_only and by_title["focused"].only


def test_mocha_and_node_read_jest_style_titles_too() -> None:
    # Formerly only the Jest/Vitest evaluator knew these: test.extend fixtures,
    # a TypeScript method named like a test function, xtest.
    src = (
        "const myTest = test.extend({ db: async ({}, use) => use(1) });\n"
        "class Helper {\n  test(): void { it('in a helper', () => {}); }\n}\n"
        "myTest('with fixture', () => {});\n"
        "xtest('off', () => {});\n"
    )
    tests = [n for n in iter_nodes(scan_spec("a.test.ts", src, "node")) if n.kind == "test"]
    assert [(n.title, n.skip) for n in tests] == [("in a helper", False), ("with fixture", False), ("off", True)]


def test_hooks_are_the_runners_own() -> None:
    # setup()/teardown() are Mocha TDD hooks; in a Jest file they are the project's functions.
    src = "suite('s', () => {\n  setup(() => {});\n  test('t', () => {});\n});\n"
    mocha = scan_spec("a.spec.js", src, "mocha")
    assert [c.func for c in mocha[0].children if c.kind == "hook"] == ["before each"]
    ft = collect_tests("a.test.js", src, "jest")
    assert ft.suites[0].hooks == frozenset()


def test_garbage_and_truncated_sources_do_not_raise() -> None:
    for src in ("describe('a', () => { it(`x${", "test.each([[1,)('%s'", "\x00\x01 it((((", "for (;;) {"):
        collect_tests("a.test.js", src, "vitest")
        scan_spec("a.spec.js", src, "mocha")
