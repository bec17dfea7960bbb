"""`greenloop run` as users start it: a real process, the real dev server, the
scripted LLM; then `status` on the finished run, and the errors people hit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO

DEMO = REPO / "samples" / "demo-python"
SCENARIO = REPO / "samples" / "scenarios" / "demo-python.yaml"


def greenloop(*args: str, data_home, key: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["XDG_DATA_HOME"] = str(data_home)  # the run directory lands in the test's tmp dir
    if key:
        env["ANTHROPIC_API_KEY"] = key
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=280, env=env)


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


async def test_run_errors_say_what_to_do(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    missing = greenloop("run", str(tmp_path / "nope"), "--address", address, "--scripted", str(SCENARIO),
                        data_home=tmp_path)
    assert missing.returncode != 0 and "validation_error" in missing.stderr and "nope" in missing.stderr
    no_key = greenloop("run", str(DEMO), "--address", address, data_home=tmp_path)
    assert no_key.returncode != 0 and "ANTHROPIC_API_KEY" in no_key.stderr and "--scripted" in no_key.stderr
    no_run = greenloop("status", "no-such-run", "--address", address, data_home=tmp_path)
    assert no_run.returncode != 0 and "no such run" in no_run.stderr
    assert "Traceback" not in missing.stderr + no_key.stderr + no_run.stderr
