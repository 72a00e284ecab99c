"""A real HTTP server on a loopback port that speaks the chat completions API and answers
from a script, for testing generation against faults a real endpoint shows.

Each question (the text after the prompt's last ``Question: ``) has a list of
:class:`Action` s, one per request in turn (the last repeats); a question without a
script gets ``default(question)``.  Every request is logged server-side, so tests count
what a client really asked.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    """A chat completion with ``content``; ``delay`` seconds before it is sent."""

    content: str | None
    finish_reason: str = "stop"
    delay: float = 0.0


@dataclass(frozen=True)
class Status:
    """An HTTP error answer."""

    code: int
    headers: dict[str, str] = field(default_factory=dict)
    body: str = '{"error": {"message": "scripted failure", "type": "server_error"}}'


@dataclass(frozen=True)
class Raw:
    """A 200 answer whose body is given as is (e.g. malformed JSON)."""

    body: str


@dataclass(frozen=True)
class Drop:
    """The connection closed without an answer (a server that went away mid-run)."""


Action = Reply | Status | Raw | Drop


@dataclass(frozen=True)
class Request:
    question: str
    model: str
    body: dict
    at: float  # time.monotonic() when it arrived


def question_of(body: dict) -> str:
    content = body["messages"][-1]["content"]
    return content.rsplit("Question: ", 1)[-1].strip()


class ChatServer:
    def __init__(self, default: Callable[[str], Action] | None = None) -> None:
        self.script: dict[str, list[Action]] = {}
        self.default = default or (lambda q: Reply("```sql\nSELECT 1\n```"))
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                action = server._next(body)
                try:
                    self._answer(action, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _send(self, code: int, text: str, headers: dict[str, str] | None = None) -> None:
                data = text.encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _answer(self, action: Action, body: dict) -> None:
                if isinstance(action, Status):
                    return self._send(action.code, action.body, action.headers)
                if isinstance(action, Raw):
                    return self._send(200, action.body)
                if isinstance(action, Drop):
                    self.close_connection = True
                    return None
                if action.delay:
                    time.sleep(action.delay)
                prompt_tokens = sum(len(m["content"]) for m in body["messages"]) // 4
                completion = len(action.content or "") // 4
                self._send(
                    200,
                    json.dumps(
                        {
                            "id": "chatcmpl-scripted",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": action.content},
                                    "finish_reason": action.finish_reason,
                                }
                            ],
                            "usage": {
                                "prompt_tokens": prompt_tokens,
                                "completion_tokens": completion,
                                "total_tokens": prompt_tokens + completion,
                            },
                        }
                    ),
                )

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def _next(self, body: dict) -> Action:
        question = question_of(body)
        with self._lock:
            seen = sum(1 for r in self.requests if r.question == question)
            self.requests.append(Request(question, body.get("model"), body, time.monotonic()))
            actions = self.script.get(question)
        if not actions:
            return self.default(question)
        return actions[min(seen, len(actions) - 1)]

    def asked(self, question: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.question == question]

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
