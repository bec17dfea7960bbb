# The two commands of the README. Both set up everything they need first.
.PHONY: demo test setup

setup:
	@bash scripts/setup.sh

demo: setup
	@bash scripts/demo.sh

test: setup
	@.venv/bin/pytest -q
