"""Bounded HTTP GETs for the sources that live on the Web (a registry, a directory's README), with urllib only:
a time limit per request, retries with exponential back-off on 429, 5xx and dropped connections (Retry-After
honoured up to a cap), and a cap on the bytes read. A request that times out is not tried again: a server that
hangs once mostly hangs again, and four tries of 30 s each would keep a build waiting two minutes. Every failure
is a SourceError naming the URL."""

import email.utils
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPException
from typing import Any

from ...errors import SourceError

CHUNK = 1 << 16


class NotFound(SourceError):
    """HTTP 404: the URL names nothing (a registry without the /v0.1 API, say)."""


class _Retry(Exception):
    def __init__(self, reason: str, wait: float = 0.0):
        super().__init__(reason)
        self.wait = wait


@dataclass(frozen=True)
class Fetcher:
    """GETs within limits. `timeout` bounds one request, from connecting to the last byte; `retries` more tries
    follow a 429, a 5xx or a dropped connection, after `backoff`, twice that, four times that... seconds, or the
    server's Retry-After, never more than `max_wait`; at most `max_bytes` of a body are read."""

    timeout: float = 30.0
    retries: int = 4
    backoff: float = 1.0
    max_wait: float = 60.0
    max_bytes: int = 32 << 20
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def get(self, url: str) -> bytes:
        """The body at `url`; SourceError (NotFound for a 404) naming it when it cannot be had."""
        for attempt in range(self.retries + 1):
            try:
                return self._once(url)
            except _Retry as error:
                if attempt == self.retries:
                    raise SourceError(url, f"failed {self.retries + 1} times; the last time: {error}") from None
                self.sleep(min(max(self.backoff * 2**attempt, error.wait), self.max_wait))
        raise AssertionError("unreachable")  # pragma: no cover

    def get_json(self, url: str) -> Any:
        body = self.get(url)
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise SourceError(url, f"did not answer JSON ({error})") from None

    def _once(self, url: str) -> bytes:
        request = urllib.request.Request(url, headers={"User-Agent": "tender-mcp", "Accept": "application/json, */*"})
        deadline = time.monotonic() + self.timeout
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                chunks, got = [], 0
                while chunk := response.read(CHUNK):
                    got += len(chunk)
                    if got > self.max_bytes:
                        raise SourceError(url, f"answered more than {self.max_bytes:,} bytes; refused")
                    if time.monotonic() > deadline:
                        raise TimeoutError()
                    chunks.append(chunk)
                return b"".join(chunks)
        except urllib.error.HTTPError as error:
            if error.code == 429 or error.code >= 500:
                wait = retry_after(error.headers.get("Retry-After") if error.headers else None)
                raise _Retry(f"HTTP {error.code}", wait) from None
            if error.code == 404:
                raise NotFound(url, "was not found (HTTP 404)") from None
            raise SourceError(url, f"answered HTTP {error.code} ({error.reason})") from None
        except TimeoutError:
            raise SourceError(url, f"did not answer within {self.timeout:g} s") from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise SourceError(url, f"did not answer within {self.timeout:g} s") from None
            if isinstance(error.reason, ConnectionError):
                raise _Retry(str(error.reason)) from None
            raise SourceError(url, f"cannot be reached ({error.reason})") from None
        except (HTTPException, ConnectionError) as error:
            raise _Retry(str(error) or type(error).__name__) from None
        except ValueError as error:  # not a URL urllib can open
            raise SourceError(url, f"is not a URL that can be fetched ({error})") from None


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
