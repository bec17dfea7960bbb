"""The bubblewrap backend: new namespaces (user, PID, network, IPC, UTS,
cgroup), all capabilities dropped and no new privileges (setuid binaries
gain nothing), no nested user namespaces, only the system's directories
and the toolchains on PATH visible and read-only, the rest of the host
(``/root``, ``/home``, ``/work``, ``/var``, the worker's HOME) absent,
credential files in ``/etc`` masked, only the workspace and a private,
size-bounded ``/tmp`` writable, the workspace's ``.git`` read-only, no
network unless asked (loopback still works), and everything dies with the
worker.

Inside the user namespace the command cannot remount the read-only binds,
and the PID namespace means no descendant outlives the run (setsid and
nohup included). Processes, memory and CPU are bounded by the run's cgroup
(``sandbox.cgroup``) — as root, RLIMIT_NPROC would bound nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from .environment import MASKED_IN_ROOTS, extra_ro, rustup_home
from .models import ExecResult, Limits, Mount
from .process import result, run_process

PROBE = ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--die-with-parent",
         "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys")
# Readable by root only on the host; inside, the command's uid maps to the
# host's root, so these must not be there at all.
MASKED_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
                "/etc/security/opasswd")
MASKED_DIRS = ("/etc/ssh", "/etc/sudoers.d", "/etc/ssl/private", "/etc/docker", "/etc/containerd")


_works: set[str] = set()  # bwrap executables whose probe succeeded (a success does not change)


def available() -> tuple[bool, str]:
    """Whether bubblewrap can make the namespaces here, and why not."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False, "bwrap is not installed (apt-get install bubblewrap)"
    if exe in _works:
        return True, "bubblewrap works"
    try:
        proc = subprocess.run([exe, *PROBE], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"bwrap failed: {exc}"
    if proc.returncode != 0:
        return False, f"bwrap cannot create namespaces: {proc.stderr.strip()[:200]}"
    _works.add(exe)
    return True, "bubblewrap works"


def toolchain_roots(path: str) -> list[str]:
    """The read-only trees a sandboxed command needs beyond the system's:
    the worker's Python (venv and base) and, for each PATH directory outside
    the system's, its parent (``~/.cargo/bin`` -> ``~/.cargo``), so tools
    installed under a hidden HOME still run. Extra trees come from
    GREENLOOP_SANDBOX_RO (colon-separated)."""
    roots = [sys.prefix, sys.base_prefix]
    for entry in path.split(":"):
        if entry.startswith("/") and not any(entry == s or entry.startswith(s + "/") for s in SYSTEM):
            roots.append(os.path.dirname(entry.rstrip("/")) if entry.rstrip("/").endswith("/bin") else entry)
    roots += extra_ro()
    roots.append(rustup_home())
    seen: list[str] = []
    for r in roots:
        r = os.path.realpath(r)
        if r != "/" and os.path.isdir(r) and r not in seen:
            seen.append(r)
    return seen


def argv(command: str, workspace: Path, env: dict[str, str], limits: Limits,
         mounts: list[Mount] | None = None) -> list[str]:
    """The bwrap command line for ``bash -c command`` in ``workspace`` (and ``mounts`` beside it)."""
    size = str(limits.tmpfs_mb * 2**20)
    args = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user", "--disable-userns",
            "--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    if limits.network:
        args.append("--share-net")
    for d in SYSTEM:
        if os.path.islink(d):  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    # /tmp first: a toolchain (a CI checkout's venv) may live under the host's /tmp.
    args += ["--dev", "/dev", "--proc", "/proc",
             "--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/dev/shm",
             "--symlink", "../tmp", "/var/tmp"]
    for root in toolchain_roots(env.get("PATH", "")):
        args += ["--ro-bind", root, root]
        for name in MASKED_IN_ROOTS:
            if os.path.isfile(os.path.join(root, name)):
                args += ["--ro-bind", "/dev/null", os.path.join(root, name)]
    home = os.path.realpath(os.path.expanduser("~"))
    if home != "/" and any(home == s or home.startswith(s + "/") for s in (*SYSTEM, sys.prefix)):
        args += ["--tmpfs", home]  # the worker's HOME never shows, even under a visible tree
    for f in MASKED_FILES:
        if os.path.exists(f):
            args += ["--ro-bind", "/dev/null", f]
    for d in MASKED_DIRS:
        if os.path.isdir(d):
            args += ["--tmpfs", d]
    args += ["--bind", str(workspace), str(workspace)]
    git = workspace / ".git"
    if git.exists():
        args += ["--ro-bind", str(git), str(git)]
    for m in mounts or []:
        args += ["--bind" if m.writable else "--ro-bind", m.path, m.path]
    # bwrap's own root is a tmpfs: make it read-only too once every mount point exists.
    args += ["--remount-ro", "/", "--clearenv"]
    for k, v in env.items():
        args += ["--setenv", k, v]
    args += ["--chdir", str(workspace), "bash", "-c", command]
    return args


async def run(command: str, workdir: Path, env: dict[str, str], limits: Limits, out_dir: Path,
              heartbeat: Callable[[str], None], mounts: list[Mount] | None = None) -> ExecResult:
    """Run ``bash -c command`` in ``workdir`` inside bubblewrap."""
    env = {**env, "HOME": "/tmp", "TMPDIR": "/tmp"}
    done = await run_process(argv(command, workdir, env, limits, mounts), cwd=workdir, env={"PATH": env["PATH"]},
                             out_dir=out_dir, limits=limits, heartbeat=heartbeat, disk_root=workdir)
    return result(command, "bwrap", done, out_dir, limits, [])
