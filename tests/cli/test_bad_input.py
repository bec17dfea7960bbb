"""Bad input, as people type it, through the real ``greenloop`` process: each is said in
one line with the next step and exits 2 (never a traceback, never an "internal error"),
and under ``--json`` it is one JSON object on stdout."""

from __future__ import annotations

import json
import subprocess

from tests.cli.test_speaks_to_people import DEMO, SCENARIOS, greenloop, said_well


def said_as_json(done: subprocess.CompletedProcess, *words: str) -> dict:
    """The error object a --json command printed (its only stdout), checked like ``said_well``."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    error = json.loads(done.stdout)
    assert error["exit_code"] == 2 and error["kind"] and error["hint"], error
    for w in words:
        assert w in error["error"] + error["hint"], error
    return error


def test_an_invalid_greenloop_variable_is_named_on_every_command(tmp_path):
    for command in (["runs"], ["status", "some-run"], ["parse", "--help"]):
        done = greenloop(*command, data_home=tmp_path, timeout=60, GREENLOOP_MAX_ACTIVITIES="many")
        said_well(done, "GREENLOOP_MAX_ACTIVITIES='many'", "valid integer", "fix or unset GREENLOOP_MAX_ACTIVITIES")
    said_as_json(greenloop("runs", "--json", data_home=tmp_path, timeout=60, GREENLOOP_DOCKER_POOL="-1"),
                 "GREENLOOP_DOCKER_POOL", "fix or unset")


def test_a_malformed_scenario_file_is_said_before_anything_starts(tmp_path):
    unknown_key = tmp_path / "unknown-key.yaml"
    unknown_key.write_text("name: bad\nrules:\n  - trigger: {agent: fixer}\n    response: {text: hi}\n")
    not_yaml = tmp_path / "not-yaml.yaml"
    not_yaml.write_text("name: [bad\n")
    bad_regex = tmp_path / "bad-regex.yaml"
    bad_regex.write_text("name: bad\nrules:\n  - trigger: {context: '[('}\n    response: {text: hi}\n")
    for path, words in ((unknown_key, ("rules.0.trigger.agent", "Extra inputs")),
                        (not_yaml, ("not valid YAML", "line 2")),
                        (bad_regex, ("rules.0.trigger.context", "not a regular expression"))):
        said_well(greenloop("run", str(DEMO), "--scripted", str(path), data_home=tmp_path, timeout=60),
                  str(path), *words, "Scenario files")
        said_well(greenloop("worker", "--scripted", str(path), data_home=tmp_path, timeout=60), *words)
    said_well(greenloop("run", str(DEMO), "--scripted", str(tmp_path / "nowhere.yaml"), data_home=tmp_path,
                        timeout=60), "cannot be read", "hint:")


def test_an_invalid_option_is_named_as_it_is_typed(tmp_path):
    scenario = str(SCENARIOS / "demo-python.yaml")
    done = greenloop("run", str(DEMO), "--sandbox", "foo", "--scripted", scenario, data_home=tmp_path, timeout=60)
    said_well(done, "--sandbox: Input should be 'auto', 'docker', 'bwrap' or 'local' (got 'foo')")
    assert "--backend" not in done.stderr
    said_well(greenloop("run", str(DEMO), "--validation", "sometimes", "--scripted", scenario, data_home=tmp_path,
                        timeout=60), "--validation:", "(got 'sometimes')")


def test_errors_under_json_are_json_objects(tmp_path):
    scenario = str(SCENARIOS / "demo-python.yaml")
    error = said_as_json(greenloop("run", str(DEMO), "--sandbox", "foo", "--scripted", scenario, "--json",
                                   data_home=tmp_path, timeout=60), "--sandbox")
    assert error["kind"] == "validation_error"
    said_as_json(greenloop("status", "some-run", "--address", "127.0.0.1:1", "--json", data_home=tmp_path,
                           timeout=60), "no Temporal server reachable at 127.0.0.1:1", "greenloop server")
    said_as_json(greenloop("schedule", "list", "--address", "127.0.0.1:1", "--json", data_home=tmp_path,
                           timeout=60), "no Temporal server reachable")
    # Click's own usage errors too.
    said_as_json(greenloop("answer", "some-run", "some-test", "maybe", "--json", data_home=tmp_path, timeout=60),
                 "'maybe' is not one of 'retry', 'skip', 'abort'", "greenloop answer --help")
    said_as_json(greenloop("status", "--json", data_home=tmp_path, timeout=60), "Missing argument")


def test_no_server_is_said_without_the_transport_dump(tmp_path):
    done = greenloop("status", "some-run", "--address", "127.0.0.1:1", data_home=tmp_path, timeout=60)
    said_well(done, "no Temporal server reachable at 127.0.0.1:1 (connection refused", "greenloop server")
    assert "tonic" not in done.stderr and "ConnectError" not in done.stderr
    said_well(greenloop("status", "some-run", "--address", "not a host", data_home=tmp_path, timeout=60),
              "is not a Temporal address", "HOST:PORT")


def test_a_project_whose_language_cannot_be_told_is_refused_before_a_run(tmp_path):
    repo = tmp_path / "docs-only"
    repo.mkdir()
    (repo / "README.md").write_text("# notes\n")
    (repo / "check.sh").write_text("echo fine\n")
    done = greenloop("run", str(repo), "--scripted", str(SCENARIOS / "unfixable.yaml"), "--address", "127.0.0.1:1",
                     data_home=tmp_path, timeout=60)
    # Refused before any server is asked (127.0.0.1:1 would be "no Temporal server reachable").
    said_well(done, f"cannot tell the language of {repo}", "give --language (", "greenloop.toml")
    assert "reachable" not in done.stderr
    said_well(greenloop("init", str(repo), data_home=tmp_path, timeout=60), "give --language (")


async def test_a_mistyped_run_id_points_at_the_list_of_runs(temporal_env, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    for command in ("status", "watch", "abort"):
        said_well(greenloop(command, "greenloop-nope-123", "--address", address, data_home=tmp_path, timeout=60),
                  "no run 'greenloop-nope-123'", "`greenloop runs` lists")
    said_as_json(greenloop("status", "greenloop-nope-123", "--address", address, "--json", data_home=tmp_path,
                           timeout=60), "greenloop runs")
