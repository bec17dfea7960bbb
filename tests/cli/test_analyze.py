"""``greenloop analyze`` over a saved run: pytest really runs on a small
failing project, its output is saved, and the command (a real subprocess)
classifies, groups and suggests, as a table or as a ``FailureAnalysis``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from greenloop.analysis.failure_analysis import FailureAnalysis
from greenloop.analysis.patterns import SUGGESTIONS, FailureKind

MAIN = Path(__file__).resolve().parents[2]

CART = '''PRICES = {"apple": 3, "pear": 4}


def price(name):
    return PRICES[name]


def total(items):
    return sum(price(i) for i in items) - 1


def first(items):
    return items[0]
'''
TESTS = '''from shop.cart import first, price, total


def test_total():
    assert total(["apple", "pear"]) == 7


def test_price_kiwi():
    assert price("kiwi") == 2


def test_total_kiwi():
    assert total(["kiwi"]) == 0


def test_first_empty():
    assert first([]) is None


def test_ok():
    assert price("apple") == 3
'''


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory) -> tuple[Path, Path]:
    proj = tmp_path_factory.mktemp("shop")
    (proj / "shop").mkdir()
    (proj / "shop" / "__init__.py").write_text("")
    (proj / "shop" / "cart.py").write_text(CART)
    (proj / "tests").mkdir()
    (proj / "tests" / "test_cart.py").write_text(TESTS)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
                         cwd=proj, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    out = proj.parent / f"{proj.name}.stdout"
    out.write_text(run.stdout)
    return proj, out


def analyze(proj: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "greenloop.cli.main", "analyze", "--command", "python -m pytest -q", "--exit-code", "1",
         "--stdout", str(out), "--cwd", str(proj), *extra],
        cwd=MAIN, capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )


def test_json_output_is_a_failure_analysis(saved_run):
    proj, out = saved_run
    done = analyze(proj, out, "--json")
    assert done.returncode == 0, done.stderr
    analysis = FailureAnalysis.model_validate_json(done.stdout)
    kinds = {c.test_id.split("::")[1]: c.kind for c in analysis.failures}
    assert kinds == {"test_total": FailureKind.ASSERTION, "test_price_kiwi": FailureKind.KEY_ERROR,
                     "test_total_kiwi": FailureKind.KEY_ERROR, "test_first_empty": FailureKind.INDEX_OUT_OF_RANGE}
    by_name = {c.test_id.split("::")[1]: c for c in analysis.failures}
    assert (by_name["test_total"].expected, by_name["test_total"].actual) == ("7", "6")
    assert by_name["test_total"].evidence == "AssertionError: assert 6 == 7"
    site = by_name["test_total_kiwi"].error_site
    assert (site.file, site.line) == ("shop/cart.py", 5)  # raised in price(), reached through total()
    # the two KeyErrors are one group, rooted at the test that calls price() directly
    group = next(g for g in analysis.groups if len(g.tests) > 1)
    assert group.root_test == "tests/test_cart.py::test_price_kiwi"
    assert group.tests == ["tests/test_cart.py::test_price_kiwi", "tests/test_cart.py::test_total_kiwi"]
    assert f"{SUGGESTIONS[FailureKind.KEY_ERROR]} (error site shop/cart.py:5)" in analysis.suggestions
    assert sorted(analysis.affected_files) == ["shop/cart.py", "tests/test_cart.py"]
    # --format json is the same document
    assert FailureAnalysis.model_validate_json(analyze(proj, out, "--format", "json").stdout) == analysis


def test_table_output_names_kinds_groups_and_suggestions(saved_run):
    proj, out = saved_run
    done = analyze(proj, out)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "root cause: 2 of 4 failures share their most likely cause, price (shop/cart.py:4): likely one root cause" \
        in text
    for kind in ("assertion", "key_error", "index_out_of_range"):
        assert kind in text
    assert "shop/cart.py:13" in text  # first([]) fails in first()
    assert ("group of 2 (share their most likely cause, price (shop/cart.py:4)): "
            "fix tests/test_cart.py::test_price_kiwi first") in text
    assert f"• {SUGGESTIONS[FailureKind.INDEX_OUT_OF_RANGE]} (error site shop/cart.py:13)" in text


def test_a_missing_saved_output_is_a_typed_error(saved_run, tmp_path):
    proj, _ = saved_run
    done = analyze(proj, tmp_path / "nope.txt")
    assert done.returncode == 2
    assert "validation_error" in done.stderr and "nope.txt" in done.stderr
