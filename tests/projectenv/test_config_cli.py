"""greenloop.toml / [tool.greenloop]: parsed, overridden by flags, written by
``greenloop init`` and checked by ``greenloop doctor`` (the CLI as a subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from greenloop import project_config as config
from greenloop.cli.runs import build_request, given_options
from greenloop.domain.errors import ErrorKind, GreenloopError
from tests.projectenv.conftest import BACKEND, git_init, write

CLI_DEFAULTS = dict(ref=None, test_command=None, build_command=None, framework=None, language=None,
                    setup_command=None, single_test_command=None, select=[], exclude=["tests/slow*"],
                    max_attempts=3, run_budget_s=3600, per_test_budget_s=3600, concurrency=1,
                    escalation_deadline_s=86400, model="m", budget_usd=None, tests_only=False,
                    analysis_only=True, sandbox="auto", network=False, timeout=600)

TOML = """
setup = "echo extra"
test_command = "python -m pytest -x"
single_test_command = "python -m pytest {id}"
framework = "pytest"
exclude = ["tests/flaky_*"]

[env]
FEATURE = "on"
API_TOKEN = "kept out by the sandbox"

[sandbox]
backend = "bwrap"
timeout = 90
setup_network = false
image = "greenloop-test/ci:1"

[budgets]
run = 1200
max_attempts = 2
llm_usd = 1.5
"""


def test_greenloop_toml_is_parsed_and_flags_override_it(tmp_path):
    write(tmp_path, {"greenloop.toml": TOML})
    cfg, path = config.load(tmp_path)
    assert path == tmp_path / "greenloop.toml" and cfg.sandbox.timeout == 90 and cfg.env["FEATURE"] == "on"
    request = build_request(str(tmp_path), {"max_attempts", "sandbox"}, **{**CLI_DEFAULTS, "max_attempts": 5,
                                                                           "sandbox": "local"})
    # From the file where no flag was given...
    assert request.test_command == "python -m pytest -x" and request.setup_command == "echo extra"
    assert request.single_test_command == "python -m pytest {id}" and request.framework == "pytest"
    assert request.run_budget_s == 1200 and request.llm.budget_usd == 1.5
    assert request.sandbox.timeout_s == 90 and request.sandbox.setup_network is False
    assert request.sandbox.image == "greenloop-test/ci:1"  # the effective value travels in the run's input
    assert request.env == {"FEATURE": "on", "API_TOKEN": "kept out by the sandbox"}
    assert request.exclude == ["tests/flaky_*", "tests/slow*"]
    assert request.config_file == str(tmp_path / "greenloop.toml")
    # ...and the flags where they were.
    assert request.max_attempts == 5 and request.sandbox.backend == "local"


def test_the_sandbox_image_flag_overrides_the_file_and_is_absent_by_default(tmp_path):
    write(tmp_path, {"greenloop.toml": TOML})
    request = build_request(str(tmp_path), {"sandbox_image"}, **{**CLI_DEFAULTS, "sandbox_image": "mine:2"})
    assert request.sandbox.image == "mine:2"
    (tmp_path / "plain").mkdir()
    assert build_request(str(tmp_path / "plain"), set(), **CLI_DEFAULTS).sandbox.image is None
    from greenloop.cli.main import app

    assert "--sandbox-image" in CliRunner().invoke(app, ["run", "--help"], terminal_width=200).output


def test_tool_greenloop_in_pyproject_is_read(tmp_path):
    write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n\n[tool.greenloop]\nframework = "unittest"\n'})
    cfg, path = config.load(tmp_path)
    assert cfg.framework == "unittest" and path == tmp_path / "pyproject.toml"


@pytest.mark.parametrize("text, problem", [
    ("framework = [", "not valid TOML"),
    ("tset_command = 'x'", "tset_command: Extra inputs are not permitted"),
    ("[sandbox]\nbackend = 'vm'", "sandbox.backend"),
    ("[sandbox]\nimage = ''", "sandbox.image"),
])
def test_a_bad_configuration_is_a_typed_error_naming_the_key(tmp_path, text, problem):
    write(tmp_path, {"greenloop.toml": text})
    with pytest.raises(GreenloopError) as caught:
        config.load(tmp_path)
    assert caught.value.kind is ErrorKind.VALIDATION_ERROR and problem in caught.value.message


def _cli(*args: str, env_home: Path) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "GREENLOOP_HOME": str(env_home)}
    return subprocess.run([sys.executable, "-m", "greenloop.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_init_writes_a_commented_file_that_reads_back(src_project, tmp_path):
    out = _cli("init", str(src_project), env_home=tmp_path / "home")
    assert out.returncode == 0, out.stderr
    text = (src_project / "greenloop.toml").read_text()
    assert 'framework = "pytest"' in text and "# setup = " in text and "extras test" in text
    cfg, _ = config.load(src_project)
    assert cfg.framework == "pytest" and cfg.language == "python"
    assert "framework: pytest" in out.stdout and "setup: a virtualenv with the project with extras test" in out.stdout
    again = _cli("init", str(src_project), env_home=tmp_path / "home")
    assert again.returncode == 2 and "exists" in again.stderr and "Traceback" not in again.stderr


def test_doctor_says_ready_when_per_test_results_are_read(src_project, tmp_path):
    out = _cli("doctor", str(src_project), "--sandbox", BACKEND, env_home=tmp_path / "home")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 test(s): 1 passed, 1 failed" in out.stdout and "ready" in out.stdout
    assert not (src_project / ".greenloop").exists()  # the repository itself is never touched


def test_doctor_exits_non_zero_with_the_reason_when_results_cannot_be_read(tmp_path):
    ws = git_init(write(tmp_path / "opaque", {
        "greenloop.toml": 'test_command = "echo all good"\nframework = "generic"\nlanguage = "python"\n',
        "check.py": "print('ok')\n",
    }))
    out = _cli("doctor", str(ws), "--sandbox", BACKEND, env_home=tmp_path / "home")
    assert out.returncode == 1 and "cannot read per-test results" in out.stdout and "Traceback" not in out.stderr


def test_doctor_shows_the_end_of_the_output_when_it_reads_nothing(tmp_path):
    ws = git_init(write(tmp_path / "opaque", {
        "greenloop.toml": 'test_command = "echo loading the fixtures; echo no such suite >&2; exit 2"\n'
                          'framework = "generic"\nlanguage = "python"\n',
        "check.py": "print('ok')\n",
    }))
    out = _cli("doctor", str(ws), "--sandbox", BACKEND, env_home=tmp_path / "home")
    assert out.returncode == 1 and "--- the end of the suite's output ---" in out.stdout
    assert "loading the fixtures" in out.stdout and "no such suite" in out.stdout


def test_doctor_reads_a_node_test_suite_run_on_a_folder(tmp_path):
    # package.json runs `node --test test/`: Node 20 takes any flag after the folder for a file,
    # so Greenloop's reporter flags go before it.
    ws = git_init(write(tmp_path / "nt", {
        "package.json": '{"name": "nt", "version": "1.0.0", "scripts": {"test": "node --test test/"}}\n',
        "test/math.test.js": """
            const test = require('node:test');
            const assert = require('node:assert');

            test('adds', () => { assert.strictEqual(1 + 1, 2); });
            test('subtracts', () => { assert.strictEqual(3 - 1, 1); });
            """,
    }))
    out = _cli("doctor", str(ws), "--sandbox", BACKEND, env_home=tmp_path / "home")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "`node --test --test-reporter=spec" in out.stdout and "node.xml test/`" in out.stdout
    assert "2 test(s): 1 passed, 1 failed" in out.stdout


def test_doctor_reports_setup_failed_with_the_log_tail(src_project, tmp_path):
    pyproject = src_project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"inflection==0.5.1"', '"greenloop-no-such-package-q7==1.0"'))
    out = _cli("doctor", str(src_project), "--sandbox", BACKEND, env_home=tmp_path / "home")
    assert out.returncode == 1 and "setup_failed" in out.stdout and "greenloop-no-such-package-q7" in out.stdout


def test_a_request_made_without_the_file_gets_its_commands_from_the_workspace(tmp_path):
    from greenloop.run_request import FixRequest

    write(tmp_path, {"greenloop.toml": TOML})
    bare = FixRequest(repo="https://example.invalid/x.git", test_command="pytest -q", env={"FEATURE": "off"})
    filled = config.fill(bare, tmp_path)
    assert filled.test_command == "pytest -q"  # what the request says stands
    assert filled.setup_command == "echo extra" and filled.single_test_command == "python -m pytest {id}"
    assert filled.env == {"FEATURE": "off", "API_TOKEN": "kept out by the sandbox"}
    assert filled.config_file == str(tmp_path / "greenloop.toml")
    assert config.fill(filled, tmp_path) is filled  # read once


def test_only_flags_given_on_the_command_line_count_as_given():
    seen: list[set[str]] = []
    app = typer.Typer()

    @app.command()
    def cmd(ctx: typer.Context, timeout: int = 600, sandbox: str = "auto", framework: str | None = None) -> None:
        seen.append(given_options(ctx))

    assert CliRunner().invoke(app, ["--timeout", "600", "--framework", "jest"]).exit_code == 0
    assert seen == [{"timeout", "framework"}]  # even a flag equal to its default counts
