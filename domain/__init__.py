"""Domain types every layer shares: typed errors, edits, model settings and usage,
and the run's shared vocabulary: how a test and a run stand (``states.py``), a
person's answer (``answers.py``), an attempt's record (``attempts.py``), the
run's workspace (``workspace.py``) and a fix waiting for validation
(``candidates.py``).

Nothing here imports another Greenloop package, so parsers, the sandbox, the
LLM client, workspaces, activities and workflows can all depend on it.
"""
