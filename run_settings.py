"""The settings of a run, one table: each is named once (``SETTINGS``) and says
where it lands in the run's ``FixRequest``, its command-line option (``greenloop
run`` and ``greenloop schedule create``) and its ``greenloop.toml`` key. The CLI
options, the file's keys, ``greenloop init``'s commented file and the README's
table are all made from it; defaults are the request's own (``FixRequest`` and
the models it holds), read from there.

A setting's value is the flag's when the flag was given on the command line, else
the file's, else the default (``merged``); the file's lists and tables add to the
flags' instead.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.fields import FieldInfo

from .run_request import FixRequest, ProjectRequest


class Setting(BaseModel):
    """One setting of a run."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str  # the one name: build_request's keyword, the CLI parameter, the key of every dict of settings
    field: str  # where the request holds it: "run_budget_s", "llm.budget_usd", "sandbox.timeout_s"
    # The value's type on the command line and in the file where it is not the request field's.
    as_type: Any = None
    option: str | None = None  # the command-line option ("--run-budget", "--test-impact/--no-test-impact")
    help: str | None = None  # the option's help
    metavar: str | None = None
    toml: str | None = None  # the file's key, "section.key" inside a table ("budgets.run")
    bounds: dict[str, Any] = {}  # what the file's value must satisfy (pydantic Field constraints)
    description: str  # what it is, for the file's comments and the README
    example: str | None = None  # a value to show in the file's comments where there is no default
    negated: bool = False  # the request holds the opposite (--tests-only: llm.allow_production_edits)
    # A request made without reading the file (a git URL, an API call) takes it from the
    # file of the checked-out repository where it has none (``project_config.fill``).
    from_checkout: bool = False

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def type(self) -> Any:
        """The value's type on the command line and in the file."""
        return self.as_type or request_field(self.field).annotation

    @property
    def default(self) -> Any:
        """The request's default, as this setting's value."""
        value = request_field(self.field).get_default(call_default_factory=True)
        return TypeAdapter(self.type).validate_python(not value if self.negated else value)

    @property
    def section(self) -> str:
        """The file's table that holds the key ("" for the top level)."""
        return self.toml.rpartition(".")[0] if self.toml else ""

    @property
    def key(self) -> str:
        """The key inside its table."""
        return self.toml.rpartition(".")[2] if self.toml else ""


SETTINGS: tuple[Setting, ...] = (
    Setting(name="ref", field="ref", option="--ref", help="Git ref to check out.",
            description="the git ref to check out"),
    Setting(name="test_command", field="test_command", option="--test-command",
            help="Test command (default: detected).", toml="test_command", from_checkout=True,
            description="the command that runs the whole suite (default: detected)"),
    Setting(name="build_command", field="build_command", option="--build-command",
            help="Build command (default: detected).", toml="build_command", from_checkout=True,
            description="run before the tests (default: detected)"),
    Setting(name="framework", field="framework", option="--framework",
            help="Test framework (default: detected).", toml="framework", from_checkout=True,
            description="the test framework (default: detected)"),
    Setting(name="language", field="language", option="--language",
            help="Language (default: detected).", toml="language", from_checkout=True,
            description="the project's language (default: detected)"),
    Setting(name="select", field="select", option="--select",
            help="Only tests matching this glob/substring.", description="only the tests matching these globs"),
    Setting(name="exclude", field="exclude", option="--exclude", help="Skip tests matching this glob.",
            toml="exclude", description="tests never to fix (globs over test ids; the file's and the flags' add up)"),
    Setting(name="max_attempts", field="max_attempts", option="--max-attempts",
            help="Fix attempts per test before escalating.", toml="budgets.max_attempts", bounds={"ge": 1, "le": 10},
            description="fix attempts per test before a person is asked"),
    Setting(name="candidates", field="candidates", option="--candidates",
            help="Independent fixes asked for in parallel at each attempt; the smallest passing one is kept.",
            toml="budgets.candidates", bounds={"ge": 1, "le": 8},
            description="independent fixes asked for in parallel at each attempt (the smallest passing one is kept; "
                        "the LLM budget, test runs and commands are shared among them)"),
    Setting(name="run_budget_s", field="run_budget_s", option="--run-budget",
            help="Whole-run time budget, seconds.", toml="budgets.run", bounds={"ge": 10},
            description="the whole run's time budget, seconds"),
    Setting(name="per_test_budget_s", field="per_test_budget_s", option="--per-test-budget",
            help="Per-test time budget, seconds.", toml="budgets.per_test", bounds={"ge": 60},
            description="one test's time budget, seconds"),
    Setting(name="concurrency", field="concurrency", option="--concurrency",
            help="Tests fixed at once (default: as many as --requests-per-minute keeps busy, at most 8).",
            description="tests fixed at once (default: the model's requests per minute / 6, at most 8)"),
    Setting(name="requests_per_minute", field="llm.requests_per_minute", option="--requests-per-minute",
            help="The model's request limit per minute for your API key (Anthropic's tiers: 50, 1000, 2000, "
                 "4000); the default concurrency follows it.", metavar="RPM",
            description="the model's request limit per minute for your API key (sets the default concurrency)"),
    Setting(name="validation", field="validation", option="--validation",
            help="How fixes are validated: queue (in batches like a merge queue, one full-suite run per batch, "
                 "a failing batch bisected) or each (every attempt runs the full suite itself).",
            description="how fixes are validated: queue (in batches) or each (every attempt runs the full suite)"),
    Setting(name="max_batch", field="max_batch", option="--max-batch",
            help="Most fixes one validation batch holds (queue).", description="most fixes one validation batch holds"),
    Setting(name="test_impact", field="test_impact", option="--test-impact/--no-test-impact",
            help="Queue: map which tests run which files (per-test coverage, pytest) to check and bisect batches "
                 "sooner.", description="map which tests run which files to check and bisect batches sooner"),
    Setting(name="escalation_deadline_s", field="escalation_deadline_s", option="--escalation-deadline",
            help="Seconds an escalation waits for a person.", description="seconds an escalation waits for a person"),
    Setting(name="escalation_default", field="escalation_default", option="--escalation-default",
            help="Answer when the deadline passes.", description="the answer when an escalation's deadline passes"),
    Setting(name="model", field="llm.model", option="--model", help="Claude model.",
            description="the Claude model"),
    # The run's LLM ceiling (the tests' shares are worked out from it).
    Setting(name="budget_usd", field="llm.budget_usd", option="--budget-usd",
            help="LLM cost ceiling for the run.", toml="budgets.llm_usd", bounds={"ge": 0}, example="5.0",
            description="LLM money for the run, US dollars (default: unlimited)"),
    Setting(name="max_test_runs", field="llm.max_test_runs", option="--max-test-runs",
            help="Test runs the model may ask for in one conversation (its run_tests tool).",
            toml="budgets.test_runs", bounds={"ge": 0, "le": 50},
            description="test runs the model may ask for in one conversation (0: none)"),
    Setting(name="max_commands", field="llm.max_commands", option="--max-commands",
            help="Sandboxed commands the model may run in one conversation (its bash tool).",
            toml="budgets.commands", bounds={"ge": 0, "le": 100},
            description="sandboxed commands the model may run in one conversation (0: none)"),
    Setting(name="tests_only", field="llm.allow_production_edits", negated=True, option="--tests-only",
            help="Never edit production code.", description="never edit production code"),
    Setting(name="analysis_only", field="llm.analysis_only", option="--analysis-only",
            help="Analyse, do not fix (no API key needed).", description="analyse, do not fix"),
    Setting(name="sandbox", field="sandbox.backend", option="--sandbox",
            help="auto, docker, bwrap or local.", toml="sandbox.backend",
            description="auto (docker, else bubblewrap), docker, bwrap, or local (no isolation)"),
    Setting(name="network", field="sandbox.network", option="--network",
            help="Allow network inside the sandbox.", description="test runs may reach the network"),
    Setting(name="sandbox_image", field="sandbox.image", option="--sandbox-image",
            help="Image the docker sandbox runs in (default: Greenloop's own, with the host's toolchains).",
            toml="sandbox.image", bounds={"min_length": 1}, example='"my-ci-image:1"',
            description="docker backend: run in this local image (it brings the toolchains and bash)"),
    Setting(name="timeout", field="sandbox.timeout_s", as_type=int, option="--timeout",
            help="Time limit of one test run, seconds.", toml="sandbox.timeout", bounds={"ge": 1},
            description="one test run's time limit, seconds"),
    Setting(name="push", field="push", option="--push", metavar="REMOTE",
            help="Push the greenloop/<run> branch to this remote of the repository (or URL) when tests were fixed.",
            description="push the run's branch to this remote (or URL) when tests were fixed"),
    Setting(name="pull_request", field="pull_request", option="--pr",
            help="Write pr.md and open a pull request with gh (needs --push).",
            description="write pr.md and open a pull request with gh"),
    Setting(name="setup_command", field="setup_command", option="--setup-command",
            help="Extra setup command, run in the project's environment with network.", toml="setup",
            from_checkout=True, description="run after the built-in setup, in the project's environment, with network"),
    Setting(name="single_test_command", field="single_test_command", option="--single-test-command",
            help="Command that runs one test ({id}, {file}, {name}).", toml="single_test_command",
            from_checkout=True, description="the command that runs one test: {id}, {file} and {name} are filled in"),
    Setting(name="env", field="env", toml="env", from_checkout=True,
            description="variables the setup and every test run get (names that look like secrets are dropped)"),
    Setting(name="setup_network", field="sandbox.setup_network", toml="sandbox.setup_network",
            description="the setup may reach package registries; test runs never do"),
    Setting(name="setup_timeout_s", field="sandbox.setup_timeout_s", toml="sandbox.setup_timeout",
            bounds={"ge": 1}, description="the setup's time limit, seconds"),
    Setting(name="memory_mb", field="sandbox.memory_mb", toml="sandbox.memory_mb", bounds={"ge": 64},
            description="memory of every sandboxed command, MB"),
    Setting(name="output_bytes", field="sandbox.output_bytes", option="--output-bytes",
            help="The most a test run may print (bytes); past it the run is stopped and says so.",
            toml="sandbox.output_bytes", bounds={"ge": 1024},
            description="the most output (stdout and stderr) a sandboxed command may print, bytes: "
                        "past it the run is stopped, and the run says its output was cut"),
)

BY_NAME = {s.name: s for s in SETTINGS}
BY_FIELD = {s.field: s for s in SETTINGS}
OPTIONS = tuple(s for s in SETTINGS if s.option)  # the command-line options every run takes
IN_FILE = tuple(s for s in SETTINGS if s.toml)  # the keys of greenloop.toml


def request_field(path: str) -> FieldInfo:
    """The ``FixRequest`` field (a nested model's, through dots) at ``path``."""
    model: Any = FixRequest
    head, _, rest = path.partition(".")
    while rest:
        model = model.model_fields[head].annotation
        head, _, rest = rest.partition(".")
    return model.model_fields[head]


def merged(flags: dict[str, Any], given: set[str], file: dict[str, Any]) -> dict[str, Any]:
    """Settings by name: the file's where no flag was ``given`` on the command line, the
    flags' otherwise; the file's lists come before the flags' and its tables under them."""
    out = dict(flags)
    for name, value in file.items():
        if isinstance(value, list):
            out[name] = list(dict.fromkeys([*value, *flags.get(name, [])]))
        elif isinstance(value, dict):
            out[name] = {**value, **flags.get(name, {})}
        elif name not in given:
            out[name] = value
    return out


def request_data(values: dict[str, Any]) -> dict[str, Any]:
    """``FixRequest`` input from settings by name (what is missing takes the request's default)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        setting = BY_NAME[name]
        *parents, last = setting.field.split(".")
        into = out
        for part in parents:
            into = into.setdefault(part, {})
        into[last] = (not value) if setting.negated else value
    return out


def request_values(request: ProjectRequest, settings: tuple[Setting, ...] = SETTINGS) -> dict[str, Any]:
    """What ``request`` says of each of ``settings``, by name."""
    out = {}
    for s in settings:
        value: Any = request
        for part in s.field.split("."):
            value = getattr(value, part)
        out[s.name] = (not value) if s.negated else value
    return out
