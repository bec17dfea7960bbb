"""The setup phase's activity: the project's own environment, built in the
sandbox (network allowed for this phase only) or found in the cache."""

from __future__ import annotations

from pathlib import Path

from temporalio import activity

from .errors import typed_errors
from .. import project_config
from ..projectenv.models import ProjectEnvironment
from ..projectenv.setup import set_up
from ..workflows.models import SetupInput
from ..workspace.events import log_event


@activity.defn
@typed_errors
async def set_up_environment(inp: SetupInput) -> ProjectEnvironment:
    """Build (or reuse) the environment the project's tests run in; its log goes to the run directory."""
    return await build_environment(inp)


async def build_environment(inp: SetupInput) -> ProjectEnvironment:
    """The setup phase on this worker (also when a run moves here: environments are per worker)."""
    ws, r = inp.workspace, project_config.fill(inp.request, Path(inp.workspace.path))
    n = 1
    while (Path(ws.run_dir) / "setup" / f"attempt-{n}").exists():
        n += 1  # a retried activity keeps the earlier attempt's log
    out = Path(ws.run_dir) / "setup" / f"attempt-{n}"
    environment = await set_up(Path(ws.path), inp.plan.language, inp.plan.framework, r.sandbox, out,
                               setup_command=r.setup_command, env=r.env, heartbeat=activity.heartbeat)
    log_event(ws.run_dir, "environment", ecosystem=environment.ecosystem, source=environment.source,
              root=environment.root, reason=environment.reason, duration_s=environment.duration_s,
              log=environment.log_path)
    return environment
