"""The chat client against a real loopback server: answers, retries, failures."""

from __future__ import annotations

import pytest

from score.generate.client import CallFailed, ChatClient, ChatSettings, EndpointError

from .chat_server import ChatServer, Drop, Raw, Reply, Status

QUESTION = "How many persons?"
MESSAGES = (
    {"role": "system", "content": "You write SQL."},
    {"role": "user", "content": f"schema\n\nQuestion: {QUESTION}"},
)
RIGHT = Reply("```sql\nSELECT count(*) FROM cdm.person\n```")


@pytest.fixture
def server():
    s = ChatServer().start()
    yield s
    s.stop()


def client(server: ChatServer, **kw) -> ChatClient:
    settings = {"retries": 3, "backoff": 0.01, "timeout": 5.0, **kw}
    return ChatClient(ChatSettings("scripted", server.url, "key", **settings))


def test_an_answer_keeps_text_finish_reason_usage_and_the_request_settings(server):
    server.script[QUESTION] = [RIGHT]
    reply = client(server, max_tokens=123).complete(MESSAGES)
    assert reply.output == RIGHT.content and reply.finish_reason == "stop"
    assert reply.attempts == 1 and reply.latency_s >= 0
    assert reply.usage["completion_tokens"] == len(RIGHT.content) // 4
    (request,) = server.requests
    assert request.body["max_tokens"] == 123 and request.body["temperature"] == 0
    assert request.body["messages"] == list(MESSAGES) and request.model == "scripted"


def test_the_token_limit_can_go_in_max_completion_tokens(server):
    client(server, token_limit_param="max_completion_tokens").complete(MESSAGES)
    assert server.requests[0].body["max_completion_tokens"] == 16384
    assert "max_tokens" not in server.requests[0].body


def test_429_is_retried_after_the_wait_the_server_asks_for(server):
    server.script[QUESTION] = [Status(429, {"Retry-After": "1"}), RIGHT]
    reply = client(server, backoff=0.0).complete(MESSAGES)
    first, second = server.requests
    assert reply.attempts == 2 and reply.output == RIGHT.content
    assert second.at - first.at >= 1.0  # Retry-After honoured, not the 0 s backoff


def test_5xx_is_retried_with_backoff_then_fails_for_good(server):
    server.script[QUESTION] = [Status(500), Status(503), RIGHT]
    assert client(server).complete(MESSAGES).attempts == 3
    server.script["other"] = [Status(500)]
    other = [MESSAGES[0], {"role": "user", "content": "Question: other"}]
    with pytest.raises(CallFailed) as failed:
        client(server, retries=2).complete(other)
    assert failed.value.attempts == 3 and len(server.asked("other")) == 3
    assert "HTTP 500" in failed.value.message and "after 3 attempts" in failed.value.message


def test_a_response_slower_than_the_timeout_is_retried(server):
    server.script[QUESTION] = [Reply("too late", delay=2.0), RIGHT]
    reply = client(server, timeout=0.3).complete(MESSAGES)
    assert reply.attempts == 2 and reply.output == RIGHT.content


def test_malformed_json_is_retried_and_fails_when_it_persists(server):
    server.script[QUESTION] = [Raw("{not json"), Raw('{"choices": []}'), RIGHT]
    assert client(server).complete(MESSAGES).attempts == 3
    server.script[QUESTION] = [Raw("{not json")]
    with pytest.raises(CallFailed, match="not a chat completion"):
        client(server, retries=1).complete(MESSAGES)


def test_a_refused_request_is_not_retried_and_a_wrong_key_or_model_stops_the_run(server):
    server.script[QUESTION] = [Status(400)]
    with pytest.raises(CallFailed) as failed:
        client(server).complete(MESSAGES)
    assert failed.value.attempts == 1 and len(server.requests) == 1
    for code in (401, 404):
        server.script[QUESTION] = [Status(code)]
        with pytest.raises(EndpointError, match=f"HTTP {code}"):
            client(server).complete(MESSAGES)


def test_an_empty_answer_is_an_empty_output(server):
    server.script[QUESTION] = [Reply(None, finish_reason="length")]
    reply = client(server).complete(MESSAGES)
    assert reply.output == "" and reply.finish_reason == "length"


def test_no_server_at_the_url_stops_the_run_at_once_without_waiting():
    """A new user's endpoint that is not running (or a mistyped port) waited out every
    retry of ten instances, about five minutes, before the run stopped."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []
    settings = ChatSettings("m", f"http://127.0.0.1:{port}/v1", "key", retries=5, backoff=1.0)
    with pytest.raises(EndpointError, match="cannot connect to http://127.0.0.1:"):
        ChatClient(settings, sleep=waits.append).complete(MESSAGES)
    assert waits == []  # no retry, no wait


def test_a_connection_lost_after_the_server_answered_is_retried(server):
    server.script[QUESTION] = [RIGHT, Drop()]
    chat = client(server)
    assert chat.complete(MESSAGES).output  # the server answered: it exists
    with pytest.raises(CallFailed, match="connection failed") as failed:
        chat.complete(MESSAGES)
    assert failed.value.attempts == 4  # retried, as a server that comes back would need
