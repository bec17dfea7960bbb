# The two commands of the README. Both set up everything they need first.
.PHONY: demo test setup

setup:
	@bash scripts/setup.sh

demo: setup
	@bash scripts/demo.sh

test:
	@bash scripts/setup.sh test
	@.venv/bin/pytest -q
