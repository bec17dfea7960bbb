"""Anthropic's text-editor tool over the overlay: its commands, its answers, its errors."""

from __future__ import annotations

import pytest

from greenloop.llm import editor
from greenloop.llm.tools import Overlay

NAME = "str_replace_based_edit_tool"


@pytest.fixture
def overlay(tmp_path):
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "cart.py").write_text("def total(items):\n    return sum(items) - 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_cart.py").write_text("from shop.cart import total\n")
    return Overlay(tmp_path)


def call(overlay, allow_edits=True, **args):
    e = editor.Editor(overlay)
    return overlay.call(NAME, args, allow_edits=allow_edits,
                        more={NAME: lambda **kw: e.call(kw, allow_edits=allow_edits)})


def test_the_declaration_follows_the_model():
    assert editor.declaration("claude-sonnet-4-5") == {"type": "text_editor_20250728", "name": NAME,
                                                      "max_characters": 60_000}
    assert editor.declaration("claude-opus-4-1-20250805")["type"] == "text_editor_20250728"
    assert editor.declaration("claude-3-7-sonnet-latest") == {"type": "text_editor_20250124",
                                                             "name": "str_replace_editor"}
    assert editor.declaration("claude-3-5-sonnet-20241022")["type"] == "text_editor_20241022"


def test_view_a_file_a_range_and_a_directory(overlay):
    out, err = call(overlay, command="view", path="shop/cart.py")
    assert not err and out == ("Here's the result of running `cat -n` on shop/cart.py:\n"
                               "     1\tdef total(items):\n     2\t    return sum(items) - 1\n     3\t\n")
    out, err = call(overlay, command="view", path="shop/cart.py", view_range=[2, -1])
    assert not err and "     2\t    return sum(items) - 1" in out and "     1\t" not in out
    out, err = call(overlay, command="view", path="shop")
    assert not err and "cart.py" in out
    out, err = call(overlay, command="view", path="shop/cart.py", view_range=[9, 10])
    assert err and "outside the file's lines [1, 3]" in out


def test_str_replace_unique_missing_and_ambiguous(overlay):
    out, err = call(overlay, command="str_replace", path="shop/cart.py", old_str="sum(items) - 1",
                    new_str="sum(items)")
    assert not err and out.startswith("The file shop/cart.py has been edited.")
    assert "     2\t    return sum(items)\n" in out
    assert [e.content for e in overlay.edits()] == ["def total(items):\n    return sum(items)\n"]
    out, err = call(overlay, command="str_replace", path="shop/cart.py", old_str="nowhere", new_str="x")
    assert err and "did not appear verbatim in shop/cart.py" in out
    call(overlay, command="insert", path="shop/cart.py", insert_line=0, new_str="# total\n# total")
    out, err = call(overlay, command="str_replace", path="shop/cart.py", old_str="# total", new_str="#")
    assert err and "Multiple occurrences" in out and "[1, 2]" in out


def test_insert_takes_both_spellings_and_create_makes_a_file(overlay):
    out, err = call(overlay, command="insert", path="shop/cart.py", insert_line=1, insert_text="    # sum")
    assert not err and overlay.text("shop/cart.py").split("\n")[1] == "    # sum"
    out, err = call(overlay, command="insert", path="shop/cart.py", insert_line=0, new_str="import math")
    assert not err and overlay.text("shop/cart.py").startswith("import math\ndef total")
    out, err = call(overlay, command="create", path="shop/tax.py", file_text="RATE = 0.2\n")
    assert not err and overlay.text("shop/tax.py") == "RATE = 0.2\n"


def test_the_analyzer_only_views_and_nothing_leaves_the_repository(overlay):
    out, err = call(overlay, allow_edits=False, command="str_replace", path="shop/cart.py", old_str="- 1",
                    new_str="")
    assert err and "only views files" in out and overlay.edits() == []
    out, err = call(overlay, command="create", path="../outside.py", file_text="x = 1\n")
    assert err and "refused" in out and overlay.edits() == []
    out, err = call(overlay, command="undo_edit", path="shop/cart.py")
    assert err and "edit the file again" in out
    out, err = call(overlay, command="delete", path="shop/cart.py")
    assert err and "unknown command" in out


def test_a_long_view_is_trimmed_with_a_note_of_the_lines_cut(overlay):
    (overlay.root / "big.py").write_text("".join(f"x_{n} = {n}  # {'padding ' * 8}\n" for n in range(1, 5001)))
    out, err = call(overlay, command="view", path="big.py")
    assert not err and len(out) < 62_000
    assert "     1\tx_1 = 1" in out and "  5000\tx_5000 = 5000" in out  # the start and the end are kept
    note = next(line for line in out.splitlines() if line.startswith("[greenloop cut"))
    assert "characters here (lines " in note and "view a view_range to see them" in note
