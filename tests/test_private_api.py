"""The private hooks of the MCP SDK and uvicorn that Tender overrides still exist with the parameters it expects:
a version that renamed one would leave the session and connection bounds silently unapplied."""

import inspect

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from uvicorn.protocols.http.h11_impl import H11Protocol

from tender.server.limits import bounded_protocol
from tender.server.sessions import BoundedSessions


def parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_every_session_manager_method_tender_overrides_exists_in_the_sdk_with_the_same_parameters():
    own = {name for name, value in vars(BoundedSessions).items() if inspect.isfunction(value)}
    overridden = sorted(name for name in own if hasattr(StreamableHTTPSessionManager, name))
    assert {"_admit_session", "_discard_session", "_handle_stateful_request"} <= set(overridden)
    for name in overridden:
        assert parameters(getattr(BoundedSessions, name)) == parameters(getattr(StreamableHTTPSessionManager, name))


def test_every_h11_protocol_method_tender_overrides_exists_in_uvicorn_with_the_same_parameters():
    bounded = bounded_protocol(10)
    overridden = [
        name for name, value in vars(bounded).items() if inspect.isfunction(value) and hasattr(H11Protocol, name)
    ]
    assert {"connection_made", "data_received", "on_response_complete", "connection_lost"} <= set(overridden)
    for name in overridden:
        assert parameters(getattr(bounded, name)) == parameters(getattr(H11Protocol, name))
