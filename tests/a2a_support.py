"""Shared by the A2A tests and the A2A load probe: the official SDK's client as an agent uses it (the card found at the
well-known path, the bearer token added by its AuthInterceptor from the card's security scheme), and a server run in
the test's own event loop where the test needs its own agents."""

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import uvicorn
from a2a.client import AuthInterceptor, Client, ClientCallContext, ClientConfig, CredentialService, create_client
from a2a.helpers import new_data_part, new_text_part
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, StreamResponse, Task
from google.protobuf.json_format import MessageToDict

from tender.server.app import http_app
from tender.settings import Settings
from tests.server_support import free_port


class Token(CredentialService):
    """The bearer token for whatever scheme the card names (Tender's card names one, `bearer`)."""

    def __init__(self, token: str):
        self.token = token

    async def get_credentials(self, security_scheme_name: str, context: ClientCallContext | None) -> str | None:
        return self.token


async def connect(base_url: str, token: str | None = None, streaming: bool = False) -> Client:
    """An SDK client for the agent at `base_url`, made from its card."""
    interceptors = [AuthInterceptor(Token(token))] if token else []
    return await create_client(base_url, client_config=ClientConfig(streaming=streaming), interceptors=interceptors)


def text(value: str) -> Part:
    return new_text_part(value)


def data(value) -> Part:
    return new_data_part(value)


def request(*parts: Part, return_immediately: bool = False) -> SendMessageRequest:
    message = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=list(parts))
    asked = SendMessageRequest(message=message)
    asked.configuration.return_immediately = return_immediately
    return asked


async def events(client: Client, *parts: Part, **options) -> list[StreamResponse]:
    return [event async for event in client.send_message(request(*parts, **options))]


async def send(client: Client, *parts: Part, **options) -> Task:
    """The task a message makes (the last event of a send: the whole task when the client does not stream)."""
    last = (await events(client, *parts, **options))[-1]
    assert last.HasField("task"), last
    return last.task


def artifact_data(task: Task) -> dict:
    """The data part of the task's artifact, as JSON."""
    (artifact,) = task.artifacts
    (data_part,) = [part for part in artifact.parts if part.HasField("data")]
    return MessageToDict(data_part.data)


def artifact_text(task: Task) -> str:
    (artifact,) = task.artifacts
    return "\n".join(part.text for part in artifact.parts if part.HasField("text"))


def said(task: Task) -> str:
    """What the task's status message says."""
    return "\n".join(part.text for part in task.status.message.parts)


@asynccontextmanager
async def served_here(settings: Settings, open_app=None) -> AsyncIterator[str]:
    """`tender serve --transport http --a2a`'s app in this event loop, on a free port; its base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    app = http_app(settings, a2a_url=base, open_app=open_app)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none"))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        with anyio.fail_after(60):
            while not server.started:
                await anyio.sleep(0.05)
        try:
            yield base
        finally:
            server.should_exit = True
