"""The model's tools over an overlay: reads see pending edits, edits never
touch the disk, refusals and malformed calls are answered as errors."""

from __future__ import annotations

import pytest

from greenloop.llm.tools import Overlay


@pytest.fixture
def overlay(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "cart.py").write_text("def total(x):\n    return x - 1\n")
    (tmp_path / ".git").mkdir()
    return Overlay(tmp_path)


def test_edits_stay_in_the_overlay_and_are_visible_to_reads(overlay, tmp_path):
    out, err = overlay.call("replace_in_file", {"path": "src/cart.py", "old_text": "x - 1", "new_text": "x"},
                            allow_edits=True)
    assert not err, out
    assert "return x" in overlay.read_file("src/cart.py")
    assert (tmp_path / "src/cart.py").read_text().endswith("x - 1\n")
    assert [(e.path, e.content) for e in overlay.edits()] == [("src/cart.py", "def total(x):\n    return x\n")]


def test_replace_needs_a_unique_match(overlay):
    out, err = overlay.call("replace_in_file", {"path": "src/cart.py", "old_text": "x", "new_text": "y"},
                            allow_edits=True)
    assert err and "occurs" in out


@pytest.mark.parametrize("path", ["../evil.py", "/etc/passwd", ".git/config", ".github/workflows/x.yml"])
def test_refused_paths(overlay, path, tmp_path):
    out, err = overlay.call("create_file", {"path": path, "content": "x"}, allow_edits=True)
    assert err and "refused" in out
    assert overlay.refused and not overlay.edits()
    assert not (tmp_path.parent / "evil.py").exists()


def test_malformed_calls_are_recorded(overlay):
    assert overlay.call("delete_everything", {}, allow_edits=True)[1]
    assert overlay.call("read_file", "src/cart.py", allow_edits=True)[1]
    assert overlay.call("read_file", {"file": "src/cart.py"}, allow_edits=True)[1]
    assert len(overlay.malformed) == 3


def test_edit_tools_are_not_available_to_readers(overlay):
    out, err = overlay.call("create_file", {"path": "x.py", "content": ""}, allow_edits=False)
    assert err and "unknown tool" in out


def test_search_list_and_insert(overlay):
    overlay.call("create_file", {"path": "src/new.py", "content": "VALUE = 1\n"}, allow_edits=True)
    assert "src/new.py:1: VALUE = 1" in overlay.search("VALUE")
    assert "new.py" in overlay.list_dir("src")
    overlay.insert_lines("src/new.py", 0, "# header")
    assert overlay.text("src/new.py") == "# header\nVALUE = 1\n"
