"""Bounded HTTP GETs for the sources that live on the Web (a registry, a directory's README), with urllib only.

- Time: `timeout` bounds a request in all, from connecting to the last byte of the body, headers included: a
  server trickling a byte a second is cut then (a socket's own timeout bounds each read, so a trickle never
  tripped it: past 200 s with a 5 s timeout). A request that times out is not tried again: a server that hangs
  once mostly hangs again.
- Retries: exponential back-off on 429, 5xx and dropped connections (Retry-After honoured up to a cap), from one
  budget per read (`Retries`): a registry's pages share it, so a flaky registry costs a few retries in all, not a
  few per page of up to 1,000.
- Redirects are followed on the same host only (http to https included, never back), over http or https: a
  registry that sends the read elsewhere, or to ftp://, is refused, saying where to, since the catalogue would
  credit the URL named.
- Credentials: a URL's `user:password@` is sent as basic authentication (urllib would look it up as a host
  name), its query as written; wherever a URL is shown or kept it is `shown_url`, credentials masked.
- Size: at most `max_bytes` of a body are read.

Every failure is a SourceError naming the URL, credentials masked."""

import base64
import email.utils
import json
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPConnection, HTTPException, HTTPSConnection
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ...errors import SourceError
from ...safety import redact

CHUNK = 1 << 16


class NotFound(SourceError):
    """HTTP 404: the URL names nothing (a registry without the /v0.1 API, say)."""


class _Retry(Exception):
    def __init__(self, reason: str, wait: float = 0.0):
        super().__init__(reason)
        self.wait = wait


@dataclass
class Retries:
    """The retries left to one read (every page of a registry): `Fetcher.retries` of them in all."""

    allowed: int
    used: int = 0

    def take(self) -> bool:
        """One more retry, if any is left."""
        if self.used >= self.allowed:
            return False
        self.used += 1
        return True


@dataclass(frozen=True)
class Fetcher:
    """GETs within limits. `timeout` bounds one request, from connecting to the last byte; `retries` more tries,
    for a whole read, follow a 429, a 5xx or a dropped connection, after `backoff`, twice that, four times that...
    seconds, or the server's Retry-After, never more than `max_wait`; at most `max_bytes` of a body are read."""

    timeout: float = 30.0
    retries: int = 4
    backoff: float = 1.0
    max_wait: float = 60.0
    max_bytes: int = 32 << 20
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def budget(self) -> Retries:
        """The retries of one read, to pass to each of its `get`s."""
        return Retries(self.retries)

    def get(self, url: str, retries: Retries | None = None) -> bytes:
        """The body at `url`; SourceError (NotFound for a 404) naming it when it cannot be had. `retries`: the
        read's budget this request draws on (its own, `budget()`, if none)."""
        retries = retries or self.budget()
        for attempt in range(retries.allowed + 1):
            try:
                return self._once(url)
            except _Retry as error:
                if not retries.take():
                    spent = f" (the read's {retries.allowed} retries are spent)" if attempt < retries.allowed else ""
                    tries = "once" if attempt == 0 else f"{attempt + 1} times"
                    raise SourceError(shown_url(url), f"failed {tries}{spent}; the last time: {error}") from None
                self.sleep(min(max(self.backoff * 2**attempt, error.wait), self.max_wait))
        raise AssertionError("unreachable")  # pragma: no cover

    def get_json(self, url: str, retries: Retries | None = None) -> Any:
        body = self.get(url, retries)
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise SourceError(shown_url(url), f"did not answer JSON ({error})") from None

    def _once(self, url: str) -> bytes:
        shown = shown_url(url)
        target, authorization = _without_credentials(url)
        headers = {"User-Agent": "tender-mcp", "Accept": "application/json, */*"}
        if authorization:
            headers["Authorization"] = authorization
        cutoff = _Cutoff(self.timeout)
        opener = urllib.request.build_opener(_SameHost(shown), _Http(cutoff), _Https(cutoff))
        try:
            with opener.open(urllib.request.Request(target, headers=headers), timeout=self.timeout) as response:
                chunks, got = [], 0
                while chunk := response.read(CHUNK):
                    got += len(chunk)
                    if got > self.max_bytes:
                        raise SourceError(shown, f"answered more than {self.max_bytes:,} bytes; refused")
                    chunks.append(chunk)
            if cutoff.fired:  # a body without a length ends where it was cut: not a body
                raise TimeoutError()
            return b"".join(chunks)
        except urllib.error.HTTPError as error:
            if error.code == 429 or error.code >= 500:
                wait = retry_after(error.headers.get("Retry-After") if error.headers else None)
                raise _Retry(f"HTTP {error.code}", wait) from None
            if error.code == 404:
                raise NotFound(shown, "was not found (HTTP 404)") from None
            raise SourceError(shown, f"answered HTTP {error.code} ({error.reason})") from None
        except SourceError:
            raise
        except Exception as error:
            if cutoff.fired or isinstance(error, TimeoutError):
                raise SourceError(shown, f"did not answer within {self.timeout:g} s") from None
            if isinstance(error, urllib.error.URLError):
                if isinstance(error.reason, TimeoutError):
                    raise SourceError(shown, f"did not answer within {self.timeout:g} s") from None
                if isinstance(error.reason, ConnectionError):
                    raise _Retry(str(error.reason)) from None
                raise SourceError(shown, f"cannot be reached ({redact(str(error.reason))})") from None
            if isinstance(error, HTTPException | ConnectionError):
                raise _Retry(str(error) or type(error).__name__) from None
            if isinstance(error, ValueError):  # not a URL urllib can open
                raise SourceError(shown, f"is not a URL that can be fetched ({redact(str(error))})") from None
            raise
        finally:
            cutoff.release()


def shown_url(url: str) -> str:
    """`url` as it may be printed or kept: its `user:password@` and secret-looking query values masked."""
    return redact(str(url))


def _without_credentials(url: str) -> tuple[str, str | None]:
    """`url` without its `user:password@`, and the basic authorization they make (None without them)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


class _Cutoff:
    """Shuts every socket of one request at its deadline, unless released first: a read waiting on a server that
    trickles then returns at once. Each socket is held by a duplicate of its descriptor, so the one shut is the
    request's even after urllib has closed its own."""

    def __init__(self, seconds: float):
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            held = socket.socket(fileno=os.dup(sock.fileno()))
            self._sockets.append(held)
            if self.fired:
                _shut(held)

    def _cut(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _shut(sock)

    def release(self) -> None:
        self._timer.cancel()
        with self._lock:
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed by the other end
        pass


def _watched(base: type[HTTPConnection], cutoff: _Cutoff) -> type[HTTPConnection]:
    """`base` whose sockets `cutoff` watches from the moment they connect (a TLS handshake included)."""

    class Watched(base):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)

            def connect(*args: Any, **kwargs: Any) -> socket.socket:
                sock = socket.create_connection(*args, **kwargs)
                cutoff.watch(sock)
                return sock

            self._create_connection = connect

    return Watched


class _Http(urllib.request.HTTPHandler):
    def __init__(self, cutoff: _Cutoff):
        super().__init__()
        self._connection = _watched(HTTPConnection, cutoff)

    def http_open(self, req):
        return self.do_open(self._connection, req)


class _Https(urllib.request.HTTPSHandler):
    def __init__(self, cutoff: _Cutoff):
        super().__init__()
        self._connection = _watched(HTTPSConnection, cutoff)
        self._tls = ssl.create_default_context()

    def https_open(self, req):
        return self.do_open(self._connection, req, context=self._tls)


class _SameHost(urllib.request.HTTPRedirectHandler):
    """Redirects within the host named, over http or https (never from https back to http); anything else refused,
    saying where it led."""

    def __init__(self, shown: str):
        super().__init__()
        self._shown = shown

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        old, new = urlsplit(req.full_url), urlsplit(newurl)
        if new.scheme not in ("http", "https"):
            raise SourceError(self._shown, f"redirects to {shown_url(newurl)}: only http and https are followed")
        if (new.hostname or "").lower() != (old.hostname or "").lower() or (old.scheme, new.scheme) == (
            "https",
            "http",
        ):
            raise SourceError(
                self._shown,
                f"redirects to {shown_url(newurl)}, another host (or from https to http); refused: name that URL "
                "itself if it is the one to read",
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def retry_after(value: str | None) -> float:
    """Retry-After in seconds, from a number or an HTTP date; 0 when absent or unreadable."""
    if not value:
        return 0.0
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, when.timestamp() - time.time())


def is_url(text: str) -> bool:
    return str(text).startswith(("http://", "https://"))
