"""Chat completions already paid for, in SQLite, so that re-running an evaluation does not pay twice.

A reply is keyed by a hash of everything that shapes it: the endpoint, the model, the messages and the
request parameters (response format, temperature, output limit). Only answers found valid are kept: an
invalid one would otherwise be replayed for ever instead of asking again. Turn it off with `--no-cache`
(TENDER_LLM_CACHE=off for the server); delete the file to forget everything. Safe to share between threads."""

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from tender.catalog.database import connect_shared


@dataclass(frozen=True)
class Completion:
    """One chat completion as Tender uses it."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None


class ResponseCache:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite_utils.Database(connect_shared(self.path))
        self._db["responses"].create(
            {
                "key": str,
                "model": str,
                "request": str,
                "content": str,
                "prompt_tokens": int,
                "completion_tokens": int,
                "finish_reason": str,
                "created_at": float,
            },
            pk="key",
            if_not_exists=True,
        )

    @staticmethod
    def key(request: dict) -> str:
        """The hash of a request: endpoint, model, messages and parameters, in a canonical JSON form."""
        canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def get(self, request: dict) -> Completion | None:
        with self._lock:
            rows = list(self._db.query("select * from responses where key = ?", [self.key(request)]))
        if not rows:
            return None
        row = rows[0]
        return Completion(row["content"], row["prompt_tokens"], row["completion_tokens"], row["finish_reason"])

    def put(self, request: dict, completion: Completion) -> None:
        with self._lock:
            self._db["responses"].insert(
                {
                    "key": self.key(request),
                    "model": request.get("model", ""),
                    "request": json.dumps(request, ensure_ascii=False),
                    "content": completion.content,
                    "prompt_tokens": completion.prompt_tokens,
                    "completion_tokens": completion.completion_tokens,
                    "finish_reason": completion.finish_reason,
                    "created_at": time.time(),
                },
                replace=True,
            )

    def delete(self, request: dict) -> None:
        with self._lock:
            self._db.execute("delete from responses where key = ?", [self.key(request)])
            self._db.conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db["responses"].count

    def close(self) -> None:
        with self._lock:
            self._db.close()
