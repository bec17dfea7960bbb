"""Helpers for multi-worker tests and benches: ``greenloop worker`` processes that
each see only their own data directory, as on separate machines (a mount
namespace per worker, with a tmpfs hiding the other workers' data directories)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client

from greenloop.server.client import queue_pollers

# ``greenloop ARGS`` in a process that, with KILL_AT set, SIGKILLs itself once (KILLED_MARKER
# records it) at that moment of the work: a machine dying half-way through an edit set
# (KILL_AT=apply_edits: right after the first file of the workspace is written) or a
# merge (KILL_AT=merge_worktree: the fix is in the workspace, the merge not recorded), or an
# accepted batch (KILL_AT=accept_batch: the first file of the run workspace written, the
# acceptance not recorded; checks write only under batches/), or
# with a model call in flight (KILL_AT=analyzer_turn: the analyzer's second call answered by
# the provider, its answer not yet saved).
# The hook lives here, in the tests, not in the product.
GREENLOOP = Path(sys.executable).parent / "greenloop"
DYING_GREENLOOP = """
import os, signal, sys
from pathlib import Path

kill_at, marker = os.environ.get("KILL_AT"), Path(os.environ.get("KILLED_MARKER", "/nonexistent"))


def die() -> None:
    if not marker.exists():
        marker.write_text(kill_at)
        os.kill(os.getpid(), signal.SIGKILL)


if kill_at == "apply_edits":
    from greenloop.workspace import backups

    write = backups.atomic_write

    def write_then_die(path, data, mode=None):
        write(path, data, mode)
        if "backups" not in Path(path).parts:
            die()

    backups.atomic_write = write_then_die
elif kill_at == "accept_batch":
    from greenloop.workspace import backups

    write = backups.atomic_write

    def accept_then_die(path, data, mode=None):
        write(path, data, mode)
        if not {"backups", "batches"} & set(Path(path).parts):
            die()

    backups.atomic_write = accept_then_die
elif kill_at == "merge_worktree":
    from greenloop.workspace import worktree

    merge = worktree.merge

    def merge_then_die(*args, **kwargs):
        outcome = merge(*args, **kwargs)
        if outcome.merged:
            die()
        return outcome

    worktree.merge = merge_then_die
elif kill_at == "analyzer_turn":
    from greenloop.activities import conversation

    call = conversation.model_turn

    async def answered_then_die(client, settings, system, messages, *more, **options):
        step = await call(client, settings, system, messages, *more, **options)
        if "Greenloop's analyzer" in system and len(messages) == 3:  # the analyzer's second call
            die()
        return step

    conversation.model_turn = answered_then_die
from greenloop.cli.main import app

sys.argv[0] = "greenloop"
app()
"""


@dataclass
class Host:
    """One worker process standing for one machine."""

    name: str
    home: Path
    queue: str
    proc: subprocess.Popen | None = None

    @property
    def host_queue(self) -> str:
        return f"{self.queue}@{self.name}"

    def run_dir(self, run_id: str) -> Path:
        return self.home / "runs" / run_id

    def holds(self, run_id: str) -> bool:
        return (self.run_dir(run_id) / "workspace").is_dir()

    def kill(self) -> None:
        """SIGKILL, for good: the machine is gone."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def start_hosts(names: list[str], root: Path, address: str, queue: str, env: dict[str, str],
                extra_args: list[str] | None = None, hide: list[Path] | None = None) -> list[Host]:
    """Start one ``greenloop worker`` per name, each with its own GREENLOOP_HOME under
    ``root``, in its own mount namespace where every other home (and ``hide``) is an empty tmpfs."""
    hosts = [Host(name=n, home=root / f"home-{n}", queue=queue) for n in names]
    for h in hosts:
        h.home.mkdir(parents=True, exist_ok=True)
    for h in hosts:
        hidden = [str(o.home) for o in hosts if o is not h] + [str(p) for p in hide or []]
        script = 'for d in "$@"; do [ "$d" = -- ] && break; mount -t tmpfs hidden "$d" || exit 97; done; ' \
                 'while [ "$1" != -- ]; do shift; done; shift; exec "$@"'
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *hidden, "--",
               sys.executable, "-c", DYING_GREENLOOP, "worker", "--address", address, "--task-queue", queue,
               "--host", h.name,
               *(extra_args or [])]
        log = open(root / f"worker-{h.name}.log", "ab")  # noqa: SIM115 - the process owns it
        h.proc = subprocess.Popen(cmd, env={**os.environ, **env, "GREENLOOP_HOME": str(h.home)},
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return hosts


async def wait_polling(client: Client, hosts: list[Host], timeout_s: float = 60) -> None:
    """Until every host polls its host queue (and so the shared one)."""
    for _ in range(int(timeout_s / 0.25)):
        if all([await queue_pollers(client, h.host_queue, within_s=30) for h in hosts]):
            return
        for h in hosts:
            if h.proc is not None and h.proc.poll() is not None:
                raise AssertionError(f"worker {h.name} exited with {h.proc.returncode}")
        await asyncio.sleep(0.25)
    raise AssertionError("the workers never polled their queues")


def stop_hosts(hosts: list[Host]) -> None:
    for h in hosts:
        h.kill()
