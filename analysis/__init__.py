"""Failure analysis without an LLM: classify failures, group them by root
cause, and build the context a fixer needs; a failure's analysis as the run
carries it (``note.py``)."""
