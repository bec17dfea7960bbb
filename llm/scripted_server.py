"""A scripted, Anthropic-compatible Messages endpoint served on loopback.

The real ``anthropic`` client talks to it (``base_url``), so the real
request building, tool-use loop and error handling are exercised; only the
model's answers are scripted (see ``llm.scenario``). It is the one mock
Greenloop allows, at the network boundary to the provider.

Every request is recorded (``requests``, or ``GET /_scripted/log``) so tests
can assert on what was asked: the roles, the tool calls, the feedback a
failed validation fed into the next attempt.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .scenario import Matcher, RequestContext, Response, Scenario

ROLE_HEADER = "x-greenloop-role"
CONTEXT_HEADER = "x-greenloop-context"
CANDIDATE_HEADER = "x-greenloop-candidate"


class RecordedRequest(BaseModel):
    """One request as the server saw it and what it answered."""

    context: str
    role: str | None
    candidate: int = 1
    iteration: int
    turn: int
    previous_role: str | None
    rule: str
    body: dict[str, Any]
    response: dict[str, Any]
    status: int


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return f"[tool_use {block.get('name')}] {json.dumps(block.get('input'), sort_keys=True)}"
    if kind == "tool_result":
        inner = block.get("content")
        if isinstance(inner, list):
            return "\n".join(_block_text(b) for b in inner)
        return str(inner or "")
    return ""


def message_text(message: dict[str, Any]) -> str:
    """All text of one message (string content or content blocks)."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(_block_text(b) for b in content)
    return str(content or "")


def _system_text(system: Any) -> str:
    if isinstance(system, list):
        return "\n".join(_block_text(b) for b in system)
    return str(system or "")


class ScriptedLLM:
    """The scripted model: conversation bookkeeping plus a ``Matcher``."""

    def __init__(self, scenario: Scenario) -> None:
        self.matcher = Matcher(scenario)
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        # Per conversation kind: (context, role, candidate); the candidates of one attempt count apart.
        self._iterations: dict[tuple[str, str | None, int], int] = {}
        self._last_role: dict[str, str | None] = {}
        self._previous: dict[tuple[str, str | None, int], str | None] = {}
        self._cached: set[str] = set()
        self._ids = 0

    def _context(self, body: dict[str, Any], headers: dict[str, str]) -> RequestContext:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        role = headers.get(ROLE_HEADER)
        context = headers.get(CONTEXT_HEADER, "")
        candidate = int(headers.get(CANDIDATE_HEADER, "1") or 1)
        turn = 1 + sum(1 for m in messages if m.get("role") == "assistant")
        key = (context, role, candidate)
        if turn == 1:
            self._iterations[key] = self._iterations.get(key, 0) + 1
            self._previous[key] = self._last_role.get(context)
            if candidate == 1:
                self._last_role[context] = role
        users = [message_text(m) for m in messages if m.get("role") == "user"]
        return RequestContext(
            role=role,
            candidate=candidate,
            iteration=self._iterations.get(key, 1),
            turn=turn,
            previous_role=self._previous.get(key),
            context=context,
            system=_system_text(body.get("system")),
            first_user=users[0] if users else "",
            last_user=users[-1] if users else "",
            all_text="\n".join(message_text(m) for m in messages),
        )

    def _usage(self, body: dict[str, Any], out: str) -> dict[str, int]:
        usage = {"input_tokens": max(1, len(json.dumps(body.get("messages"))) // 4),
                 "output_tokens": max(1, len(out) // 4),
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        system = body.get("system")
        if isinstance(system, list) and any(isinstance(b, dict) and b.get("cache_control") for b in system):
            text = _system_text(system)
            digest = hashlib.sha256(text.encode()).hexdigest()
            field = "cache_read_input_tokens" if digest in self._cached else "cache_creation_input_tokens"
            usage[field] = max(1, len(text) // 4)
            self._cached.add(digest)
        return usage

    def _message(self, body: dict[str, Any], response: Response) -> dict[str, Any]:
        self._ids += 1
        if response.raw_content is not None:
            content = response.raw_content
        else:
            content = []
            if response.text:
                content.append({"type": "text", "text": response.text})
            for i, call in enumerate(response.tool_calls):
                content.append({"type": "tool_use", "id": f"toolu_scripted_{self._ids}_{i}",
                                "name": call.name, "input": call.input})
        stop = response.stop_reason or ("tool_use" if response.tool_calls else "end_turn")
        usage = self._usage(body, json.dumps(content))
        if response.input_tokens is not None:
            usage["input_tokens"] = response.input_tokens
        if response.output_tokens is not None:
            usage["output_tokens"] = response.output_tokens
        return {"id": f"msg_scripted_{self._ids}", "type": "message", "role": "assistant",
                "model": body.get("model", "scripted"), "content": content, "stop_reason": stop,
                "stop_sequence": None, "usage": usage}

    def answer(self, body: dict[str, Any],
               headers: dict[str, str]) -> tuple[int, dict[str, Any], float, dict[str, str]]:
        """HTTP status, JSON body, delay and extra headers for one Messages request."""
        with self._lock:
            ctx = self._context(body, headers)
            response, rule = self.matcher.choose(ctx)
            extra: dict[str, str] = {}
            if response.error is not None:
                status = response.error.status
                payload = {"type": "error",
                           "error": {"type": response.error.error_type, "message": response.error.message}}
                if response.error.retry_after_s is not None:
                    extra["retry-after"] = f"{response.error.retry_after_s:g}"
                elif status in (429, 529):
                    extra["retry-after"] = "0"
            else:
                status, payload = 200, self._message(body, response)
            self.requests.append(RecordedRequest(
                context=ctx.context, role=ctx.role, candidate=ctx.candidate, iteration=ctx.iteration, turn=ctx.turn,
                previous_role=ctx.previous_role, rule=rule, body=body, response=payload, status=status,
            ))
            return status, payload, response.delay_s, extra


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet by default
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.startswith("/_scripted/log"):
            self._send(200, [r.model_dump(mode="json") for r in self.server.llm.requests])
        else:
            self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/v1/messages"):
            self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad JSON"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, payload, delay, extra = self.server.llm.answer(body, headers)
        if delay:
            time.sleep(delay)
        self._send(status, payload, extra)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    llm: ScriptedLLM


class ScriptedLLMServer:
    """Serve a scenario on 127.0.0.1; use as a context manager or start()/stop()."""

    def __init__(self, scenario: Scenario, host: str = "127.0.0.1", port: int = 0) -> None:
        self.llm = ScriptedLLM(scenario)
        self._httpd = _Server((host, port), _Handler)
        self._httpd.llm = self.llm
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-llm", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.llm.requests

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def scripted_llm(scenario_path: Path) -> Iterator[ScriptedLLMServer]:
    """Serve ``scenario_path`` on loopback and point this process's Anthropic client at it
    (``ANTHROPIC_BASE_URL``; a placeholder key when none is set), for as long as the block runs."""
    with ScriptedLLMServer(Scenario.load(scenario_path)) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        os.environ.setdefault("ANTHROPIC_API_KEY", "scripted")
        yield server
