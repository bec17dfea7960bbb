"""Fixtures the CLI tests borrow from the workflow tests (a demo repository, the scripted LLM)."""

from tests.workflows.conftest import demo_repo, scripted  # noqa: F401 - fixtures
