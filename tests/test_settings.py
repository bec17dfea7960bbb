"""Greenloop's own environment variables: read in one place, typed, all listed in the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.settings import VARIABLES, settings
from tests.conftest import REPO

PRODUCT = ["activities", "analysis", "cli", "domain", "llm", "parsers", "projectenv", "runner", "sandbox", "server",
           "workflows", "workspace", "worker.py", "telemetry.py"]


def test_every_variable_is_in_the_readme():
    readme = (REPO / "README.md").read_text()
    missing = [name for name in VARIABLES if f"`{name}`" not in readme]
    assert not missing, f"variables the README does not list: {missing}"


def test_no_module_reads_a_greenloop_variable_but_the_settings():
    reads = re.compile(r"""environ(?:\.get)?\s*[(\[]\s*["']GREENLOOP_|getenv\(\s*["']GREENLOOP_""")
    found = [f"{p.relative_to(REPO)}:{n}" for part in PRODUCT for p in ([REPO / part] if part.endswith(".py")
             else sorted((REPO / part).rglob("*.py")))
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if reads.search(line) and not re.search(r"environ\[[^]]+\]\s*=[^=]", line)]  # setting one is fine
    # GREENLOOP_DEBUG while another variable's error is said
    assert [where.split(":")[0] for where in found] == ["cli/output.py"], found


def test_values_are_typed(monkeypatch, tmp_path):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert settings().task_queue == "greenloop" and settings().sandbox_cgroups and not settings().debug
    monkeypatch.setenv("GREENLOOP_HOME", str(tmp_path))
    monkeypatch.setenv("GREENLOOP_SANDBOX_RO", "/opt/a::/opt/b")
    monkeypatch.setenv("GREENLOOP_SANDBOX_CGROUPS", "off")
    monkeypatch.setenv("GREENLOOP_DEBUG", "1")
    monkeypatch.setenv("GREENLOOP_DOCKER_POOL", "0")
    s = settings()
    assert s.home == Path(tmp_path) and s.sandbox_ro == ["/opt/a", "/opt/b"]
    assert not s.sandbox_cgroups and s.debug and s.docker_pool == 0


@pytest.mark.parametrize("name, value", [("GREENLOOP_MAX_ACTIVITIES", "many"), ("GREENLOOP_DOCKER_POOL", "-1"),
                                         ("GREENLOOP_ESCALATIONS_POLL_S", "0")])
def test_a_bad_value_is_a_typed_error_naming_the_variable(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(GreenloopError) as caught:
        settings()
    assert caught.value.kind == ErrorKind.VALIDATION_ERROR and caught.value.message.startswith(f"{name}=")
