"""The setup phase: build (or find in the cache) the environment a project's
tests need, inside the sandbox, with network for this phase only.

``set_up`` picks the ecosystem's recipe (``projectenv.python``,
``projectenv.node``, ``projectenv.toolchains``), reuses the workspace's own
environment when it is provably self-contained (``projectenv.trust``),
otherwise looks the recipe's key up in the cache (``projectenv.cache``) and
builds it there on a miss. A build that fails raises ``setup_failed`` with
the tail of its log; nothing half-built is ever marked ready.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from ..domain.errors import ErrorKind, GreenloopError
from ..sandbox.environment import project_path
from ..sandbox.models import Mount, SandboxSettings
from . import cache, generated, node, python, toolchains, trust
from .models import FALLBACK_FILE, ProjectEnvironment, Recipe

LOG_TAIL_CHARS = 3000
# What the worker knows about reaching package registries (trusted CAs,
# proxies, mirrors): the setup gets these from the worker's environment.
REGISTRY_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "PIP_CERT",
                 "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                 "PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "npm_config_registry", "GOPROXY",
                 "CARGO_HTTP_CAINFO")
# Never staged into the environment: version control, other environments, caches, build output.
NOT_STAGED = {".git", ".hg", ".svn", "node_modules", ".tox", ".nox", ".greenloop", "__pycache__", ".mypy_cache",
              ".pytest_cache", ".ruff_cache", "dist", "build", "target", ".venv", "venv"}


def recipe_for(workspace: Path, language: str, framework: str) -> Recipe | None:
    """The recipe for the project's ecosystem; None when it needs nothing built."""
    if language == "python":
        return python.recipe(workspace, framework)
    if language in ("javascript", "typescript") and (workspace / "package.json").is_file():
        return node.recipe(workspace)  # None: it depends on nothing
    return toolchains.recipe(workspace, language)


def _own_environment(workspace: Path, recipe: Recipe, framework: str) -> tuple[ProjectEnvironment | None, str]:
    """The workspace's own environment when it can be trusted as it is; and what was found."""
    if recipe.ecosystem == "python":
        venv, why = trust.workspace_venv(workspace, framework)
        if venv is not None:
            return ProjectEnvironment(ecosystem="python", path_first=[str(venv / "bin")], mounts=[str(venv)],
                                      import_roots=recipe.import_roots, source="workspace",
                                      manifests=recipe.manifests, reason=why), why
        return None, why
    modules = workspace / "node_modules"
    if recipe.ecosystem == "node" and modules.is_dir() and not modules.is_symlink():
        problem = trust.node_modules_problem(workspace)
        if problem is None:
            why = "reused the workspace's own node_modules: it matches package-lock.json and links nowhere else"
            return ProjectEnvironment(ecosystem="node", path_first=[str(modules / ".bin")], mounts=[str(modules)],
                                      links={"node_modules": str(modules)}, source="workspace",
                                      manifests=recipe.manifests, reason=why), why
        return None, f"the workspace's own node_modules was not reused: {problem}"
    return None, ""


def _ignore(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n in NOT_STAGED or os.path.isfile(os.path.join(folder, n, "pyvenv.cfg"))}


def stage(workspace: Path, recipe: Recipe, target: Path) -> None:
    """Copy what the build needs from the workspace into ``target``."""
    if recipe.stage_tree:
        shutil.copytree(workspace, target, symlinks=True, ignore=_ignore)
        return
    target.mkdir(parents=True)
    # Folders first (a workspace member's), then files: a staged manifest replaces the folder's copy.
    for rel in [r for r in recipe.stage if (workspace / r).is_dir()]:
        shutil.copytree(workspace / rel, target / rel, symlinks=True, ignore=_ignore, dirs_exist_ok=True)
    for rel in dict.fromkeys([*recipe.manifests, *(r for r in recipe.stage if not (workspace / r).is_dir())]):
        dst = target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if recipe.ecosystem == "node" and Path(rel).name == "package.json":
            dst.write_text(node.staged_manifest((workspace / rel).parent))
        else:
            shutil.copy2(workspace / rel, dst)


def _fill(value: str, folder: Path) -> str:
    return value.replace("{root}", str(folder))


def _tail(result) -> str:
    text = (result.stdout_head + result.stdout_tail)[-LOG_TAIL_CHARS // 2:] + "\n" + \
        (result.stderr_head + result.stderr_tail)[-LOG_TAIL_CHARS:]
    return text.strip()[-LOG_TAIL_CHARS:]


def _fell_back(made: ProjectEnvironment, folder: Path) -> ProjectEnvironment:
    """``made`` as the setup script left it when it fell back (``FALLBACK_FILE``):
    the reason says what it used, the variables it unset are gone."""
    path = folder / FALLBACK_FILE
    if not path.is_file():
        return made
    used, *rest = path.read_text().splitlines() or [""]
    unset = {line.split(None, 1)[1].strip() for line in rest if line.startswith("unset ")}
    return made.model_copy(update={"reason": f"{made.reason}: {used}" if used else made.reason,
                                   "env": {k: v for k, v in made.env.items() if k not in unset}})


def _for_tests(recipe: Recipe, folder: Path) -> ProjectEnvironment:
    env = toolchains.test_env(recipe.ecosystem, str(folder), recipe.manifests)
    return ProjectEnvironment(
        ecosystem=recipe.ecosystem, path_first=[str(folder / p) for p in recipe.path_first],
        import_roots=recipe.import_roots, links={n: str(folder / t) for n, t in recipe.links.items()},
        env=env, mounts=[str(folder)], root=str(folder), manifests=recipe.manifests, toolchain=recipe.toolchain,
        caches=toolchains.BUILD_CACHES.get(recipe.ecosystem, {}), reason=recipe.reason)


async def set_up(workspace: Path, language: str, framework: str, settings: SandboxSettings, out_dir: Path, *,
                 setup_command: str | None = None, env: dict[str, str] | None = None,
                 heartbeat: Callable[[str], None] = lambda _: None) -> ProjectEnvironment:
    """The environment the tests of the project in ``workspace`` run in.

    ``settings`` is the run's ``SandboxSettings`` (backend, limits; the
    setup gets ``setup_network`` and ``setup_timeout_s``); ``setup_command``
    runs after the recipe, in the staged project, with the environment
    active; ``env`` is given to the setup and to every test run."""
    from .. import sandbox

    started = time.monotonic()
    extra = dict(env or {})
    recipe = recipe_for(workspace, language, framework)
    if recipe is None and not setup_command:
        return ProjectEnvironment(ecosystem="none", env=extra, reason=f"nothing to set up for {language}")
    recipe = recipe or Recipe(ecosystem="none", manifests=[], toolchain="", script=[], reason="")
    note = ""
    if not setup_command:
        own, note = await asyncio.to_thread(_own_environment, workspace, recipe, framework)
        if own is not None:
            return own.model_copy(update={"env": {**own.env, **extra}})
    if setup_command:
        recipe = recipe.model_copy(update={
            "script": [*recipe.script, f'cd "$GREENLOOP_ENV/project" && {setup_command}'], "stage_tree": True,
            "reason": (recipe.reason + "; " if recipe.reason else "") + f"then `{setup_command}`"})
    k = cache.key(workspace, recipe, setup_command or "")
    folder = cache.directory(recipe, k)

    def found(hit: ProjectEnvironment) -> ProjectEnvironment:
        reason = "; ".join(filter(None, [f"{hit.reason} (cached)", note]))
        return hit.model_copy(update={"source": "cache", "log_path": None, "reason": reason,
                                      "env": {**hit.env, **extra}, "duration_s": round(time.monotonic() - started, 3)})

    if (hit := cache.load(folder)) is not None:
        return found(hit)
    async with cache.locked(folder, heartbeat):
        if (hit := cache.load(folder)) is not None:
            return found(hit)  # another run built it meanwhile
        shutil.rmtree(folder, ignore_errors=True)  # a build that died half-way
        folder.mkdir(parents=True)
        await asyncio.to_thread(stage, workspace, recipe, folder / "project")
        made = _for_tests(recipe, folder)
        # Download caches, one set per sandbox backend: each runs as its own user (docker as the
        # workspace's owner or an unprivileged uid, bubblewrap as a root without capabilities), and
        # neither can write what the other created.
        _, backend, _ = await asyncio.to_thread(sandbox.choose_backend, settings.backend)
        caches = {"UV_CACHE_DIR": cache.envs_root() / f".uv-cache-{backend}",
                  "npm_config_cache": cache.envs_root() / f".npm-cache-{backend}"}
        for c in caches.values():
            c.mkdir(parents=True, exist_ok=True)
        reach = {v: os.environ[v] for v in REGISTRY_VARS if os.environ.get(v)}
        if os.environ.get("SSL_CERT_FILE"):
            reach["UV_NATIVE_TLS"] = "1"
        script_env = {**reach, **extra, **{k_: _fill(v, folder) for k_, v in recipe.env.items()},
                      **{k_: str(v) for k_, v in caches.items()}, "GREENLOOP_ENV": str(folder),
                      "PATH": project_path([str(folder / p) for p in recipe.path_first])}
        if recipe.ecosystem == "python":
            script_env["VIRTUAL_ENV"] = str(folder / "venv")
        script = "set -e\n" + "\n".join(_fill(line, folder) for line in recipe.script)
        limits = settings.model_copy(update={"timeout_s": settings.setup_timeout_s, "network": settings.setup_network,
                                             "pids": max(settings.pids, 1024)})
        heartbeat(f"setting up: {recipe.reason}")
        result = await sandbox.run(script, folder, script_env, limits, backend=settings.backend, out_dir=out_dir,
                                   heartbeat=heartbeat, mounts=[*(Mount(path=str(c), writable=True)
                                                                  for c in caches.values()),
                                                                *(Mount(path=h) for h in recipe.host_ro
                                                                  if os.path.isdir(h))])
        if result.exit_code != 0:
            shutil.rmtree(folder, ignore_errors=True)
            why = "timed out" if result.timed_out else f"exited {result.exit_code}"
            raise GreenloopError(
                f"setting up the project's environment failed ({recipe.reason}): the setup {why}",
                kind=ErrorKind.SETUP_FAILED, log_tail=_tail(result), log=str(out_dir),
                network=settings.setup_network,
                suggestion="fix the project's manifests, or give a setup command in greenloop.toml")
        made = _fell_back(made, folder)
        if recipe.ecosystem == "python":
            made.generated = await asyncio.to_thread(generated.find, folder, workspace, recipe.import_roots)
        made = made.model_copy(update={"key": k, "source": "built", "commands": recipe.script,
                                       "log_path": str(out_dir),
                                       "duration_s": round(time.monotonic() - started, 3)})
        cache.save(folder, made)
    reason = "; ".join(filter(None, [made.reason, note]))
    return made.model_copy(update={"reason": reason, "env": {**made.env, **extra}})
