"""Python sources, read with ``ast`` for the pytest and unittest parsers:
a project module's syntax tree (None when it does not parse, as for a
module with the syntax error a run reported) and the dotted names that
decorators, base classes and calls refer to."""

from __future__ import annotations

import ast

from ..locate import SourceIndex


def module_tree(index: SourceIndex, rel: str | None) -> ast.Module | None:
    """The syntax tree of a project file; None when it is missing, empty or does not parse."""
    lines = index.lines(rel) if rel else []
    if not lines:
        return None
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def dotted_name(node: ast.expr) -> str:
    """The dotted name an expression refers to: ``a.b.c`` for an attribute
    chain, a call's callee (``pytest.mark.x(...)``), a subscript's base
    (``Base[int]``); "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Subscript):
        return dotted_name(node.value)
    if isinstance(node, ast.Call):
        return dotted_name(node.func)
    return ""
