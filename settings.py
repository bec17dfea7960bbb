"""Greenloop's own environment variables, read in one place.

Every ``GREENLOOP_*`` variable a process reads is a field here (the README lists
them); code asks ``settings()`` instead of ``os.environ``. It reads the
environment at each call, so a variable set later (a test, a CLI option such as
``worker --host``) is seen. A value that does not parse is a typed error naming
the variable. Temporal's own configuration (``TEMPORAL_ADDRESS``...), the
provider's (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``) and OpenTelemetry's
(``OTEL_*``) keep their standard names and are read by their libraries.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .domain.errors import ErrorKind, GreenloopError


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)

    home: Path = Field(default_factory=lambda: Path(user_data_dir("greenloop")), alias="GREENLOOP_HOME",
                       description="where runs, environments and the dev server's database live")
    task_queue: str = Field("greenloop", alias="GREENLOOP_TASK_QUEUE", description="the shared task queue")
    host: str | None = Field(None, alias="GREENLOOP_HOST",
                             description="this worker's host id (default: the machine's name and a digest of "
                                         "GREENLOOP_HOME)")
    ui_url: str | None = Field(None, alias="GREENLOOP_UI_URL",
                               description="the Web UI of a configured cluster, for the links `run` prints")
    debug: bool = Field(False, alias="GREENLOOP_DEBUG", description="show tracebacks of unexpected errors")
    max_activities: int = Field(4, ge=1, alias="GREENLOOP_MAX_ACTIVITIES",
                                description="activities a worker runs at once on the shared queue")
    host_slots: int = Field(32, ge=1, alias="GREENLOOP_HOST_SLOTS",
                            description="activities a worker runs at once on its own host queue")
    escalations_poll_s: float = Field(10.0, gt=0, alias="GREENLOOP_ESCALATIONS_POLL_S",
                                      description="how often the escalations-waiting metric is counted")
    docker_pool: int = Field(2, ge=0, alias="GREENLOOP_DOCKER_POOL",
                             description="warm docker sandbox containers kept (0: a new container per run)")
    sandbox_cgroups: bool = Field(True, alias="GREENLOOP_SANDBOX_CGROUPS",
                                  description="`off`: do not use cgroups for sandbox limits")
    sandbox_path: str | None = Field(None, alias="GREENLOOP_SANDBOX_PATH",
                                     description="PATH inside the sandbox (default: the worker's PATH)")
    sandbox_ro: list[str] = Field(default_factory=list, alias="GREENLOOP_SANDBOX_RO",
                                  description="extra host folders the sandbox sees read-only (`:`-separated)")

    @field_validator("debug", mode="before")
    @classmethod
    def _flag(cls, v: object) -> bool:
        return str(v).strip().lower() not in ("", "0", "false", "no", "off")

    @field_validator("sandbox_cgroups", mode="before")
    @classmethod
    def _on_unless_off(cls, v: object) -> bool:
        return str(v).strip().lower() != "off"

    @field_validator("sandbox_ro", mode="before")
    @classmethod
    def _paths(cls, v: object) -> list[str]:
        return [p for p in v.split(":") if p] if isinstance(v, str) else list(v or [])

    @field_validator("host", "ui_url", "sandbox_path", mode="before")
    @classmethod
    def _empty_is_unset(cls, v: object) -> object:
        return v or None


VARIABLES = {f.alias: f.description for f in Settings.model_fields.values()}


def settings() -> Settings:
    """The ``GREENLOOP_*`` variables of this process, now."""
    given = {k: v for k, v in os.environ.items() if k in VARIABLES and v != ""}
    try:
        return Settings.model_validate(given)
    except ValidationError as exc:
        bad = exc.errors()[0]
        name = str(bad["loc"][0])
        raise GreenloopError(f"{name}={given.get(name, '')!r}: {bad['msg']}", kind=ErrorKind.VALIDATION_ERROR,
                             suggestion=f"fix or unset {name} ({VARIABLES.get(name, '')})") from None
