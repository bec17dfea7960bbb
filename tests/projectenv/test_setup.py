"""The setup phase on real projects: real uv/pip/npm against PyPI and npm,
real sandbox (bubblewrap unless GREENLOOP_TEST_SANDBOX says otherwise)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers.models import Status
from greenloop.projectenv import cache
from greenloop.projectenv.attach import shows
from greenloop.projectenv.setup import set_up
from greenloop.runner.execute import run_tests
from greenloop.runner.plan import plan_tests
from greenloop.sandbox.models import SandboxSettings
from greenloop.workspace import worktree
from tests.projectenv.conftest import BACKEND, copy_project, git_init, write

SETTINGS = SandboxSettings(backend=BACKEND, timeout_s=120)


async def _setup_and_run(ws: Path, out: Path, **kw):
    plan = plan_tests(ws)
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS, out / "setup", **kw)
    plan = plan.model_copy(update={"environment": environment})
    run = await run_tests(plan, ws, out / "suite", SETTINGS)
    return plan, environment, run


def _statuses(run) -> dict[str, Status]:
    return {t.id: t.status for t in run.report.tests}


async def test_src_layout_with_test_extra_runs_in_its_own_virtualenv(home, src_project, tmp_path):
    # Greenloop itself has neither the package under test nor its test dependency...
    assert importlib.util.find_spec("inflection") is None and importlib.util.find_spec("wordy") is None
    plan, environment, run = await _setup_and_run(src_project, tmp_path / "out")
    assert environment.source == "built" and environment.ecosystem == "python"
    assert environment.import_roots == ["src"]
    assert "extras test" in environment.reason
    venv = Path(environment.root) / "venv"
    assert venv.is_dir() and str(venv) in environment.path_first[0]
    assert list(venv.glob("lib/python3*/site-packages/inflection*"))
    # Compiled once at setup: sandboxed runs write no bytecode, so each would compile pytest again.
    assert list(venv.glob("lib/python3*/site-packages/_pytest/__pycache__/main.*.pyc"))
    # ...and the tests ran with the project's environment: imports work, the bug is the only failure.
    assert _statuses(run) == {"tests/test_wordy.py::test_title": Status.PASSED,
                              "tests/test_wordy.py::test_add": Status.FAILED}


async def test_filterwarnings_error_suite_is_not_crashed_by_greenloops_plugins(home, src_project, tmp_path):
    # Under Greenloop's own interpreter the suite dies before any test (its pytest-asyncio warns,
    # the project's filterwarnings=error turns that into an INTERNALERROR).
    plan = plan_tests(src_project)
    bare = await run_tests(plan, src_project, tmp_path / "bare", SETTINGS)
    assert not bare.report.tests
    assert "INTERNALERROR" in Path(bare.test.stdout_path).read_text() + Path(bare.test.stderr_path).read_text()
    _, _, run = await _setup_and_run(src_project, tmp_path / "out")
    assert len(run.report.tests) == 2 and run.report.per_test


async def test_node_project_installs_from_its_lockfile_and_links_node_modules(home, node_project, tmp_path):
    plan, environment, run = await _setup_and_run(node_project, tmp_path / "out")
    assert environment.ecosystem == "node" and environment.source == "built"
    assert "npm ci" in environment.reason and "package-lock.json" in environment.reason
    # The project's own lifecycle scripts (its failing `prepare`) did not run in the setup.
    modules = node_project / "node_modules"
    # a folder of the workspace's own whose entries link to the cached environment's
    assert shows(modules) == environment.links["node_modules"] and not modules.is_symlink()
    assert (modules / "is-number").resolve() == (Path(environment.links["node_modules"]) / "is-number").resolve()
    assert (modules / "is-number" / "package.json").is_file()
    assert run.report.totals.passed == 2 and run.report.totals.failed == 0
    # The link is not part of the project: git does not see it.
    status = subprocess.run(["git", "-C", str(node_project), "status", "--porcelain"], capture_output=True,
                            text=True).stdout
    assert "node_modules" not in status


async def test_second_setup_of_the_same_manifests_is_a_cache_hit(home, src_project, tmp_path):
    first = await set_up(src_project, "python", "pytest", SETTINGS, tmp_path / "setup-1")
    marker = Path(first.root) / cache.MARKER
    stamp = marker.stat().st_mtime_ns
    # Another checkout of the same project, at another path (a later run).
    again = copy_project(src_project, tmp_path / "later-run")
    second = await set_up(again, "python", "pytest", SETTINGS, tmp_path / "setup-2")
    assert second.source == "cache" and second.root == first.root and second.key == first.key
    assert second.log_path is None and not (tmp_path / "setup-2").exists()  # nothing ran: no install log
    assert marker.stat().st_mtime_ns == stamp
    # A changed manifest is another environment.
    pyproject = again / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"inflection==0.5.1"', '"inflection==0.5.0"'))
    third = await set_up(again, "python", "pytest", SETTINGS, tmp_path / "setup-3")
    assert third.source == "built" and third.root != first.root


async def test_a_worktree_tests_its_own_code_with_the_shared_environment(home, src_project, tmp_path):
    # A user's own virtualenv sits in the workspace (ignored by git): worktrees never get a copy.
    write(src_project, {".venv/pyvenv.cfg": "home = /usr/bin\n"})
    plan, environment, run = await _setup_and_run(src_project, tmp_path / "out")
    assert _statuses(run)["tests/test_wordy.py::test_add"] == Status.FAILED
    tree = tmp_path / "trees" / "add"
    worktree.create(src_project, tree)
    assert not (tree / ".venv").exists()
    code = tree / "src/wordy/__init__.py"
    code.write_text(code.read_text().replace("return a - b", "return a + b"))
    fixed = await run_tests(plan, tree, tmp_path / "tree-suite", SETTINGS)
    assert _statuses(fixed)["tests/test_wordy.py::test_add"] == Status.PASSED
    # The run workspace still has (and tests) its own, unfixed code with the same environment.
    again = await run_tests(plan, src_project, tmp_path / "ws-suite", SETTINGS)
    assert _statuses(again)["tests/test_wordy.py::test_add"] == Status.FAILED


async def test_a_node_worktree_links_the_cached_node_modules_instead_of_copying(home, node_project, tmp_path):
    plan, environment, _ = await _setup_and_run(node_project, tmp_path / "out")
    tree = tmp_path / "trees" / "t"
    worktree.create(node_project, tree)
    run = await run_tests(plan, tree, tmp_path / "tree-suite", SETTINGS)
    assert shows(tree / "node_modules") == environment.links["node_modules"]
    assert (tree / "node_modules" / "is-number").is_symlink()
    assert run.report.totals.passed == 2


async def test_a_failing_setup_is_setup_failed_with_the_end_of_its_log(home, src_project, tmp_path):
    pyproject = src_project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"inflection==0.5.1"', '"greenloop-no-such-package-q7==1.0"'))
    with pytest.raises(GreenloopError) as caught:
        await set_up(src_project, "python", "pytest", SETTINGS, tmp_path / "setup")
    err = caught.value
    assert err.kind is ErrorKind.SETUP_FAILED and not err.retryable
    assert "greenloop-no-such-package-q7" in err.context["log_tail"]
    # Nothing half-built is left marked ready: the next setup builds again.
    assert not list(cache.envs_root().glob(f"*/{cache.MARKER}"))


async def test_the_setup_has_network_and_the_test_runs_do_not(home, tmp_path):
    probe = ("import socket; socket.create_connection(('pypi.org', 443), timeout=10).close(); "
             "open('reached', 'w').write('yes')")
    ws = git_init(write(tmp_path / "net", {
        "pytest.ini": "[pytest]\n",
        "tests/test_net.py": """
            import socket

            import pytest


            def test_no_network():
                with pytest.raises(OSError):
                    socket.create_connection(("pypi.org", 443), timeout=10)
            """,
    }))
    setup = f'python -c "{probe}"'
    plan, environment, run = await _setup_and_run(ws, tmp_path / "out", setup_command=setup)
    assert (Path(environment.root) / "project" / "reached").read_text() == "yes"  # the setup reached PyPI
    assert _statuses(run) == {"tests/test_net.py::test_no_network": Status.PASSED}  # the test run could not


async def test_an_editable_virtualenv_of_the_users_is_not_trusted(home, src_project, tmp_path):
    from greenloop.projectenv.python import base_python, uv_binary
    from greenloop.projectenv.trust import venv_problem

    venv = src_project / ".venv"
    subprocess.run([uv_binary(), "venv", "-q", "--python", base_python(), str(venv)], check=True)
    subprocess.run([uv_binary(), "pip", "install", "-q", "--python", str(venv / "bin/python"), "-e",
                    f"{src_project}[test]"], check=True, capture_output=True, timeout=300)
    problem = venv_problem(venv, "pytest")
    assert problem is not None and "editable" in problem
    environment = await set_up(src_project, "python", "pytest", SETTINGS, tmp_path / "setup")
    assert environment.source == "built" and "not reused" in environment.reason
    assert json.dumps(environment.path_first).find(str(venv)) == -1


async def test_two_setups_of_one_project_at_once_build_it_once(home, src_project, tmp_path):
    other = copy_project(src_project, tmp_path / "worker-2-copy")
    beats: dict[str, list[str]] = {"a": [], "b": []}
    first, second = await asyncio.gather(
        set_up(src_project, "python", "pytest", SETTINGS, tmp_path / "a", heartbeat=beats["a"].append),
        set_up(other, "python", "pytest", SETTINGS, tmp_path / "b", heartbeat=beats["b"].append))
    assert sorted([first.source, second.source]) == ["built", "cache"] and first.root == second.root
    waiter = "a" if first.source == "cache" else "b"
    assert any("waiting" in b and "another build" in b for b in beats[waiter])  # it waited, then reused


async def test_vitest_writes_its_cache_beside_the_shared_environment_and_every_result_is_kept(
        home, vitest_project, tmp_path):
    # Vitest makes node_modules/.vite/vitest for its results cache; node_modules shows the cached,
    # read-only environment, so that folder must be the workspace's own (it once ended the run:
    # ENOENT, exit 1, "command not found", a fallback to an `npm test` with no such script).
    plan, environment, run = await _setup_and_run(vitest_project, tmp_path / "out")
    assert environment.source == "built" and plan.framework == "vitest"
    assert _statuses(run) == {"math > adds": Status.PASSED,
                              "math > subtracts": Status.FAILED}
    assert run.report.exit_code == 1 and run.report.command == plan.test_command
    assert "ENOENT" not in (run.test.stderr_head + run.test.stderr_tail if run.test else "")
    cache_dir = vitest_project / "node_modules" / ".vite"
    assert cache_dir.is_dir() and not cache_dir.is_symlink()  # the workspace's, not the environment's
    assert not (Path(environment.links["node_modules"]) / ".vite").exists()


async def test_bundler_without_its_registry_installs_from_the_gems_on_this_machine_and_says_so(home, tmp_path):
    # The gem registry is not reachable from here (Bundler exits 17); rake is installed on the machine.
    ws = git_init(write(tmp_path / "gems", {"Gemfile": 'source "https://rubygems.org"\ngem "rake"\n',
                                            "Rakefile": "task(:default) { puts 'rake ran' }\n"}))
    environment = await set_up(ws, "ruby", "generic", SETTINGS, tmp_path / "setup")
    assert environment.source == "built" and environment.ecosystem == "ruby"
    assert "`bundle install --local` (the registry could not be reached)" in environment.reason
    assert "BUNDLE_PATH" not in environment.env  # the gems are the machine's, not under the environment
    plan = plan_tests(ws, language="ruby", framework="generic", test_command="bundle exec rake")
    run = await run_tests(plan.model_copy(update={"environment": environment}), ws, tmp_path / "suite", SETTINGS)
    assert run.test is not None and run.test.exit_code == 0, run.test
    assert "rake ran" in run.test.stdout_head + run.test.stdout_tail


async def test_go_runs_keep_their_build_cache_beside_the_environment(home, tmp_path):
    # The sandbox's home is new every run: without a kept GOCACHE each run rebuilds the standard library.
    ws = git_init(write(tmp_path / "sums", {
        "go.mod": "module example.com/sums\n\ngo 1.19\n",
        "sums.go": "package sums\n\nfunc Add(a, b int) int { return a - b }\n",
        "sums_test.go": """
            package sums

            import "testing"

            func TestAdd(t *testing.T) { if Add(2, 2) != 4 { t.Fatal("bad") } }
            func TestZero(t *testing.T) { if Add(0, 0) != 0 { t.Fatal("bad") } }
            """,
    }))
    plan = plan_tests(ws, test_command="go test -json ./...")
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS, tmp_path / "setup")
    assert environment.caches == {"GOCACHE": "go-build"}
    plan = plan.model_copy(update={"environment": environment})
    kept = Path(f"{environment.root}.caches-{BACKEND}") / "go-build"
    run = await run_tests(plan, ws, tmp_path / "one", SETTINGS)
    assert _statuses(run) == {"example.com/sums::TestAdd": Status.FAILED, "example.com/sums::TestZero": Status.PASSED}
    entries = sum(1 for p in kept.rglob("*") if p.is_file())
    assert entries > 100  # the standard library's and the package's build, kept
    tree = tmp_path / "trees" / "t"
    worktree.create(ws, tree)  # a worktree of the same project starts warm from the same cache
    run = await run_tests(plan, tree, tmp_path / "two", SETTINGS)
    assert run.report.totals.failed == 1 and run.report.totals.passed == 1
    assert sum(1 for p in kept.rglob("*") if p.is_file()) < entries + 50  # reused, not rebuilt


CRATE = {
    "Cargo.toml": '[package]\nname = "sums"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
    "src/lib.rs": """
        pub fn add(a: i32, b: i32) -> i32 { a - b }

        #[cfg(test)]
        mod tests {
            #[test]
            fn adds() { assert_eq!(super::add(2, 2), 4); }
            #[test]
            fn zero() { assert_eq!(super::add(0, 0), 0); }
        }
        """,
    ".gitignore": "/target\n",
}


def _stderr(run) -> str:
    return Path(run.test.stderr_path).read_text()


async def test_cargo_runs_keep_their_build_beside_the_environment(home, tmp_path):
    # The workspace's target/ would be cold in every new run's workspace and worktree (and copied into
    # each worktree); the kept one is warm. (Crates from a registry live at one path, in the environment's
    # CARGO_HOME, so every workspace reuses their build; the crate under test is built per path.)
    ws = git_init(write(tmp_path / "sums", CRATE))
    plan = plan_tests(ws)
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS, tmp_path / "setup")
    assert environment.ecosystem == "rust" and environment.caches == {"CARGO_TARGET_DIR": "cargo-target"}
    plan = plan.model_copy(update={"environment": environment})
    first = await run_tests(plan, ws, tmp_path / "one", SETTINGS)
    assert _statuses(first) == {"tests::adds": Status.FAILED, "tests::zero": Status.PASSED}
    assert "Compiling sums" in _stderr(first)
    kept = Path(f"{environment.root}.caches-{BACKEND}") / "cargo-target" / "0"
    assert list(kept.glob("debug/deps/sums-*")) and not (ws / "target").exists()
    again = await run_tests(plan, ws, tmp_path / "two", SETTINGS)
    assert _statuses(again) == _statuses(first)
    assert "Compiling" not in _stderr(again)  # nothing rebuilt: the second run reused the first's build


async def test_a_cache_one_writer_at_a_time_is_a_copy_of_each_concurrent_runs_own(home, tmp_path):
    from greenloop.projectenv.attach import caches

    ws = git_init(write(tmp_path / "sums", CRATE))
    environment = await set_up(ws, "rust", "cargo-test", SETTINGS, tmp_path / "setup")
    with caches(environment, BACKEND, ws) as (one, _), caches(environment, BACKEND, ws) as (two, _):
        assert one["CARGO_TARGET_DIR"] != two["CARGO_TARGET_DIR"]  # two runs at once: one copy each
    with caches(environment, BACKEND, ws) as (three, _):
        assert three["CARGO_TARGET_DIR"] == one["CARGO_TARGET_DIR"]  # then the first free, warm one again


async def test_python_runs_keep_pip_and_uv_caches_beside_the_environment(home, src_project, tmp_path):
    # A test that installs or builds (pip, uv) finds what an earlier run of the project cached, in any worktree.
    write(src_project, {"tests/test_cache.py": """
        import os
        from pathlib import Path


        def test_the_caches_are_kept():
            for var in ("PIP_CACHE_DIR", "UV_CACHE_DIR"):
                seen = Path(os.environ[var], "seen")
                assert seen.is_file() or os.environ.get("FIRST_RUN") == "1"
                seen.write_text("a run was here")
        """})
    git_init(src_project)
    plan, environment, run = await _setup_and_run(src_project, tmp_path / "out", env={"FIRST_RUN": "1"})
    assert _statuses(run)["tests/test_cache.py::test_the_caches_are_kept"] == Status.PASSED
    tree = tmp_path / "trees" / "t"
    worktree.create(src_project, tree)
    later = environment.model_copy(update={"env": {}})  # not the first run any more
    again = await run_tests(plan.model_copy(update={"environment": later}), tree, tmp_path / "two", SETTINGS)
    assert _statuses(again)["tests/test_cache.py::test_the_caches_are_kept"] == Status.PASSED
    kept = Path(f"{environment.root}.caches-{BACKEND}")
    assert (kept / "pip" / "seen").is_file() and (kept / "uv" / "seen").is_file()


async def test_a_kept_cargo_build_never_tests_another_checkouts_code(home, tmp_path):
    # cargo decides freshness by mtime and names a path crate's build alike at any path: a worktree's
    # fixed build, older than nothing in the workspace, must not pass for the workspace's own code.
    ws = git_init(write(tmp_path / "sums", CRATE))
    plan = plan_tests(ws)
    plan = plan.model_copy(update={"environment": await set_up(ws, plan.language, plan.framework, SETTINGS,
                                                                 tmp_path / "setup")})
    assert _statuses(await run_tests(plan, ws, tmp_path / "one", SETTINGS))["tests::adds"] == Status.FAILED
    tree = tmp_path / "trees" / "fix"
    worktree.create(ws, tree)
    code = tree / "src/lib.rs"
    code.write_text(code.read_text().replace("a - b", "a + b"))
    fixed = await run_tests(plan, tree, tmp_path / "two", SETTINGS)
    assert _statuses(fixed)["tests::adds"] == Status.PASSED
    again = await run_tests(plan, ws, tmp_path / "three", SETTINGS)
    assert _statuses(again)["tests::adds"] == Status.FAILED  # the workspace's code, built again
    assert "Compiling sums" in _stderr(again)


MAVEN_PROJECT = {
    "pom.xml": """
        <?xml version="1.0" encoding="UTF-8"?>
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <groupId>example</groupId>
          <artifactId>sums</artifactId>
          <version>0.1.0</version>
          <properties>
            <maven.compiler.release>17</maven.compiler.release>
            <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
          </properties>
          <dependencies>
            <dependency>
              <groupId>org.junit.jupiter</groupId>
              <artifactId>junit-jupiter</artifactId>
              <version>5.11.4</version>
              <scope>test</scope>
            </dependency>
          </dependencies>
          <build>
            <plugins>
              <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
              <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
              <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
            </plugins>
          </build>
        </project>
        """,
    "src/main/java/sums/Sums.java": "package sums;\n\npublic final class Sums {\n"
                                    "    public static int add(int a, int b) { return a - b; }\n}\n",
    "src/test/java/sums/SumsTest.java": """
        package sums;

        import static org.junit.jupiter.api.Assertions.assertEquals;
        import org.junit.jupiter.api.Test;

        class SumsTest {
            @Test void adds() { assertEquals(4, Sums.add(2, 2)); }
            @Test void zero() { assertEquals(0, Sums.add(0, 0)); }
        }
        """,
    ".gitignore": "/target\n",
}


async def test_maven_resolves_into_the_environments_repository_and_tests_run_offline(home, tmp_path):
    # Maven Central is not reachable from this machine (DNS): the setup falls back on the artifacts
    # installed here (~/.m2/repository, read-only) as a mirror, and says so.
    ws = git_init(write(tmp_path / "sums", MAVEN_PROJECT))
    plan = plan_tests(ws)
    assert plan.language == "java" and plan.framework == "maven-surefire"
    environment = await set_up(ws, plan.language, plan.framework, SETTINGS.model_copy(update={"setup_timeout_s": 600}),
                               tmp_path / "setup")
    assert environment.source == "built" and environment.ecosystem == "java" and environment.manifests == ["pom.xml"]
    assert "artifacts installed on this machine" in environment.reason, environment.reason
    repository = Path(environment.root) / "m2"
    assert list(repository.glob("org/junit/jupiter/junit-jupiter-api/5.11.4/*.jar"))
    assert list(repository.glob("org/apache/maven/surefire/surefire-junit-platform/3.2.5/*.jar"))  # the provider
    # The test runs have no network and do not see ~/.m2: what they use is the environment's repository.
    plan = plan.model_copy(update={"environment": environment})
    run = await run_tests(plan, ws, tmp_path / "suite", SETTINGS.model_copy(update={"timeout_s": 300}))
    assert _statuses(run) == {"sums.SumsTest#adds": Status.FAILED, "sums.SumsTest#zero": Status.PASSED}, run.test
    assert "Downloading" not in run.test.stdout_head + run.test.stdout_tail
