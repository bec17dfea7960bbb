"""The run settings, one table (``run_settings.SETTINGS``): each one's command-line
option, ``greenloop.toml`` key and request field reach the same ``FixRequest``
field, with the request's default; a flag given beats the file, which beats the
default; ``greenloop init`` and the README list exactly the table's keys."""

from __future__ import annotations

import enum
import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
import typer
from pydantic import ValidationError
from typer.testing import CliRunner

from greenloop import project_config
from greenloop.cli.output import invalid_options
from greenloop.cli.project import render
from greenloop.cli.run_options import with_run_options
from greenloop.cli.runs import build_request, given_options
from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.domain.llm import LLMSettings
from greenloop.run_request import FixRequest
from greenloop.run_settings import (
    BY_NAME,
    IN_FILE,
    OPTIONS,
    SETTINGS,
    Setting,
    request_data,
    request_field,
    request_values,
)
from greenloop.runner.plan import SuitePlan
from tests.conftest import REPO

BOTH = [s for s in SETTINGS if s.option and s.toml]


def sample(s: Setting, n: int = 1) -> Any:
    """A value of ``s`` other than its default (and other than ``sample(s, m)`` for m != n)."""
    kind, default = s.type, s.default
    if get_origin(kind) is Literal:
        return [c for c in get_args(kind) if c != default][n - 1]
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return [c for c in kind if c != default][n - 1]
    if kind is bool:
        return not default
    if kind is int:
        return default + n
    if kind == float | None:
        return 1.5 * n
    if kind == int | None:
        return (default or 1) + n
    if kind == str | None or kind is str:
        return f"value-{n}"
    if kind == list[str]:
        return [f"glob-{n}*", f"other-{n}*"]
    if kind == dict[str, str]:
        return {f"NAME_{n}": f"v{n}"}
    raise AssertionError(f"no sample for {s.name}: {kind}")


def flag(s: Setting, value: Any) -> list[str]:
    """The command line that gives ``s`` the ``value``."""
    assert s.option
    on, _, off = s.option.partition("/")
    if s.type is bool:
        assert value is not s.default
        return [on if value else off] if off else [on]
    values = value if isinstance(value, list) else [value]
    return [part for v in values for part in (on, str(v.value if isinstance(v, enum.Enum) else v))]


def toml_text(values: dict[Setting, Any]) -> str:
    """A greenloop.toml saying ``values``."""
    top, tables = [], {}
    for s, value in values.items():
        if s.section:
            tables.setdefault(s.section, {})[s.key] = value
        elif isinstance(value, dict):
            tables[s.key] = value
        else:
            top.append(f"{s.key} = {json.dumps(value)}\n")
    return "".join([*top, *(f"[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
                            for name, table in tables.items())])


def run_cli(repo: Path, args: list[str]) -> FixRequest:
    """The request a command taking the run options makes of ``args``, the way `greenloop run` makes it."""
    made: list[FixRequest] = []
    app = typer.Typer()

    @app.command()
    @with_run_options
    def start(ctx: typer.Context, repo: str, options: dict | None = None) -> None:
        made.append(build_request(repo, given_options(ctx), **(options or {})))

    out = CliRunner().invoke(app, [str(repo), *args])
    assert out.exit_code == 0, out.output + repr(out.exception)
    return made[0]


def test_every_setting_is_a_request_field_with_the_requests_default():
    for s in SETTINGS:
        assert s.option or s.toml, s.name
        field = request_field(s.field)  # a KeyError names a field the request does not have
        default = field.get_default(call_default_factory=True)
        assert s.default == ((not default) if s.negated else default), s.name
    assert len({s.name for s in SETTINGS}) == len({s.field for s in SETTINGS}) == len(SETTINGS)
    assert len({s.option for s in OPTIONS}) == len(OPTIONS) and len({s.toml for s in IN_FILE}) == len(IN_FILE)


def test_the_commands_take_every_option_of_the_table_and_the_file_every_key():
    from greenloop.cli.main import app

    group = typer.main.get_command(app)
    for command in (group.commands["run"], group.commands["schedule"].commands["create"]):
        declared = {p.name: [*p.opts, *p.secondary_opts] for p in command.params}
        for s in OPTIONS:
            assert declared[s.name] == s.option.split("/"), (command.name, s.name)
    assert [s.option for s in OPTIONS] == [  # the options, as users type them, in --help's order
        "--ref", "--test-command", "--build-command", "--framework", "--language", "--select", "--exclude",
        "--max-attempts", "--candidates", "--run-budget", "--per-test-budget", "--concurrency", "--requests-per-minute", "--validation",
            "--max-batch",
        "--test-impact/--no-test-impact", "--escalation-deadline", "--escalation-default", "--model", "--budget-usd",
        "--max-test-runs", "--max-commands", "--tests-only", "--analysis-only", "--sandbox", "--network", "--sandbox-image", "--timeout", "--push", "--pr",
        "--setup-command", "--single-test-command", "--output-bytes"]
    keys = set(project_config.FILE_MODEL.model_fields) - set(project_config.SECTIONS)
    keys |= {f"{name}.{key}" for name, model in project_config.SECTIONS.items() for key in model.model_fields}
    assert keys == {s.toml for s in IN_FILE} == {  # the file's keys, as users write them
        "setup", "test_command", "single_test_command", "build_command", "framework", "language", "env", "exclude",
        "sandbox.backend", "sandbox.timeout", "sandbox.setup_network", "sandbox.setup_timeout", "sandbox.memory_mb",
        "sandbox.image", "budgets.run", "budgets.per_test", "budgets.max_attempts", "budgets.candidates", "budgets.llm_usd",
        "budgets.test_runs", "budgets.commands", "sandbox.output_bytes"}


def test_with_no_flag_and_no_file_the_request_has_its_own_defaults(tmp_path):
    request = run_cli(tmp_path, [])
    assert request == FixRequest(repo=str(tmp_path.resolve()))
    assert request_values(request) == {s.name: s.default for s in SETTINGS}


@pytest.mark.parametrize("setting", OPTIONS, ids=lambda s: s.name)
def test_each_option_reaches_its_request_field(tmp_path, setting):
    value = sample(setting)
    extra = flag(BY_NAME["push"], "origin") if setting.name == "pull_request" else []
    request = run_cli(tmp_path, [*flag(setting, value), *extra])
    assert request_values(request)[setting.name] == value
    untouched = {s.name: s.default for s in SETTINGS if s.name not in (setting.name, "push" if extra else "")}
    assert {k: v for k, v in request_values(request).items() if k in untouched} == untouched


@pytest.mark.parametrize("setting", IN_FILE, ids=lambda s: s.name)
def test_each_key_of_the_file_reaches_its_request_field(tmp_path, setting):
    value = sample(setting)
    (tmp_path / "greenloop.toml").write_text(toml_text({setting: value}))
    request = run_cli(tmp_path, [])
    assert request_values(request)[setting.name] == value
    assert request.config_file == str(tmp_path / "greenloop.toml")


@pytest.mark.parametrize("setting", BOTH, ids=lambda s: s.name)
def test_a_flag_beats_the_file_which_beats_the_default(tmp_path, setting):
    from_file, from_flag = sample(setting, 1), sample(setting, 2)
    (tmp_path / "greenloop.toml").write_text(toml_text({setting: from_file}))
    with_flag = request_values(run_cli(tmp_path, flag(setting, from_flag)))[setting.name]
    without = request_values(run_cli(tmp_path, []))[setting.name]
    if setting.type == list[str]:  # the file's patterns and the flags' add up
        assert with_flag == [*from_file, *from_flag] and without == from_file
    else:
        assert with_flag == from_flag and without == from_file


@pytest.mark.parametrize("setting", [s for s in BOTH if s.type is int], ids=lambda s: s.name)
def test_a_flag_given_with_its_default_value_still_beats_the_file(tmp_path, setting):
    (tmp_path / "greenloop.toml").write_text(toml_text({setting: sample(setting)}))
    assert request_values(run_cli(tmp_path, flag(setting, setting.default)))[setting.name] == setting.default


def test_a_request_made_without_the_file_takes_only_the_checkouts_settings_from_it(tmp_path):
    values = {s: sample(s) for s in IN_FILE}
    (tmp_path / "greenloop.toml").write_text(toml_text(values))
    bare = FixRequest(repo="https://example.invalid/x.git", test_command="mine", env={"NAME_1": "own"})
    filled = request_values(project_config.fill(bare, tmp_path))
    for s in IN_FILE:
        if s.name == "test_command":
            assert filled[s.name] == "mine"  # what the request says stands
        elif s.name == "env":
            assert filled[s.name] == {"NAME_1": "own"}
        else:
            assert filled[s.name] == (values[s] if s.from_checkout else s.default), s.name
    assert all("." not in s.field and not s.negated for s in project_config.FROM_CHECKOUT)  # fill sets them whole


@pytest.mark.parametrize("text, problem", [
    ("[budgets]\nrunn = 10", "budgets.runn: Extra inputs are not permitted"),
    ("[sandbox]\nbackend = 'vm'", "sandbox.backend"),
    ("[budgets]\nrun = 5", "budgets.run: Input should be greater than or equal to 10"),
    ("[sandbox]\nmemory_mb = 32", "sandbox.memory_mb"),
    ("[budgets]\nllm_usd = -1", "budgets.llm_usd"),
    ("[extra]\nkey = 1", "extra: Extra inputs are not permitted"),
])
def test_a_key_the_file_may_not_have_or_a_value_out_of_range_is_a_typed_error_naming_it(tmp_path, text, problem):
    (tmp_path / "greenloop.toml").write_text(text)
    with pytest.raises(GreenloopError) as caught:
        build_request(str(tmp_path))
    assert caught.value.kind is ErrorKind.VALIDATION_ERROR and problem in caught.value.message


def test_init_writes_every_key_of_the_table_with_its_description_and_default():
    plan = SuitePlan(language="python", framework="pytest", test_command="python -m pytest -q", reason="pytest.ini")
    text = render(plan, "a virtualenv")
    assert tomllib.loads(text) == {"language": "python", "framework": "pytest", "exclude": [], "env": {},
                                   "sandbox": {}, "budgets": {}}
    for s in IN_FILE:
        assert s.description[1:] in text, s.name  # (a sentence's first letter is capitalised)
    # Every commented-out key, uncommented, is the table's default (or its example where it has none).
    uncommented = re.sub(r"^# (\w+ = )", r"\1", text.replace('# NAME = "value"', ""), flags=re.M)
    said = project_config.FILE_MODEL.model_validate(tomllib.loads(uncommented)).settings()
    expected = {s.name: s.default for s in IN_FILE if s.default is not None}
    expected.update(framework="pytest", language="python", test_command="python -m pytest -q", build_command="",
                    setup_command="", single_test_command="", budget_usd=5.0, sandbox_image="my-ci-image:1")
    assert said == expected


def readme_table() -> str:
    def default(s: Setting) -> str:
        value = s.default.value if isinstance(s.default, enum.Enum) else s.default
        return "none" if value is None else f"`{value if isinstance(value, str) else json.dumps(value)}`"

    def key(s: Setting) -> str:
        if not s.toml:
            return ""
        return f"`[{s.section}] {s.key}`" if s.section else f"`[{s.key}]`" if s.type == dict[str, str] else f"`{s.key}`"

    rows = ["| option | `greenloop.toml` | request field | default | what it is |", "| --- | --- | --- | --- | --- |"]
    rows += [f"| {f'`{s.option}`' if s.option else ''} | {key(s)} | `{'not ' if s.negated else ''}{s.field}` "
             f"| {default(s)} | {s.description} |" for s in SETTINGS]
    return "\n".join(rows)


def test_the_readme_lists_every_setting_as_the_table_says():
    table = readme_table()
    assert table in (REPO / "README.md").read_text(), f"README's table of run settings should be:\n{table}"



@pytest.mark.parametrize(("rpm", "expected"), [(50, 8), (4000, 8), (30, 5), (12, 2), (5, 1), (None, 8)])
def test_the_default_concurrency_follows_the_models_request_limit(rpm, expected):
    """Not 1: as many tests at once as the key's requests per minute keep busy (one conversation
    asks about 6 times a minute), at most 8; an explicit --concurrency wins."""
    llm = LLMSettings(requests_per_minute=rpm)
    assert FixRequest(repo=".", llm=llm).in_flight == expected
    assert FixRequest(repo=".", llm=llm, concurrency=3).in_flight == 3


def test_the_request_limit_reaches_the_request_from_the_flag(tmp_path):
    request = run_cli(tmp_path, ["--requests-per-minute", "24"])
    assert request.llm.requests_per_minute == 24 and request.concurrency is None and request.in_flight == 4
    assert run_cli(tmp_path, []).in_flight == 8  # 50 a minute by default

@pytest.mark.parametrize("name, value, option", [
    ("sandbox", "foo", "--sandbox"), ("timeout", 0, "--timeout"), ("per_test_budget_s", 5, "--per-test-budget"),
    ("escalation_default", "maybe", "--escalation-default"), ("max_attempts", 20, "--max-attempts"), ("validation", "x", "--validation"),
    ("setup_timeout_s", 0, "sandbox.setup_timeout"),  # no option: the file's key
])
def test_an_invalid_value_is_named_by_its_option_from_the_table(name, value, option):
    with pytest.raises(ValidationError) as exc:
        FixRequest.model_validate({**request_data({name: value}), "repo": "/r"})
    message = invalid_options(exc.value).message
    assert message.startswith(f"invalid option: {option}: ") and f"(got {value!r})" in message
