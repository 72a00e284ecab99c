"""Calls to an OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server, OpenAI),
through the official ``openai`` client, with retries.

The client's own retries are off (``max_retries=0``): this module retries, so that it
can count attempts and honour ``Retry-After`` the same way on every server:

* retried, up to ``retries`` times: HTTP 408, 409, 429 and 5xx, timeouts, dropped
  connections, and a body that is not a chat completion (malformed JSON, no choices);
  the wait is the server's ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP
  date) when it sends one, else ``backoff * 2**(attempt-1)``, never more than
  ``max_wait`` seconds;
* not retried, the instance fails (:class:`CallFailed`, a ``generation_error``): other
  4xx answers, such as a prompt longer than the model's context;
* not retried, the run stops (:class:`EndpointError`): 401, 403 and 404, a wrong key,
  URL or model name, which no later request would get past; and a connection that fails
  before anything at the URL has answered in this run (no server there, a mistyped
  port), which waiting would not mend.

A reply keeps the raw text (``content``; an empty string when the model gave none, as a
thinking model cut off at the limit does), the finish reason, token usage and latency.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from score.generate.errors import GenerationError, require

RETRY_STATUS = frozenset({408, 409, 429})
FATAL_STATUS = frozenset({401, 403, 404})


class CallFailed(Exception):
    """One instance's call failed for good; the prediction is a generation_error."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts


class EndpointError(GenerationError):
    """The endpoint refuses every request (key, URL or model wrong): the run stops."""


@dataclass(frozen=True)
class ChatSettings:
    model: str
    base_url: str
    api_key: str
    max_tokens: int = 16384
    temperature: float = 0.0
    timeout: float = 600.0  # seconds per request
    retries: int = 5
    backoff: float = 1.0
    max_wait: float = 60.0
    token_limit_param: str = "max_tokens"  # or max_completion_tokens (OpenAI reasoning models)


@dataclass(frozen=True)
class ChatReply:
    output: str
    finish_reason: str | None
    usage: dict[str, int] | None
    latency_s: float  # of the attempt that answered
    attempts: int


def retry_after_seconds(headers: Any, now: float | None = None) -> float | None:
    """The wait a server asked for: ``retry-after-ms``, or ``Retry-After`` in seconds or
    as an HTTP date; None when it asked for none (or said something unreadable).

    >>> retry_after_seconds({"retry-after": "2"}), retry_after_seconds({"retry-after-ms": "1500"})
    (2.0, 1.5)
    >>> retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0)
    10.0
    >>> retry_after_seconds({}) is None
    True
    """
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class ChatClient:
    """Sends one prompt at a time (thread-safe: one shared HTTP client)."""

    def __init__(self, settings: ChatSettings, *, sleep: Callable[[float], None] = time.sleep):
        openai = require("openai")
        self.settings = settings
        self._openai = openai
        self._sleep = sleep
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout,
            max_retries=0,
        )
        self.reached = False  # something at base_url answered (any HTTP status) in this run

    def close(self) -> None:
        self._client.close()

    def _wait(self, attempt: int, headers: Any = None) -> None:
        asked = retry_after_seconds(headers)
        wait = asked if asked is not None else self.settings.backoff * 2 ** (attempt - 1)
        self._sleep(min(wait, self.settings.max_wait))

    def _request(self, messages: Sequence[dict[str, str]]) -> Any:
        s = self.settings
        return self._client.chat.completions.create(
            model=s.model,
            messages=list(messages),
            temperature=s.temperature,
            **{s.token_limit_param: s.max_tokens},
        )

    def complete(self, messages: Sequence[dict[str, str]]) -> ChatReply:
        """The model's reply to ``messages``; raises CallFailed or EndpointError."""
        openai = self._openai
        attempts = self.settings.retries + 1
        last = ""
        for attempt in range(1, attempts + 1):
            start = time.perf_counter()
            headers = None
            try:
                response = self._request(messages)
                self.reached = True
                return _reply(response, time.perf_counter() - start, attempt)
            except openai.APIStatusError as e:
                self.reached = True
                status = e.status_code
                last = f"HTTP {status}: {_short(e.message)}"
                if status in FATAL_STATUS:
                    raise EndpointError(
                        f"{self.settings.base_url} answered {last} (check --base-url, "
                        "--model and the API key)"
                    ) from None
                if status not in RETRY_STATUS and status < 500:
                    raise CallFailed(last, attempt) from None
                headers = e.response.headers
            except openai.APITimeoutError:
                last = f"no answer within {self.settings.timeout:g} s (the request timeout)"
            except openai.APIConnectionError as e:
                last = f"connection failed: {_short(str(e))}"
                if not self.reached:
                    raise EndpointError(
                        f"cannot connect to {self.settings.base_url} ({_short(str(e))}); "
                        "nothing has answered there in this run: check --base-url and that the "
                        "server is running"
                    ) from None
            except (openai.APIResponseValidationError, ValueError, _Malformed) as e:
                last = f"the answer is not a chat completion: {_short(str(e))}"
            if attempt < attempts:
                self._wait(attempt, headers)
        raise CallFailed(f"{last} (after {attempts} attempts)", attempts)


class _Malformed(Exception):
    pass


def _reply(response: Any, latency: float, attempt: int) -> ChatReply:
    choices = getattr(response, "choices", None)
    if not choices:
        raise _Malformed("no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise _Malformed("no message")
    content = message.content if isinstance(message.content, str) else ""
    usage = getattr(response, "usage", None)
    counts = None
    if usage is not None:
        counts = {
            k: int(v)
            for k in ("prompt_tokens", "completion_tokens", "total_tokens")
            if isinstance(v := getattr(usage, k, None), int)
        }
    return ChatReply(content, choices[0].finish_reason, counts, round(latency, 3), attempt)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
