"""What the model sees first, on real runs: the code that must change is in the analyzer's
and the fixer's FIRST message, although it sits two calls below the test and no traceback
names it (an assertion in the test is all the failure says). Real workflows on the real
dev server, the project's own toolchain in the real sandbox, the scripted LLM, whose
request log is what the model would have read.

Each project holds one bug that fails two tests, in a function the tests reach only
through another (``total -> discount``); a third test runs the same path's other branch
and passes, a fourth runs a neighbour and passes."""

from __future__ import annotations

import shutil
from pathlib import Path

from greenloop.analysis.localize import Spectrum
from greenloop.llm.scripted_server import message_text
from tests.live.conftest import npm_install, require
from tests.workflows.conftest import drive, fix_request

# The fixer's first message is bounded (the goal: a median of at most 12,000 characters).
MOST_CHARS = 12_000

GO = {
    "go.mod": "module example.com/shop\n\ngo 1.19\n",
    "money.go": "package shop\n\n// Price rounds an amount to whole cents.\nfunc Price(x float64) float64 {\n"
                "\treturn float64(int(x*100+0.5)) / 100\n}\n",
    "rules.go": "package shop\n\n// Discount takes 10% off orders of 100 or more.\nfunc Discount(total float64) float64 {\n"
                "\tif total >= 100 {\n\t\treturn Price(total * 0.9)\n\t}\n\treturn Price(total * 0.9)\n}\n",
    "cart.go": "package shop\n\nfunc Subtotal(items []float64) float64 {\n\tsum := 0.0\n"
               "\tfor _, x := range items {\n\t\tsum += x\n\t}\n\treturn Price(sum)\n}\n\n"
               "func Total(items []float64) float64 {\n\treturn Discount(Subtotal(items))\n}\n",
    "cart_test.go": "package shop\n\nimport \"testing\"\n\n"
                    "func TestSmallOrderHasNoDiscount(t *testing.T) {\n"
                    "\tif got := Total([]float64{10, 20}); got != 30 {\n\t\tt.Errorf(\"Total = %v, want 30\", got)\n\t}\n}\n\n"
                    "func TestTinyOrderHasNoDiscount(t *testing.T) {\n"
                    "\tif got := Total([]float64{1}); got != 1 {\n\t\tt.Errorf(\"Total = %v, want 1\", got)\n\t}\n}\n\n"
                    "func TestBigOrderIsDiscounted(t *testing.T) {\n"
                    "\tif got := Total([]float64{100, 100}); got != 180 {\n\t\tt.Errorf(\"Total = %v, want 180\", got)\n"
                    "\t}\n}\n\n"
                    "func TestSubtotal(t *testing.T) {\n"
                    "\tif got := Subtotal([]float64{1, 2}); got != 3 {\n\t\tt.Errorf(\"Subtotal = %v, want 3\", got)\n"
                    "\t}\n}\n",
}
GO_BUG, GO_FIXED = "\t}\n\treturn Price(total * 0.9)\n}", "\t}\n\treturn Price(total)\n}"
GO_FAILING = ["example.com/shop::TestSmallOrderHasNoDiscount", "example.com/shop::TestTinyOrderHasNoDiscount"]

JS = {
    "package.json": '{\n  "name": "shop",\n  "version": "1.0.0",\n  "private": true,\n  "type": "module",\n'
                    '  "scripts": { "test": "vitest run" },\n  "devDependencies": { "vitest": "^4.1.12" }\n}\n',
    "src/money.js": "export function price(x) {\n  return Math.round(x * 100) / 100;\n}\n",
    "src/rules.js": "import { price } from './money.js';\n\n// 10% off orders of 100 or more.\n"
                    "export function discount(total) {\n  if (total >= 100) {\n    return price(total * 0.9);\n  }\n"
                    "  return price(total * 0.9);\n}\n",
    "src/cart.js": "import { price } from './money.js';\nimport { discount } from './rules.js';\n\n"
                   "export function subtotal(items) {\n  return price(items.reduce((a, b) => a + b, 0));\n}\n\n"
                   "export function total(items) {\n  return discount(subtotal(items));\n}\n",
    "test/cart.test.js": "import { describe, it, expect } from 'vitest';\nimport { subtotal, total } from '../src/cart.js';\n\n"
                         "describe('total', () => {\n"
                         "  it('has no discount for a small order', () => {\n    expect(total([10, 20])).toBe(30);\n  });\n"
                         "  it('has no discount for a tiny order', () => {\n    expect(total([1])).toBe(1);\n  });\n"
                         "  it('discounts a big order', () => {\n    expect(total([100, 100])).toBe(180);\n  });\n"
                         "});\n\n"
                         "it('adds the subtotal', () => {\n  expect(subtotal([1, 2])).toBe(3);\n});\n",
}
JS_BUG, JS_FIXED = "  }\n  return price(total * 0.9);\n}", "  }\n  return price(total);\n}"
JS_FAILING = ["total > has no discount for a small order",
              "total > has no discount for a tiny order"]


def project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def scenario(path: str, old: str, new: str) -> dict:
    """The analyzer answers; the fixer edits with Claude's own editor tool, then says what it did."""
    return {"name": "below-the-test", "rules": [
        {"name": "analyzer", "trigger": {"role": "analyzer"}, "response": {"text": "The discount is applied to every order."}},
        {"name": "fix", "trigger": {"role": "fixer", "turn": 1}, "response": {"tool_calls": [
            {"name": "str_replace_based_edit_tool",
             "input": {"command": "str_replace", "path": path, "old_str": old, "new_str": new}}]}},
        {"name": "done", "trigger": {"role": "fixer", "turn": 2},
         "response": {"text": "discount() took 10% off every order; small orders now keep their price."}},
    ]}


def first_messages(server, role: str) -> dict[str, str]:
    """Each test's first message to ``role`` (its first conversation's first turn)."""
    out: dict[str, str] = {}
    for r in server.requests:
        if r.role == role and r.turn == 1 and r.iteration == 1:
            out.setdefault(r.context.split("/", 1)[1], message_text(r.body["messages"][0]))
    return out


def assert_shows_the_bug(messages: dict[str, str], buggy_line: str, function: str) -> None:
    assert messages, "no first message was sent"
    for test_id, text in messages.items():
        assert buggy_line in text, f"the first message for {test_id} does not show the buggy line:\n{text}"
        suspects = text[text.index("Suspects"):] if "Suspects" in text else text
        assert function in suspects, (test_id, text)
        assert len(text) <= MOST_CHARS, (test_id, len(text))


async def test_go_the_function_two_calls_below_the_test_is_in_the_first_message(temporal_env, scripted, tmp_path):
    require("go")
    repo = project(tmp_path / "shop-go", GO)
    server = scripted(scenario("rules.go", GO_BUG, GO_FIXED))
    summary, _ = await drive(temporal_env, fix_request(repo, tmp_path, test_command="go test -json ./..."))

    assert summary.state == "completed" and summary.initial.failed == 2 and summary.final.failed == 0
    assert sorted(summary.fixed) == GO_FAILING
    # No Go traceback names Discount and Go records no per-test coverage: the calls from the test do.
    for role in ("analyzer", "fixer"):
        assert_shows_the_bug(first_messages(server, role), "return Price(total * 0.9)", "Discount")
    fixer = first_messages(server, "fixer")[GO_FAILING[0]]
    assert "rules.go" in fixer and "func Discount(total float64) float64 {" in fixer


async def test_vitest_the_function_two_calls_below_the_test_is_in_the_first_message(temporal_env, scripted,
                                                                                      tmp_path):
    require("node", "npm")
    repo = project(tmp_path / "shop-js", JS)
    npm_install(repo)
    server = scripted(scenario("src/rules.js", JS_BUG, JS_FIXED))
    request = fix_request(repo, tmp_path)
    summary, _ = await drive(temporal_env, request)

    assert summary.state == "completed" and summary.framework == "vitest"
    assert summary.initial.failed == 2 and summary.final.failed == 0 and sorted(summary.fixed) == JS_FAILING
    for role in ("analyzer", "fixer"):
        assert_shows_the_bug(first_messages(server, role), "return price(total * 0.9);", "discount")
    fixer = first_messages(server, "fixer")[JS_FAILING[0]]
    assert "export function discount(total) {" in fixer
    # The flaky-check run recorded V8 coverage: the failing tests' file ran discount's body.
    spectrum = Spectrum.load(Path(request.run_dir))
    assert spectrum is not None
    assert 6 in spectrum.covered(JS_FAILING[0])["src/rules.js"]
    shutil.rmtree(repo / "node_modules", ignore_errors=True)
