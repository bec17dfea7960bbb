"""Functions and their line spans, per language (what localization ranks and the first message shows)."""

from __future__ import annotations

from pathlib import Path

from greenloop.analysis.regions import enclosing, functions
from greenloop.parsers.locate import SourceIndex


def spans(tmp_path: Path, rel: str, text: str) -> list[tuple[str, int, int]]:
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_text(text)
    return [(r.name, r.start, r.end) for r in functions(SourceIndex(tmp_path), rel)]


def test_python_functions_methods_decorators_and_docstrings(tmp_path):
    text = '''import functools


@functools.cache
def area(w, h):
    """The area.

    Long docs.
    """
    return w * h


class Box:
    def volume(self, d):
        def inner(x):
            return x
        return inner(d)
'''
    assert spans(tmp_path, "geo.py", text) == [("area", 4, 10), ("Box.volume", 14, 17), ("Box.volume.inner", 15, 16)]
    area = functions(SourceIndex(tmp_path), "geo.py")[0]
    assert area.doc == (6, 9) and area.body_start == 10  # the docstring never counts as run


def test_javascript_braces_in_strings_comments_and_templates_do_not_count(tmp_path):
    text = """'use strict';
// function fake() { in a comment
function paginate(items, page) {
  const s = "{ not a block";
  return items.slice(page, `${page} }`);
}

const median = (xs) => {
  /* } */
  return xs[0];
};

class Cart {
  async total(items) {
    return items.reduce((a, b) => a + b, 0);
  }
}
var traverse = module.exports = function (schema) {
  return schema;
};
Cart.prototype.clear = function () {
  return 0;
};
"""
    assert spans(tmp_path, "src/lists.js", text) == [("paginate", 3, 6), ("median", 8, 11), ("total", 14, 16),
                                                      ("module.exports", 18, 20), ("Cart.prototype.clear", 21, 23)]


def test_go_functions_and_methods(tmp_path):
    text = """package shop

func (c *Cart) Total() int {
\tsum := 0
\tfor _, p := range c.items {
\t\tsum += p
\t}
\treturn sum
}

func Discount[T any](x T) T { return x }
"""
    assert spans(tmp_path, "cart.go", text) == [("Total", 3, 9), ("Discount", 11, 11)]


def test_rust_functions_with_lifetimes_and_char_literals(tmp_path):
    text = """pub fn first<'a>(s: &'a str) -> &'a str {
    s.split('{').next().unwrap()
}

impl Words {
    pub(crate) fn count(&self) -> usize {
        self.0.len()
    }
}
"""
    assert spans(tmp_path, "src/lib.rs", text) == [("first", 1, 3), ("count", 6, 8)]


def test_ruby_def_end(tmp_path):
    text = """class Cart
  def total(items)
    items.each do |i|
      puts i if i > 0
    end
    items.sum
  end

  def empty? = items.empty?
end
"""
    assert spans(tmp_path, "lib/cart.rb", text) == [("total", 2, 7), ("empty?", 9, 9)]


def test_the_innermost_function_holds_a_line_and_bad_files_give_nothing(tmp_path):
    regions = functions(SourceIndex(tmp_path), "missing.py")
    assert regions == []
    assert spans(tmp_path, "broken.py", "def f(:\n  pass\n") == []
    spans(tmp_path, "n.py", "def outer():\n    def inner():\n        return 1\n    return inner\n")
    found = enclosing(functions(SourceIndex(tmp_path), "n.py"), 3)
    assert found is not None and found.name == "outer.inner"


def test_a_call_in_a_return_statement_is_not_a_definition(tmp_path):
    """Go and JavaScript without semicolons: ``return Price(sum)`` and ``return helper(x)`` on a
    line of their own read like a C definition without its body; they are calls."""
    (tmp_path / "cart.go").write_text("package shop\n\nfunc Subtotal(items []float64) float64 {\n\tsum := 0.0\n"
                                      "\treturn Price(sum)\n}\n\nfunc Total(items []float64) float64 {\n"
                                      "\treturn Discount(Subtotal(items))\n}\n")
    (tmp_path / "cart.js").write_text("export function total(items) {\n  return discount(subtotal(items))\n}\n\n"
                                      "function subtotal(items) {\n  return items.length\n}\n")
    index = SourceIndex(tmp_path)
    assert [(r.name, r.start, r.end) for r in functions(index, "cart.go")] == [("Subtotal", 3, 6), ("Total", 8, 10)]
    assert [(r.name, r.start, r.end) for r in functions(index, "cart.js")] == [("total", 1, 3), ("subtotal", 5, 7)]
