"""Real stand-ins for the LLM reasoner's tests: a small OpenAI-compatible HTTP server that answers
from a script, and a scripted fallback reasoner that records what it was asked.

    with FakeLLMServer() as server:
        server.enqueue(Answer({"functions": [...]}), Status(429), Hang(5), Body("<html>"), Trickle({...}))
        reasoner = LLMReasoner(base_url=server.url, model="fake", fallback=ScriptedFallback(), ...)
        ...
        server.requests  # the JSON bodies received, in order
        server.settled() and server.abandoned  # replies the client hung up on before they ended

A test module gets the `server` and `fallback` fixtures by importing them, and an LLM reasoner on them
with short timeouts from `llm_reasoner(server, fallback, ...)`.

Replies are used in order, one per HTTP request; when none is queued, `respond(body)` (if given)
makes one from the request. With `rejects_json_schema`, a request for
response_format json_schema is answered HTTP 500 without using a reply, as llama.cpp's server does.
A request with no reply at all is answered HTTP 500 with `x-should-retry: false`, so a test that
asks more than it scripted fails quickly and visibly.

What the client did with a Hang or a Trickle is counted, so that a test of a timeout or a deadline asserts what
the client did rather than how long it took: `abandoned`, replies the client hung up on before they ended, and
`outlasted`, those it waited out (a Hang that ran its full time, a Trickle read to its last byte). `settled()`
waits (a guard against hanging, not a bound) until no reply is in flight, so that the counts are final."""

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from tender.agents.reasoners.base import Reasoner
from tender.agents.reasoners.llm import LLMReasoner
from tender.agents.tasks import (
    BidDecision,
    BidTask,
    CategoryMapping,
    DecomposeTask,
    Decomposition,
    FunctionSpec,
    MapCategoriesTask,
    Selection,
    SelectTask,
)


@dataclass
class Answer:
    """HTTP 200 with a chat completion whose content is `content` (a dict is sent as its JSON)."""

    content: str | dict
    prompt_tokens: int = 100
    completion_tokens: int = 20
    finish_reason: str = "stop"
    delay_s: float = 0.0


@dataclass
class Status:
    """An HTTP error, e.g. 429 or 500. retry-after-ms keeps the client's backoff short in tests."""

    code: int
    message: str = "scripted error"
    retry_after_ms: int = 10


@dataclass
class Hang:
    """Say nothing for `seconds` (past the client's timeout), then close the connection."""

    seconds: float


@dataclass
class Body:
    """HTTP `status` with this raw body, e.g. a proxy's HTML page or garbage under a 200."""

    text: str
    content_type: str = "text/html"
    status: int = 200


@dataclass
class Trickle:
    """A valid chat completion (like Answer), sent one byte every `interval_s` seconds."""

    content: str | dict
    interval_s: float = 0.5


class FakeLLMServer:
    def __init__(self, *, rejects_json_schema: bool = False, respond: Callable[[dict], object] | None = None):
        self.rejects_json_schema = rejects_json_schema
        self.respond = respond
        self.requests: list[dict] = []
        self._replies: list = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._open = 0
        self.peak_in_flight = 0
        self.abandoned = 0
        self.outlasted = 0
        self._idle = threading.Condition(self._lock)
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def enqueue(self, *replies) -> "FakeLLMServer":
        with self._lock:
            self._replies.extend(replies)
        return self

    @property
    def unused(self) -> int:
        return len(self._replies)

    def __enter__(self) -> "FakeLLMServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()

    def _next(self, body: dict):
        with self._lock:
            self.requests.append(body)
            if self.rejects_json_schema and (body.get("response_format") or {}).get("type") == "json_schema":
                return Status(500, "Unsupported response_format type json_schema", retry_after_ms=0)
            if self._replies:
                return self._replies.pop(0)
        return self.respond(body) if self.respond else None

    def _enter(self) -> None:
        with self._lock:
            self._open += 1
            self.peak_in_flight = max(self.peak_in_flight, self._open)

    def _leave(self) -> None:
        with self._lock:
            self._open -= 1
            self._idle.notify_all()

    def _count(self, what: str) -> None:
        with self._lock:
            setattr(self, what, getattr(self, what) + 1)

    def settled(self, guard_s: float = 30) -> bool:
        """Whether every reply has ended (waiting for that at most `guard_s`): `abandoned` and `outlasted` are final."""
        with self._idle:
            return self._idle.wait_for(lambda: self._open == 0, guard_s)

    def _hold(self, sock: socket.socket, seconds: float) -> None:
        """Say nothing for `seconds`, or until the client hangs up (counted as abandoned; else as outlasted)."""
        until = time.monotonic() + seconds
        while not self._stopping.wait(0.02):
            if time.monotonic() >= until:
                return self._count("outlasted")
            if select.select([sock], [], [], 0)[0]:
                try:
                    hung_up = sock.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    hung_up = True
                if hung_up:
                    return self._count("abandoned")
        return None

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            in_flight = False  # this connection's request is counted in the server's peak_in_flight

            def log_message(self, *args):
                pass

            def _done(self) -> None:
                if self.in_flight:
                    self.in_flight = False
                    server._leave()

            def do_POST(self):
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = server._next(body)
                server._enter()
                self.in_flight = True
                try:
                    self._reply(reply, body)
                finally:
                    self._done()

            def _reply(self, reply, body):
                if reply is None:
                    return self._send(
                        500,
                        {"error": {"message": "the test scripted no reply for this request"}},
                        {"x-should-retry": "false"},
                    )
                if isinstance(reply, Hang):
                    server._hold(self.connection, reply.seconds)
                    self.close_connection = True
                    return None
                if isinstance(reply, Body):
                    return self._send_bytes(reply.status, reply.text.encode(), reply.content_type)
                if isinstance(reply, Trickle):
                    return self._trickle(reply, body)
                if isinstance(reply, Status):
                    headers = {"retry-after-ms": str(reply.retry_after_ms)} if reply.retry_after_ms else {}
                    return self._send(reply.code, {"error": {"message": reply.message, "code": reply.code}}, headers)
                time.sleep(reply.delay_s)
                return self._send(200, completion(reply, body))

            def _trickle(self, reply, body):
                data = json.dumps(completion(Answer(reply.content), body)).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.flush()
                    for index in range(len(data)):
                        if server._stopping.wait(reply.interval_s):
                            return
                        self.wfile.write(data[index : index + 1])
                        self.wfile.flush()
                    server._count("outlasted")
                except (BrokenPipeError, ConnectionResetError):
                    server._count("abandoned")  # the client gave up: what the test wants

            def _send(self, code: int, payload: dict, headers: dict | None = None):
                return self._send_bytes(code, json.dumps(payload).encode(), "application/json", headers)

            def _send_bytes(self, code: int, data: bytes, content_type: str, headers: dict | None = None):
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    # Out of flight before the last bytes go: the client, once it has them, may send its next
                    # request at once, and that one must not be counted beside this one.
                    self._done()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); nothing to tell it

        return Handler


def completion(reply: Answer, body: dict) -> dict:
    """The chat.completion object for a scripted answer."""
    content = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {"index": 0, "finish_reason": reply.finish_reason, "message": {"role": "assistant", "content": content}}
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


class ScriptedFallback(Reasoner):
    """The fallback in these tests: answers every task with a fixed, valid output and records the tasks."""

    name = "test-scripted-fallback"

    def __init__(self, outputs: dict[type, BaseModel] | None = None):
        self.outputs = {
            DecomposeTask: Decomposition(functions=[FunctionSpec(id="f1", name="fallback", description="fallback")]),
            MapCategoriesTask: CategoryMapping(categories=[], rationale="fallback"),
            BidTask: BidDecision(refusal="fallback"),
            SelectTask: Selection(api_ids=[], rationale="fallback"),
            **(outputs or {}),
        }
        self.asked: list = []

    def answer(self, task, context):
        context.check()
        self.asked.append(task)
        return self.outputs[type(task)]


@pytest.fixture
def server():
    """A fake endpoint for one test."""
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def fallback():
    return ScriptedFallback()


def llm_reasoner(server: FakeLLMServer, fallback: Reasoner | None = None, **options) -> LLMReasoner:
    """An LLM reasoner on the fake endpoint: model 'fake-model', a one-second timeout and no retries unless
    `options` say otherwise; a ScriptedFallback unless one is given."""
    settings = {"model": "fake-model", "timeout_s": 1.0, "max_retries": 0, **options}
    return LLMReasoner(base_url=server.url, fallback=fallback or ScriptedFallback(), **settings)
