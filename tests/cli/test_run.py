"""`greenloop run` as users start it: a real process, the real dev server, the
scripted LLM; then `status` on the finished run, and the errors people hit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer

from greenloop.cli.runs import run_link, run_request
from tests.conftest import REPO

DEMO = REPO / "samples" / "demo-python"
SCENARIO = REPO / "samples" / "scenarios" / "demo-python.yaml"


GREENLOOP = [sys.executable, "-m", "greenloop.cli.main"]


def cli_env(data_home, key: str | None = None, ui: str | None = None) -> dict[str, str]:
    """The environment of a user's ``greenloop``: no LLM key or Web UI address but the test's,
    the run directories under ``data_home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "GREENLOOP_UI_URL"))}
    if ui:
        env["GREENLOOP_UI_URL"] = ui
    env["XDG_DATA_HOME"] = str(data_home)  # the run directory lands in the test's tmp dir
    if key:
        env["ANTHROPIC_API_KEY"] = key
    return env


def greenloop(*args: str, data_home, key: str | None = None, ui: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*GREENLOOP, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=280, env=cli_env(data_home, key, ui))


async def test_run_drives_the_demo_to_green_and_status_reports_it(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    before = (DEMO / "shop" / "cart.py").read_text()
    done = greenloop("run", str(DEMO), "--scripted", str(SCENARIO), "--address", address, "--json",
                     data_home=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["state"] == "completed" and len(summary["fixed"]) == 3
    assert summary["final"]["failed"] == 0 and summary["still_failing"] == []
    assert str(tmp_path) in summary["patch"]  # artifacts under the user's data dir
    assert (DEMO / "shop" / "cart.py").read_text() == before  # the user's tree is never edited

    status = greenloop("status", summary["run_id"], "--address", address, "--json", data_home=tmp_path)
    assert status.returncode == 0, status.stderr
    states = {t["test_id"]: t["state"] for t in json.loads(status.stdout)["tests"]}
    assert sorted(states) == sorted(summary["fixed"]) and set(states.values()) == {"FIXED"}


async def test_run_follows_each_test_to_its_last_state(temporal_env, tmp_path):
    # What people read: the run id, the link to it in their cluster's Web UI, and for every test its
    # states in order, ending with the state it ended in (even when the run ends between two looks).
    address = temporal_env.client.service_client.config.target_host
    done = greenloop("run", str(DEMO), "--scripted", str(SCENARIO), "--address", address, data_home=tmp_path,
                     ui="http://temporal-ui.example:8080/")
    assert done.returncode == 0, done.stderr[-3000:]
    run_id = next(line.split()[1] for line in done.stdout.splitlines() if line.startswith("run "))
    assert f"Web UI: http://temporal-ui.example:8080/namespaces/default/workflows/{run_id}\n" in done.stdout
    last: dict[str, str] = {}
    for line in done.stdout.splitlines():
        if line.startswith("  tests/") and ": " in line:
            test_id, state = line.strip().rsplit(": ", 1)
            last[test_id] = state
    status = json.loads(greenloop("status", run_id, "--address", address, "--json", data_home=tmp_path).stdout)
    assert last == {t["test_id"]: t["state"] for t in status["tests"]} and set(last.values()) == {"FIXED"}


async def test_run_errors_say_what_to_do(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    missing = greenloop("run", str(tmp_path / "nope"), "--address", address, "--scripted", str(SCENARIO),
                        data_home=tmp_path)
    assert missing.returncode != 0 and "validation_error" in missing.stderr and "nope" in missing.stderr
    no_key = greenloop("run", str(DEMO), data_home=tmp_path)  # this command would run the worker
    assert no_key.returncode != 0 and "ANTHROPIC_API_KEY" in no_key.stderr and "--scripted" in no_key.stderr
    no_run = greenloop("status", "no-such-run", "--address", address, data_home=tmp_path)
    assert no_run.returncode != 0 and "no run " in no_run.stderr and "greenloop runs" in no_run.stderr
    assert "Traceback" not in missing.stderr + no_key.stderr + no_run.stderr


def test_the_api_key_is_asked_only_of_the_command_that_runs_the_worker(monkeypatch):
    """A run submitted to a cluster is served by the cluster's workers, which hold the key:
    the machine that submits it needs none. A run whose worker is this command does."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr("greenloop.cli.runs.configured_address", lambda: None)
    request = run_request(str(DEMO), set(), {}, None, address="temporal.internal:7233")
    assert not request.llm.analysis_only
    with pytest.raises(typer.Exit):
        run_request(str(DEMO), set(), {}, None)


def test_the_run_link_needs_the_ui_address_of_a_configured_cluster(monkeypatch):
    monkeypatch.delenv("GREENLOOP_UI_URL", raising=False)
    assert run_link("r1", "default", embedded=True) == "http://localhost:8233/namespaces/default/workflows/r1"
    assert run_link("r1", "prod", embedded=False) is None  # printed as how to get one, "ui": null in --json
    monkeypatch.setenv("GREENLOOP_UI_URL", "https://ui.internal")
    assert run_link("r1", "prod", embedded=False) == "https://ui.internal/namespaces/prod/workflows/r1"
