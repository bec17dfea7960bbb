"""A repository's own Greenloop configuration: ``greenloop.toml`` at its root, or
``[tool.greenloop]`` in its ``pyproject.toml``. Its keys are the run settings
that have one (``run_settings.IN_FILE``); every key is optional, command-line
flags override the file, and the effective values travel in the run's
``FixRequest`` (so the Web UI shows them). A key the file may not have, or a
value out of range, is a typed error naming the key.

``greenloop run`` reads the file of a local repository and merges it into the
request (``cli.runs.build_request``); a request made without it (a git URL, an
API call) is filled from the checkout by the activities that plan and set up
the run (``fill``). The request's ``config_file`` says it was read.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from .domain.errors import ErrorKind, GreenloopError
from .run_request import ProjectRequest
from .run_settings import IN_FILE, Setting, merged, request_data, request_values

FILE = "greenloop.toml"


class _Table(BaseModel):
    """A table of the file: a key it does not know is an error naming it."""

    model_config = ConfigDict(extra="forbid")


def _key(setting: Setting) -> tuple[Any, Any]:
    """A setting's key in the file: optional, of the setting's type, within its bounds."""
    return setting.type | None, Field(default=None, description=setting.description, **setting.bounds)


SECTIONS = {section: create_model(f"{section.title()}Config", __base__=_Table,
                                  **{s.key: _key(s) for s in IN_FILE if s.section == section})
            for section in dict.fromkeys(s.section for s in IN_FILE if s.section)}


class ProjectConfig(_Table):
    """What ``greenloop.toml`` says (None: nothing); its fields are the table's keys (``FILE_MODEL``)."""

    def settings(self) -> dict[str, Any]:
        """The run settings the file sets, by name."""
        out = {}
        for s in IN_FILE:
            value = getattr(getattr(self, s.section), s.key) if s.section else getattr(self, s.key)
            if value is not None:
                out[s.name] = value
        return out


FILE_MODEL: type[ProjectConfig] = create_model(
    "GreenloopToml", __base__=ProjectConfig, **{s.key: _key(s) for s in IN_FILE if not s.section},
    **{section: (model, Field(default_factory=model)) for section, model in SECTIONS.items()})


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise GreenloopError(f"{path} is not valid TOML: {exc}", kind=ErrorKind.VALIDATION_ERROR,
                             file=str(path)) from None
    except OSError as exc:
        raise GreenloopError(f"cannot read {path}: {exc}", kind=ErrorKind.VALIDATION_ERROR, file=str(path)) from None


def load(root: Path) -> tuple[ProjectConfig, Path | None]:
    """The repository's configuration and the file it came from (nothing set and None when it has none)."""
    path, data = root / FILE, None
    if path.is_file():
        data = _read(path)
    elif (root / "pyproject.toml").is_file():
        table = _read(root / "pyproject.toml").get("tool", {}).get("greenloop")
        if table is not None:
            path, data = root / "pyproject.toml", table
    if data is None:
        return FILE_MODEL(), None
    try:
        return FILE_MODEL.model_validate(data), path
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors())
        raise GreenloopError(f"{path}: {problems}", kind=ErrorKind.VALIDATION_ERROR, file=str(path)) from None


# Top-level request fields all (``fill`` sets them whole).
FROM_CHECKOUT = tuple(s for s in IN_FILE if s.from_checkout)


R = TypeVar("R", bound=ProjectRequest)


def fill(request: R, root: Path) -> R:
    """A request made without reading the repository's file (a git URL, an API call) with the
    file's commands and variables where it has none (``Setting.from_checkout``); a request whose
    ``config_file`` is set already has them. A ``FixRequest`` or the ``ProjectRequest`` part of
    one the activities get: the same kind comes back."""
    if request.config_file is not None:
        return request
    config, path = load(root)
    if path is None:
        return request
    own = request_values(request, FROM_CHECKOUT)
    file = {name: value for name, value in config.settings().items() if name in own}
    values = merged(own, {name for name, value in own.items() if value is not None}, file)
    return request.model_copy(update={**request_data(values), "config_file": str(path)})
