"""Edit sets that delete, skip or weaken tests are named."""

from __future__ import annotations

import pytest

from greenloop.workspace.fake_fix import fake_fix_reasons

PY = "def test_total():\n    assert total() == 5\n\ndef test_other():\n    assert other()\n"


@pytest.mark.parametrize("after, reason", [
    ("def test_other():\n    assert other()\n", "removes 1 test definition"),
    ("import pytest\n@pytest.mark.skip\n" + PY, "skip/xfail/ignore marker"),
    (PY.replace("    assert total() == 5\n", "    total()\n"), "removes 1 assertion"),
    (PY.replace("def test_total():\n", "@pytest.mark.xfail\ndef test_total():\n"), "marker"),
])
def test_python_fake_fixes(after, reason):
    reasons = fake_fix_reasons([("tests/test_cart.py", PY, after)], "tests/test_cart.py")
    assert any(reason in r for r in reasons), reasons


@pytest.mark.parametrize("before, after", [
    ("it('adds', () => { expect(a).toBe(1) })\n", "it.skip('adds', () => { expect(a).toBe(1) })\n"),
    ("func TestX(t *testing.T) {\n\tif x != 1 { t.Errorf(\"x\") }\n}\n",
     "func TestX(t *testing.T) {\n\tt.Skip(\"later\")\n\tif x != 1 { t.Errorf(\"x\") }\n}\n"),
    ("#[test]\nfn adds() { assert_eq!(add(1, 1), 2); }\n", "#[test]\n#[ignore]\nfn adds() { assert_eq!(add(1, 1), 2); }\n"),
    ("@Test\nvoid adds() { assertEquals(2, add(1, 1)); }\n", "@Disabled\n@Test\nvoid adds() { assertEquals(2, add(1, 1)); }\n"),
])
def test_other_languages_skips(before, after):
    assert fake_fix_reasons([("test/x_test", before, after)], None)


def test_deleting_a_test_file():
    assert fake_fix_reasons([("tests/test_cart.py", PY, None)], None) == ["deletes the test file tests/test_cart.py"]


def test_a_real_fix_is_not_flagged():
    before = "def total(items):\n    return sum(items) - 1\n"
    after = "def total(items):\n    return sum(items)\n"
    assert fake_fix_reasons([("shop/cart.py", before, after)], "tests/test_cart.py") == []
    # Changing a wrong expectation keeps the assertion: allowed.
    assert fake_fix_reasons([("tests/test_cart.py", PY, PY.replace("== 5", "== 4"))], "tests/test_cart.py") == []
