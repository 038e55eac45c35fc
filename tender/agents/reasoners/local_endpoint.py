"""The LLM backend's endpoint in this process: the paper's protocols on a laptop, with no server to start.

`TENDER_LLM_BASE_URL=local` answers the LLM reasoner's chat completions with the local model that reads requests
(agents/local_model.py, the GGUF file TENDER_REQUEST_MODEL names) instead of sending them over HTTP. It is an httpx
transport under the same OpenAI client, so every step, its retries, its cache, its fallback and its token counts
behave as with a server; the output is held to the step's JSON schema by a grammar. The tokens counted are what a
server bills: the whole prompt of every call, not only the part llama.cpp had not read yet."""

import json
import time
import uuid

import httpx2 as httpx  # the HTTP client openai is built on

from ..local_model import TextModel

LOCAL = "local"  # the base URL that asks for this endpoint
BASE_URL = "http://local.tender/v1"  # what the OpenAI client is given: requests never leave the process
ANY_OBJECT: dict = {"type": "object"}


def is_local(base_url: str | None) -> bool:
    return (base_url or "").strip().lower() == LOCAL


class LocalChatTransport(httpx.BaseTransport):
    """Answers POST /chat/completions with a TextModel; anything else is a 404, as a server would say."""

    def __init__(self, model: TextModel, max_tokens: int = 1024):
        self.model = model
        self.max_tokens = max_tokens

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
            return _error(404, f"no route {request.method} {request.url.path} in the local endpoint")
        try:
            body = json.loads(request.read() or b"{}")
        except ValueError:
            return _error(400, "the request body is not JSON")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error(400, "no messages")
        timeout = (request.extensions.get("timeout") or {}).get("read")
        deadline = time.monotonic() + float(timeout) if timeout else None
        max_tokens = min(int(body.get("max_tokens") or self.max_tokens), self.max_tokens)
        try:
            reply = self.model.generate(
                [{"role": str(m.get("role")), "content": str(m.get("content") or "")} for m in messages],
                schema_of(body.get("response_format")),
                max_tokens,
                deadline,
            )
        except ValueError as error:  # llama.cpp's word for a prompt longer than the model's context
            return _error(400, f"the local model cannot read this prompt: {error}")
        if reply.stopped == "deadline":
            return _error(504, "the local model ran past the call's timeout")
        prompt = reply.prompt_total or reply.prompt_tokens
        return httpx.Response(
            200,
            json={
                "id": f"local-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model.name,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.text},
                        "finish_reason": "length" if reply.stopped == "length" else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": prompt + reply.completion_tokens,
                },
            },
        )


def schema_of(response_format) -> dict:
    """The JSON schema a reply is held to: response_format's json_schema, JSON mode's schema where the request
    carries one, else any object."""
    if not isinstance(response_format, dict):
        return ANY_OBJECT
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else ANY_OBJECT
    schema = response_format.get("schema")
    return schema if isinstance(schema, dict) else ANY_OBJECT


def _error(status: int, message: str) -> httpx.Response:
    return httpx.Response(status, json={"error": {"message": message, "type": "local_endpoint", "code": status}})
