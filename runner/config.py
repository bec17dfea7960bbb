"""A repository's own Greenloop configuration: ``greenloop.toml`` at its
root, or ``[tool.greenloop]`` in its ``pyproject.toml``. Every key is
optional; command-line flags override the file, and the effective values
travel in the run's ``FixRequest`` (so the Web UI shows them).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..domain.errors import ErrorKind, GreenloopError

FILE = "greenloop.toml"


class SandboxConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["auto", "docker", "bwrap", "local"] | None = None
    timeout: int | None = Field(default=None, ge=1)  # one test run's time limit, seconds
    setup_network: bool | None = None  # the setup phase may reach package registries (default: yes)
    setup_timeout: int | None = Field(default=None, ge=1)
    memory_mb: int | None = Field(default=None, ge=64)
    # The image the docker backend runs in, instead of Greenloop's own (which shows the host's toolchains).
    image: str | None = Field(default=None, min_length=1)


# Sandbox keys of the file -> the run's ``SandboxSettings`` fields.
SANDBOX_SETTINGS = {"setup_network": "setup_network", "setup_timeout": "setup_timeout_s", "memory_mb": "memory_mb",
                    "image": "image"}


def sandbox_settings(sandbox: SandboxConfig, given: dict[str, Any]) -> dict[str, Any]:
    """``SandboxSettings`` fields from the file's ``[sandbox]`` where ``given`` (the
    command line's values, None when not given) says nothing; flags override the file."""
    out = {field: getattr(sandbox, key) for key, field in SANDBOX_SETTINGS.items() if getattr(sandbox, key) is not None}
    return {**out, **{k: v for k, v in given.items() if v is not None}}


class BudgetsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: int | None = Field(default=None, ge=10)  # whole-run time budget, seconds
    per_test: int | None = Field(default=None, ge=60)
    max_attempts: int | None = Field(default=None, ge=1, le=10)
    llm_usd: float | None = Field(default=None, ge=0)


class ProjectConfig(BaseModel):
    """What ``greenloop.toml`` may say."""

    model_config = ConfigDict(extra="forbid")

    setup: str | None = None  # runs after the built-in setup, in the environment, with network
    test_command: str | None = None
    single_test_command: str | None = None  # runs one test: {id}, {file}, {name} are filled in
    build_command: str | None = None
    framework: str | None = None
    language: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    exclude: list[str] = Field(default_factory=list)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise GreenloopError(f"{path} is not valid TOML: {exc}", kind=ErrorKind.VALIDATION_ERROR,
                             file=str(path)) from None
    except OSError as exc:
        raise GreenloopError(f"cannot read {path}: {exc}", kind=ErrorKind.VALIDATION_ERROR, file=str(path)) from None


def load(root: Path) -> tuple[ProjectConfig, Path | None]:
    """The repository's configuration and the file it came from (defaults and None when it has none)."""
    path, data = root / FILE, None
    if path.is_file():
        data = _read(path)
    elif (root / "pyproject.toml").is_file():
        table = _read(root / "pyproject.toml").get("tool", {}).get("greenloop")
        if table is not None:
            path, data = root / "pyproject.toml", table
    if data is None:
        return ProjectConfig(), None
    try:
        return ProjectConfig.model_validate(data), path
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors())
        raise GreenloopError(f"{path}: {problems}", kind=ErrorKind.VALIDATION_ERROR, file=str(path)) from None


# CLI option -> where the file says it.
OPTIONS: dict[str, tuple[str, ...]] = {
    "test_command": ("test_command",), "build_command": ("build_command",), "framework": ("framework",),
    "language": ("language",), "setup_command": ("setup",), "single_test_command": ("single_test_command",),
    "sandbox": ("sandbox", "backend"), "timeout": ("sandbox", "timeout"), "run_budget_s": ("budgets", "run"),
    "per_test_budget_s": ("budgets", "per_test"), "max_attempts": ("budgets", "max_attempts"),
    "budget_usd": ("budgets", "llm_usd"),
}


def merge(config: ProjectConfig, opts: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """``opts`` (a command's options) with the file's values wherever the
    option was not ``given`` on the command line; lists (``exclude``) add up."""
    out = dict(opts)
    for option, where in OPTIONS.items():
        if option in given or option not in out:
            continue
        value: Any = config
        for attr in where:
            value = getattr(value, attr)
        if value is not None:
            out[option] = value
    if "exclude" in out:
        out["exclude"] = list(dict.fromkeys([*config.exclude, *out["exclude"]]))
    return out


# Request field -> configuration field, for requests made without reading the file.
REQUEST_FIELDS = {"test_command": "test_command", "build_command": "build_command", "framework": "framework",
                  "language": "language", "setup_command": "setup", "single_test_command": "single_test_command"}


class Fillable(Protocol):
    """What ``fill`` reads of a request (a ``FixRequest``, defined in a layer above this one)."""

    config_file: str | None
    env: dict[str, str]

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Self: ...


RequestT = TypeVar("RequestT", bound=Fillable)


def fill(request: RequestT, root: Path) -> RequestT:
    """A ``FixRequest`` made without reading the repository's file (a git URL, a
    schedule, an API call) with the file's commands and variables where it has
    none; a request whose ``config_file`` is set already has them."""
    if request.config_file is not None:
        return request
    cfg, path = load(root)
    if path is None:
        return request
    update: dict[str, Any] = {field: getattr(cfg, key) for field, key in REQUEST_FIELDS.items()
                              if getattr(request, field) is None and getattr(cfg, key) is not None}
    return request.model_copy(update={**update, "env": {**cfg.env, **request.env}, "config_file": str(path)})
