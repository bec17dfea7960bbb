# The two commands of the README. Both set up everything they need first.
# `make typecheck`: pyright, configured in pyproject.toml ([tool.pyright]).
.PHONY: demo test setup typecheck

setup:
	@bash scripts/setup.sh

demo: setup
	@bash scripts/demo.sh

test:
	@bash scripts/setup.sh test
	@.venv/bin/pytest -q

typecheck:
	@.venv/bin/pyright
