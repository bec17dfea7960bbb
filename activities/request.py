"""The part of the run's request that the workspace, plan and setup activities read.

``ProjectRequest`` holds where the repository is (``repo``, ``ref``, ``run_dir``),
its commands and variables (which ``runner/config.fill`` completes from the
repository's greenloop.toml) and the sandbox its setup and test runs use. The
run's request (``workflows.models.FixRequest``, the workflow's input) extends
it with what only the workflows read; an activity input carries
``ProjectRequest.of(request)``, these fields alone, under the same names.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..sandbox.models import SandboxSettings


class ProjectRequest(BaseModel):
    """The repository, its commands and its sandbox, as a run asks for them."""

    repo: str  # a local path or a git URL
    ref: str | None = None
    test_command: str | None = None
    build_command: str | None = None
    framework: str | None = None
    language: str | None = None
    # From the repository's greenloop.toml / [tool.greenloop] (flags override it): the setup
    # phase's extra command, the command that runs one test ({id}, {file}, {name}), variables
    # every setup and test run gets, and the file the configuration came from.
    setup_command: str | None = None
    single_test_command: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    config_file: str | None = None
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    run_dir: str | None = None  # where artifacts go; defaults under the user's data dir

    @classmethod
    def of(cls, request: ProjectRequest) -> ProjectRequest:
        """Just these fields of ``request`` (a ``FixRequest``), as they are."""
        return cls.model_validate({name: getattr(request, name) for name in cls.model_fields})
