"""Domain types every layer shares: typed errors, edits and model usage.

Nothing here imports another Greenloop package, so parsers, the sandbox, the
LLM client, workspaces, activities and workflows can all depend on it.
"""
