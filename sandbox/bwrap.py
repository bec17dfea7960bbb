"""The bubblewrap backend: new namespaces (user, PID, network, IPC, UTS),
all capabilities dropped, the host filesystem read-only, only the workspace
and a private /tmp writable, the workspace's ``.git`` read-only, no network
unless asked (loopback still works), and everything dies with the worker.

Inside a user namespace the command is not root on the host: it cannot
remount the read-only binds, and the PID namespace means no descendant
outlives the run (setsid/nohup included)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

PROBE = ["--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent", "--ro-bind", "/", "/",
         "--dev", "/dev", "--proc", "/proc", "true"]


def available() -> tuple[bool, str]:
    """Whether bubblewrap can make the namespaces here, and why not."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    try:
        proc = subprocess.run([exe, *PROBE], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"bwrap failed: {exc}"
    if proc.returncode != 0:
        return False, f"bwrap cannot create namespaces: {proc.stderr.strip()[:200]}"
    return True, "bubblewrap works"


def argv(command: str, workspace: Path, env: dict[str, str], *, network: bool, tmpfs_mb: int) -> list[str]:
    """The bwrap command line for ``bash -c command`` in ``workspace``."""
    args = ["bwrap", "--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent",
            "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--size", str(tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp",
            "--bind", str(workspace), str(workspace)]
    if network:
        args.append("--share-net")
    git = workspace / ".git"
    if git.exists():
        args += ["--ro-bind", str(git), str(git)]
    args.append("--clearenv")
    for k, v in env.items():
        args += ["--setenv", k, v]
    args += ["--chdir", str(workspace), "bash", "-c", command]
    return args
