"""Fixtures the conversation tests share: the tool-use agent's repository and API
key, and the workflow tests' demo repository and scripted LLM (for the
analyzer's conversation driven on a real dev server)."""

from tests.llm.test_agent import api_key, repo  # noqa: F401 - fixtures
from tests.workflows.conftest import demo_repo, scripted  # noqa: F401 - fixtures
