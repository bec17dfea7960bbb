"""`greenloop bench mutants` as users run it: a real process, the real dev server, bwrap, and the
scripted LLM answering each mutant's fixer with the reverse mutation (--scripted-oracle); then the
typed errors people hit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.test_run import greenloop
from tests.conftest import REPO

SAMPLE = REPO / "samples" / "mutants-python"
DEMO = REPO / "samples" / "demo-python"
# What the sample's tests notice among the first four mutants of seed 1 (analysis/mutants.py's sample):
# `total = 0` removed and `sum * len` fail tests; `> threshold` as `>=` fails test_above;
# `value <= low` in clamp is noticed by no test (nothing is clamped at exactly its low bound).
KEPT, NOT_KEPT = {1, 2, 3}, {4}


def committed(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                             "commit", "-q", "-m", "sample"]):
        subprocess.run(["git", "-C", str(dest), *args], check=True)
    return dest


def bench(address: str, repo: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return greenloop("bench", "mutants", str(repo), "--address", address, "--sandbox", "bwrap",
                     "--out", str(tmp_path / "bench"), *extra, data_home=tmp_path)


async def test_the_oracle_fixes_every_kept_mutant_of_the_sample(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    repo = committed(SAMPLE, tmp_path / "sample")
    done = bench(address, repo, tmp_path, "--count", "4", "--seed", "1", "--scripted-oracle", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    rows = {r["number"]: r for r in result["results"]}
    assert {n for n, r in rows.items() if r["kept"]} == KEPT and {n for n, r in rows.items() if not r["kept"]} == NOT_KEPT
    for n in KEPT:
        r = rows[n]
        assert r["file"] == "stats/summary.py" and r["failing"] >= 1 and r["tests"]
        assert r["in_message"] is True and r["rank"] == 1 and r["chars"] > 500, r
        assert r["fixed"] is True and r["state"] == "completed" and r["attempts"] == 1, r
        assert r["usage"]["input_tokens"] > 0 and r["seconds"] > 0
        # the run's fixer was sent the very context measured, with the analyzer's findings added
        assert all(t["same_context"] is True and t["sent_chars"] > t["chars"] for t in r["tests"]), r["tests"]
        # the mutant's run is an ordinary run that drove its failing tests to FIXED
        status = greenloop("status", r["run_id"], "--address", address, "--json", data_home=tmp_path)
        assert status.returncode == 0, status.stderr
        assert {t["state"] for t in json.loads(status.stdout)["tests"]} == {"FIXED"}
    assert rows[4]["why_not"] == "no test fails" and rows[4]["fixed"] is None
    totals = result["totals"]
    assert totals["kept"] == 3 and totals["fixed"] == 3 and totals["recall"] == 1.0 and totals["top1"] == 1.0
    page = Path(result["html_path"]).read_text()
    assert "stats/summary.py" in page and "no test fails" in page
    assert json.loads(Path(result["json_path"]).read_text())["totals"] == totals
    # the user's repository is never edited
    assert subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True,
                          text=True).stdout == ""


async def test_without_fix_the_runs_only_analyse_and_the_table_says_what_the_message_showed(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    repo = committed(SAMPLE, tmp_path / "sample")
    done = bench(address, repo, tmp_path, "--count", "4", "--seed", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "3 of 4 mutants kept" in done.stdout and "recall 1.0, top 1 1.0" in done.stdout, done.stdout
    assert "in message" in done.stdout and "not kept" in done.stdout and "fixed" not in done.stdout
    result = json.loads((tmp_path / "bench" / "bench.json").read_text())
    for r in result["results"]:
        if r["kept"]:  # measured, no model asked: the run skipped what it could not fix
            assert r["in_message"] is True and r["rank"] == 1 and r["fixed"] is None and r["usage"]["calls"] == 0, r
            assert r["state"] == "completed"


async def test_a_bench_whose_command_was_killed_is_resumed(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    repo = committed(SAMPLE, tmp_path / "sample")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["XDG_DATA_HOME"] = str(tmp_path)
    cmd = [sys.executable, "-m", "greenloop.cli.main", "bench", "mutants", str(repo), "--address", address,
           "--sandbox", "bwrap", "--out", str(tmp_path / "bench"), "--count", "3", "--scripted-oracle"]
    first = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert first.stderr is not None
    bench_id = ""
    for line in first.stderr:  # killed while the mutants' runs are under way
        bench_id = line.split()[1] if line.startswith("bench ") else bench_id
        if "0/3 mutants run" in line:
            break
    time.sleep(5)
    first.kill()
    first.wait()
    assert bench_id and not (tmp_path / "bench" / "bench.json").exists()

    done = greenloop("bench", "resume", bench_id, "--out", str(tmp_path / "bench"), "--address", address, "--json",
                     data_home=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["bench_id"] == bench_id and len(result["results"]) == 3
    assert result["totals"]["kept"] >= 1 and result["totals"]["fixed"] == result["totals"]["kept"], result["totals"]
    unknown = greenloop("bench", "resume", "greenloop-bench-nothing", "--out", str(tmp_path / "none"),
                        data_home=tmp_path)
    assert unknown.returncode == 2 and "no bench greenloop-bench-nothing" in unknown.stderr


def test_a_path_that_is_not_a_repository_is_refused(tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(SAMPLE, plain)
    done = greenloop("bench", "mutants", str(plain), "--out", str(tmp_path / "b"), data_home=tmp_path)
    assert done.returncode == 2 and "not a git repository" in done.stderr and "Traceback" not in done.stderr
    repo = committed(SAMPLE, tmp_path / "sample")
    no_ref = greenloop("bench", "mutants", str(repo), "--ref", "v9", "--out", str(tmp_path / "c"), data_home=tmp_path)
    assert no_ref.returncode == 2 and "with a commit v9" in no_ref.stderr and "--ref" in no_ref.stderr
    missing = greenloop("bench", "mutants", str(tmp_path / "nowhere"), data_home=tmp_path)
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr


async def test_a_suite_failing_before_mutation_stops_the_bench(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    repo = committed(DEMO, tmp_path / "demo")
    done = bench(address, repo, tmp_path, "--count", "2")
    assert done.returncode == 4, done.stderr[-3000:]
    assert "does not pass before mutation: 3 test(s) fail" in done.stderr and "Traceback" not in done.stderr


async def test_no_mutant_kept_is_an_error(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    repo = committed(SAMPLE, tmp_path / "sample")
    (repo / "tests" / "test_summary.py").write_text("def test_nothing():\n    assert True\n")
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "weak"],
                   check=True)
    done = bench(address, repo, tmp_path, "--count", "2")
    assert done.returncode == 1, done.stderr[-3000:]
    assert "no mutant kept" in done.stderr and "Traceback" not in done.stderr
