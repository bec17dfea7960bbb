"""The options of a run, made from the table of run settings (``run_settings.OPTIONS``):
``greenloop run`` and ``greenloop schedule create`` both take every one of them
(``@with_run_options``) and both turn them into a ``FixRequest`` the same way
(``cli.runs.build_request``, which also reads the repository's configuration
file for options not given)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_origin, get_type_hints

import typer

from ..run_settings import OPTIONS, Setting


def _parameter(setting: Setting) -> inspect.Parameter:
    """A setting as a keyword parameter Typer reads an option from."""
    kind = str if get_origin(setting.type) is Literal else setting.type  # the request checks the choice
    option = typer.Option(setting.option, help=setting.help, metavar=setting.metavar)
    return inspect.Parameter(setting.name, inspect.Parameter.KEYWORD_ONLY, default=setting.default,
                             annotation=Annotated[kind, option])


RUN_OPTIONS = {s.name: _parameter(s) for s in OPTIONS}


def with_run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` takes every run option too, collected in its ``options`` argument (settings by name)."""
    hints = get_type_hints(command, include_extras=True)
    own = [p.replace(annotation=hints.get(p.name, p.annotation))
           for p in inspect.signature(command).parameters.values() if p.name != "options"]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        options = {name: kwargs.pop(name, p.default) for name, p in RUN_OPTIONS.items()}
        options = {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}
        return command(*args, **kwargs, options=options)

    wrapper.__signature__ = inspect.Signature([*own, *RUN_OPTIONS.values()])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *RUN_OPTIONS.values()]}
    del wrapper.__wrapped__  # Typer must read the signature above, not the command's own
    return wrapper
