"""Catalogue publication without restarts: a server notices that its catalogue file was replaced by a new build and
opens that one in the background, to be switched to between requests.

`tender catalog build` writes a temporary file and renames it into place (catalog/build.py), so the path names
another file (device and inode) once a build is published, and never a half-written one. The server goes on
answering from the catalogue it holds until the new one is open and its agents are warmed up; then requests that
start take the new one, and requests in flight finish on the one they started with (the old catalogue stays open
for them, and for explaining its runs). A new file that cannot be opened (not a catalogue, another encoder's) is
tried once; the server keeps the one it has, and says why in its log and in the note on each plan."""

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from tender.catalog.database import file_identity

log = logging.getLogger("tender.server")
T = TypeVar("T")
Identity = tuple[int, int]


class Publication(Generic[T]):
    """Watches one catalogue path. `poll()` is called at the start of each request: cheap (one stat), it starts
    loading a newly published file in a worker thread and hands over the loaded result once, when ready."""

    def __init__(self, path: Path, identity: Identity | None, load: Callable[[Path], T]):
        self.path = path
        self.identity = identity  # of the file being served
        self._load = load
        self._lock = threading.Lock()
        self._loading: threading.Thread | None = None
        self._ready: tuple[Identity, T] | None = None
        self.failed: tuple[Identity, str] | None = None  # the last new file that could not be opened, and why

    def poll(self) -> tuple[Identity, T] | None:
        """(identity, loaded) of a newly published catalogue, once, when it is ready to switch to; else None, having
        started to load one where the path names a new file."""
        now = file_identity(self.path)
        with self._lock:
            if self._ready is not None:
                ready, self._ready = self._ready, None
                self.identity = ready[0]
                return ready
            stale = now is not None and now != self.identity
            if stale and self._loading is None and (self.failed is None or self.failed[0] != now):
                assert now is not None
                self._loading = threading.Thread(
                    target=self._open, args=(now,), name="tender-catalogue-publication", daemon=True
                )
                self._loading.start()
        return None

    def pending(self) -> bool:
        """Whether the path names another file than the one served (being opened, or that could not be)."""
        now = file_identity(self.path)
        return now is not None and now != self.identity

    def wait(self, timeout: float | None = None) -> None:
        """Until the file being loaded, if any, is loaded (or has failed)."""
        loading = self._loading
        if loading is not None:
            loading.join(timeout)

    def _open(self, identity: Identity) -> None:
        try:
            loaded = self._load(self.path)
        except Exception as error:  # a bad file must not stop the server: it keeps the catalogue it has
            reason = " ".join(str(error).split()) or type(error).__name__
            log.warning("The new catalogue at %s cannot be served (%s); serving the previous one.", self.path, reason)
            with self._lock:
                self.failed, self._loading = (identity, reason), None
            return
        # Were it replaced again meanwhile, the next poll sees another identity and loads the newest.
        with self._lock:
            self._ready, self._loading = (identity, loaded), None
