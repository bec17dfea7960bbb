"""The normalizer's locate step: a result the parser left without a file or a
line gets its definition from its framework's ``locate`` (registry.Parser),
read from the sources under the run's root. The projects below follow each
framework's documented discovery rules; the results are what the parsers
leave when the output names a test but not where it is."""

from __future__ import annotations

from pathlib import Path

from greenloop.parsers import RunOutput
from greenloop.parsers.models import Status, TestReport, TestResult
from greenloop.parsers.normalize import finish
from tests.parsers.helpers import write_files


def located(root: Path, framework: str, command: str, *tests: TestResult) -> dict[str, tuple[str | None, int | None]]:
    """id -> (file, line) after the normalizer ran over ``tests``."""
    report = finish(TestReport(framework=framework, tests=list(tests)),
                    RunOutput(command=command, exit_code=1, cwd=root))
    return {t.id: (t.file, t.line) for t in report.tests}


# pytest: functions named test* in test_*.py files, classes named Test*; a
# parametrized test's id carries its parameter ids; the line is the ``def``'s,
# not the first decorator's.
PYTEST_SHOP = '''\
import pytest


@pytest.mark.slow
@pytest.mark.parametrize("qty,price", [(1, 2), (3, 4)])
def test_price(qty, price):
    assert qty < price


class TestCart:
    def helper(self):
        pass

    def test_add(self):
        assert True
'''


def test_pytest_places_a_node_id_at_its_def_line(tmp_path: Path) -> None:
    write_files(tmp_path, {"tests/test_shop.py": PYTEST_SHOP})
    where = located(
        tmp_path, "pytest", "pytest -q",
        TestResult(id="tests/test_shop.py::test_price[3-4]", status=Status.FAILED, file="tests/test_shop.py"),
        TestResult(id="tests/test_shop.py::TestCart::test_add", status=Status.PASSED),
        # a module skipped or broken at import is its own entry: a file, no line
        TestResult(id="tests/test_shop.py", status=Status.SKIPPED, file="tests/test_shop.py"),
        # an id the sources do not define keeps what the output said
        TestResult(id="tests/test_shop.py::test_gone", status=Status.FAILED, file="tests/test_shop.py"),
    )
    assert where == {
        "tests/test_shop.py::test_price[3-4]": ("tests/test_shop.py", 6),
        "tests/test_shop.py::TestCart::test_add": ("tests/test_shop.py", 14),
        "tests/test_shop.py": ("tests/test_shop.py", None),
        "tests/test_shop.py::test_gone": ("tests/test_shop.py", None),
    }


def test_what_the_output_said_is_kept(tmp_path: Path) -> None:
    write_files(tmp_path, {"tests/test_shop.py": PYTEST_SHOP})
    where = located(
        tmp_path, "pytest", "pytest",
        # a line the output gave stays
        TestResult(id="tests/test_shop.py::TestCart::test_add", status=Status.FAILED, file="tests/test_shop.py",
                   line=15),
        # a file the output gave that is not the definition's gets no line from it
        TestResult(id="tests/test_shop.py::test_price[1-2]", status=Status.FAILED, file="conftest.py"),
    )
    assert where == {"tests/test_shop.py::TestCart::test_add": ("tests/test_shop.py", 15),
                     "tests/test_shop.py::test_price[1-2]": ("conftest.py", None)}


def test_jest_places_a_describe_path_at_its_test_call(tmp_path: Path) -> None:
    # Jest names a test by its describe titles and its own, joined with " › ".
    write_files(tmp_path, {"__tests__/cart.test.js": (
        "const { add } = require('../cart');\n"
        "\n"
        "describe('cart', () => {\n"
        "  describe('add', () => {\n"
        "    it('sums two items', () => {\n"
        "      expect(add(1, 2)).toBe(3);\n"
        "    });\n"
        "  });\n"
        "  test('starts empty', () => {});\n"
        "});\n")})
    file = "__tests__/cart.test.js"
    where = located(
        tmp_path, "jest", "npx jest",
        TestResult(id="cart › add › sums two items", status=Status.FAILED, file=file, suite=file),
        TestResult(id="cart › starts empty", status=Status.PASSED, file=file, suite=file),
        # a file that failed to load is placed by the parser, from its error
        TestResult(id=file, status=Status.ERRORED, file=file, suite=file),
    )
    assert where == {"cart › add › sums two items": (file, 5), "cart › starts empty": (file, 9), file: (file, None)}


GO_CART = """\
package cart

import "testing"

func helper() {}

func TestAdd(t *testing.T) {
	t.Run("one item", func(t *testing.T) {})
}

func TestEmpty(t *testing.T) {}
"""


def test_go_places_a_test_in_its_packages_directory(tmp_path: Path) -> None:
    # Ids are "<import path>::<name>"; the import path maps to a directory through go.mod.
    write_files(tmp_path, {"go.mod": "module example.com/shop\n\ngo 1.22\n", "cart/cart_test.go": GO_CART,
                           "cart/slow_test.go": ("//go:build integration\n\npackage cart\n\nimport \"testing\"\n\n"
                                                 "func TestSlow(t *testing.T) {}\n")})
    pkg = "example.com/shop/cart"
    tests = (TestResult(id=f"{pkg}::TestEmpty", status=Status.PASSED, suite=pkg),
             TestResult(id=f"{pkg}::TestAdd/one_item", status=Status.FAILED, suite=pkg),
             TestResult(id=f"{pkg}::TestSlow", status=Status.PASSED, suite=pkg))
    assert located(tmp_path, "go", "go test -v ./...", *[t.model_copy() for t in tests]) == {
        f"{pkg}::TestEmpty": ("cart/cart_test.go", 11),
        # a subtest: its top-level test's file, no line (its t.Run call's line is not known)
        f"{pkg}::TestAdd/one_item": ("cart/cart_test.go", None),
        # a file the command's build tags leave out defines nothing
        f"{pkg}::TestSlow": (None, None),
    }
    tagged = located(tmp_path, "go", "go test -tags integration ./...", *[t.model_copy() for t in tests])
    assert tagged[f"{pkg}::TestSlow"] == ("cart/slow_test.go", 7)


def test_rspec_places_a_full_description_at_its_example(tmp_path: Path) -> None:
    # An example's full description joins its groups' descriptions and its own;
    # a group described by a class and a "#method" string joins without a space.
    write_files(tmp_path, {"spec/cart_spec.rb": (
        'require "spec_helper"\n'
        "\n"
        "RSpec.describe Cart do\n"
        '  describe "#add" do\n'
        '    it "keeps the item" do\n'
        "      expect(Cart.new.add(1)).to include(1)\n"
        "    end\n"
        "  end\n"
        "\n"
        '  context "when empty" do\n'
        '    it "has no total" do\n'
        "    end\n"
        "  end\n"
        "end\n")})
    where = located(
        tmp_path, "rspec", "bundle exec rspec",
        TestResult(id="Cart#add keeps the item", status=Status.FAILED),
        TestResult(id="Cart when empty has no total", status=Status.PASSED),
    )
    assert where == {"Cart#add keeps the item": ("spec/cart_spec.rb", 5),
                     "Cart when empty has no total": ("spec/cart_spec.rb", 11)}


def test_unittest_places_a_dotted_id_at_its_method(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "shop/__init__.py": "",
        "shop/tests/__init__.py": "",
        "shop/tests/base.py": "import unittest\n\n\nclass Base(unittest.TestCase):\n    def test_inherited(self):\n"
                              "        pass\n",
        "shop/tests/test_cart.py": "from shop.tests.base import Base\n\n\nclass CartTest(Base):\n"
                                   "    @classmethod\n    def setUpClass(cls):\n        pass\n\n"
                                   "    def test_add(self):\n        pass\n",
    })
    where = located(
        tmp_path, "unittest", "python -m unittest discover",
        TestResult(id="shop.tests.test_cart.CartTest.test_add", status=Status.FAILED),
        # inherited from a project base class: defined in the base's module
        TestResult(id="shop.tests.test_cart.CartTest.test_inherited", status=Status.PASSED),
        TestResult(id="setUpClass (shop.tests.test_cart.CartTest)", status=Status.ERRORED),
    )
    assert where == {"shop.tests.test_cart.CartTest.test_add": ("shop/tests/test_cart.py", 9),
                     "shop.tests.test_cart.CartTest.test_inherited": ("shop/tests/base.py", 5),
                     "setUpClass (shop.tests.test_cart.CartTest)": ("shop/tests/test_cart.py", 6)}


def test_a_framework_without_sources_keeps_the_results_as_they_are(tmp_path: Path) -> None:
    where = located(tmp_path / "missing", "pytest", "pytest",
                    TestResult(id="tests/test_x.py::test_a", status=Status.FAILED, file="tests/test_x.py"))
    assert where == {"tests/test_x.py::test_a": ("tests/test_x.py", None)}


def test_a_place_the_output_gave_is_used_only_when_the_sources_have_no_definition(tmp_path: Path) -> None:
    # RSpec prints where an example failed ("# ./spec/cart_spec.rb:4:in ..."): not its definition.
    write_files(tmp_path, {"spec/cart_spec.rb": 'RSpec.describe "cart" do\n  it "adds" do\n'
                                                "    expect(1).to eq(2)\n  end\nend\n"})
    report = TestReport(framework="rspec", tests=[
        TestResult(id="cart adds", status=Status.FAILED),
        TestResult(id="cart removes", status=Status.FAILED),  # defined in a file the run no longer has
    ], output_locations={"cart adds": ("spec/cart_spec.rb", 3), "cart removes": ("spec/old_spec.rb", 9)})
    finish(report, RunOutput(command="rspec", exit_code=1, cwd=tmp_path))
    assert [(t.id, t.file, t.line) for t in report.tests] == [
        ("cart adds", "spec/cart_spec.rb", 2), ("cart removes", "spec/old_spec.rb", 9)]
    # working state of the parse, not part of the report anyone reads
    assert "output_locations" not in report.model_dump()
