"""Temporal activities: every piece of I/O the workflows need (sandboxed test
runs, parsing, analysis, LLM calls, edits, the workspace). Each module is a
thin typed shell over the library packages that do the work, and defines its
activities' input and result types at its top. Nothing here imports
``workflows/``."""
