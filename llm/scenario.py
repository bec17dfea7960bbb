"""Scripted LLM scenarios: trigger -> response rules with priorities.

A scenario is a YAML file::

    name: fix-on-first-attempt
    rules:
      - priority: 100
        trigger: {role: fixer, iteration: 1, turn: 1}
        response:
          text: "The cart overwrites quantities."
          tool_calls:
            - name: str_replace_based_edit_tool
              input: {command: str_replace, path: shop/cart.py, old_str: "...", new_str: "..."}
      - trigger: {role: fixer, turn: 2}
        response: {text: "Done."}
    default: {text: "I cannot help with that."}

Tool calls name Anthropic's text-editor tool (``str_replace_based_edit_tool``
with ``command: view | str_replace | create | insert``), the ``search`` tool, or
Greenloop's earlier tools, which keep working (``read_file {path, start_line,
end_line}``, ``list_dir {path}``, ``replace_in_file {path, old_text,
new_text}``, ``insert_lines {path, after_line, text}``, ``create_file {path,
content}``), or the sandboxed tools (``run_tests {tests}``, ``bash {command}``:
``llm/sandbox_tools.py``), whose results a ``last`` trigger can match. Every condition of a trigger must hold. Rules are tried by
descending priority (file order among equals); the first match answers, else
the default. A response may instead be an API error (``error: {status: 429}``)
and may be limited to fire ``times`` times. With ``--candidates K`` a trigger's ``candidate`` picks one
of an attempt's K fixer conversations (each counts its own iterations). Matching is pure: the caller
supplies the ``RequestContext`` (role, candidate, per-role iteration, turn,
previous role, messages), which the server derives from the request.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..domain.errors import ErrorKind, GreenloopError

ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
    500: "api_error", 529: "overloaded_error",
}


class Trigger(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str | None = None            # the caller's role (analyzer, fixer...)
    candidate: int | None = None       # which of an attempt's candidate fixes (--candidates K: 1..K)
    iteration: int | None = None       # n-th conversation of this role for this context (1-based;
                                       # the candidates of an attempt count apart)
    turn: int | None = None            # n-th model turn within the conversation (1-based)
    previous_role: str | None = None   # role of the previous conversation in this context
    context: str | None = None         # regex on the context key (run/test)
    system: str | None = None          # regex on the system prompt
    user: str | None = None            # regex on the first user message
    last: str | None = None            # regex on the latest user message (incl. tool results)
    contains: str | None = None        # regex on any message content

    @field_validator("context", "system", "user", "last", "contains")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a regular expression ({exc})") from None
        return v


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ApiError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: int = 529
    type: str | None = None
    message: str = "scripted error"
    retry_after_s: float | None = None  # the retry-after header sent with it (429/529 send 0 when unset)

    @property
    def error_type(self) -> str:
        return self.type or ERROR_TYPES.get(self.status, "api_error")


class Response(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    # Raw content blocks, sent as they are (to script malformed answers).
    raw_content: list[dict[str, Any]] | None = None
    stop_reason: str | None = None
    error: ApiError | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    delay_s: float = 0.0  # answer this late (a slow model; lets tests act mid-call)


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trigger: Trigger = Field(default_factory=Trigger)
    response: Response
    priority: int = 0
    times: int | None = None  # fire at most this many times
    name: str | None = None


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    rules: list[Rule] = Field(default_factory=list)
    default: Response = Field(default_factory=lambda: Response(text="I have no scripted answer for this."))

    @classmethod
    def load(cls, path: Path | str) -> Scenario:
        """Read a scenario from a YAML file; one that is missing, not YAML or not a scenario is
        a typed error saying where."""
        hint = "the README's section \"Scenario files\" shows the format"
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise GreenloopError(f"scenario {path} cannot be read: {exc.strerror or exc}",
                                 kind=ErrorKind.VALIDATION_ERROR, suggestion="give the path of a scenario file") from None
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            at = f" (line {where.line + 1}, column {where.column + 1})" if where is not None else ""
            raise GreenloopError(f"scenario {path} is not valid YAML{at}: {getattr(exc, 'problem', None) or exc}",
                                 kind=ErrorKind.VALIDATION_ERROR, suggestion=hint) from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                (".".join(str(p) for p in e["loc"]) or "the file") + f": {e['msg']}" for e in exc.errors()[:5])
            raise GreenloopError(f"scenario {path} is not a scenario: {problems}", kind=ErrorKind.VALIDATION_ERROR,
                                 suggestion=hint) from None


class RequestContext(BaseModel):
    """What a trigger can look at, derived from one Messages API request."""

    role: str | None = None
    candidate: int = 1
    iteration: int = 1
    turn: int = 1
    previous_role: str | None = None
    context: str = ""
    system: str = ""
    first_user: str = ""
    last_user: str = ""
    all_text: str = ""


def _search(pattern: str | None, text: str) -> bool:
    return pattern is None or re.search(pattern, text, re.S | re.I) is not None


def matches(trigger: Trigger, ctx: RequestContext) -> bool:
    """Whether every condition of ``trigger`` holds for ``ctx``."""
    return (
        (trigger.role is None or trigger.role == ctx.role)
        and (trigger.candidate is None or trigger.candidate == ctx.candidate)
        and (trigger.iteration is None or trigger.iteration == ctx.iteration)
        and (trigger.turn is None or trigger.turn == ctx.turn)
        and (trigger.previous_role is None or trigger.previous_role == ctx.previous_role)
        and _search(trigger.context, ctx.context)
        and _search(trigger.system, ctx.system)
        and _search(trigger.user, ctx.first_user)
        and _search(trigger.last, ctx.last_user)
        and _search(trigger.contains, ctx.all_text)
    )


class Matcher:
    """Chooses responses for a scenario, counting how often each rule fired."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        # Stable sort: descending priority, file order among equals.
        self._rules = sorted(enumerate(scenario.rules), key=lambda ir: -ir[1].priority)
        self.fired: dict[int, int] = {}

    def choose(self, ctx: RequestContext) -> tuple[Response, str]:
        """The response for ``ctx`` and the name of the rule that gave it."""
        for index, rule in self._rules:
            if rule.times is not None and self.fired.get(index, 0) >= rule.times:
                continue
            if matches(rule.trigger, ctx):
                self.fired[index] = self.fired.get(index, 0) + 1
                return rule.response, rule.name or f"rule[{index}]"
        return self.scenario.default, "default"
