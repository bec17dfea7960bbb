# The README's commands. Each sets up what it needs first (scripts/setup.sh is
# idempotent: a second run installs nothing).
.PHONY: demo test test-serial check lint typecheck setup

# Python writes its bytecode: a machine that says PYTHONDONTWRITEBYTECODE (this one's
# image does) would have every process of the suite (each xdist worker's collection,
# each `greenloop` command and worker it starts) compile pytest's rewritten tests and
# the libraries again, a few seconds of CPU each.
unexport PYTHONDONTWRITEBYTECODE

# Test processes: most tests wait on subprocesses (sandboxed suites, dev servers,
# package managers), so a 2-core machine runs 6 well (measured: 4 took 23.5 min, 6 took 21). One Temporal dev server
# serves them all (tests/conftest.py).
WORKERS ?= 6
# The whole suite (CI: .ci/run), in two pytest runs that print their own summaries.
# The first runs every test but the exclusive ones on $(WORKERS) xdist workers
# sharing one dev server; --dist loadgroup keeps an xdist_group on one worker. A
# test past its timeout (300 s) has its worker's stacks dumped and the worker
# killed (timeout_method=thread): it fails, xdist starts another worker, the run
# goes on and ends. The slowest tests are listed at the end. The second runs the
# tests whose timing is part of what they check (tests/conftest.py: EXCLUSIVE)
# on a machine nothing else loads: they mostly wait on timeouts, so
# $(EXCLUSIVE_WORKERS) run them side by side (measured: 3 min, against 7 min 40 s
# one at a time). `make test` fails if either run does, after both ran.
PYTEST_PARALLEL = .venv/bin/pytest -q -n $(WORKERS) --dist loadgroup -o timeout_method=thread --durations=15 -m "not exclusive"
EXCLUSIVE_WORKERS ?= 4
PYTEST_EXCLUSIVE = .venv/bin/pytest -q -n $(EXCLUSIVE_WORKERS) -o timeout_method=thread -m exclusive
# One process, in order (no xdist), for a run to compare against.
PYTEST_SERIAL = .venv/bin/pytest -q
# The fast lane (lint, then the unit-level tests of parsers, runner, analysis,
# LLM, workspace and settings): -m "not slow" leaves out every test that drives
# real runs (tests/conftest.py marks them: workflows, cli, live, realworld, webui,
# sandbox, projectenv, and the toolchain-heavy modules).
CHECK_TESTS = tests/parsers tests/analysis tests/runner tests/llm tests/workspace tests/test_*.py

setup:
	@bash scripts/setup.sh

demo: setup
	@bash scripts/demo.sh

# pyright (20 s of CPU) types the code beside the first pytest run, which waits on
# subprocesses as much as it computes; its verdict is printed after that run.
test:
	@bash scripts/setup.sh test
	@.venv/bin/ruff check .
	@status=0; typing=$$(mktemp); .venv/bin/pyright > "$$typing" 2>&1 & pyright=$$!; \
	$(PYTEST_PARALLEL) || status=$$?; \
	if wait $$pyright; then tail -n 1 "$$typing"; else cat "$$typing"; status=1; fi; rm -f "$$typing"; \
	$(PYTEST_EXCLUSIVE) || status=$$?; exit $$status

test-serial:
	@bash scripts/setup.sh test
	@$(PYTEST_SERIAL)

lint: setup
	@.venv/bin/ruff check .

# pyright, configured in pyproject.toml ([tool.pyright]): strict on workflows/ and activities/.
typecheck: setup
	@.venv/bin/pyright

check: lint typecheck
	@.venv/bin/pytest -q -n $(WORKERS) -m "not slow" $(CHECK_TESTS)
