"""Catalogue publication without restarts: a server notices that its catalogue file was replaced by a new build and
opens that one in the background, to be switched to between requests.

`tender catalog build` writes a temporary file and renames it into place (catalog/build.py), so the path names
another file (device and inode) once a build is published, and never a half-written one. The server goes on
answering from the catalogue it holds until the new one is open and its agents are warmed up; then requests that
start take the new one, and requests in flight finish on the one they started with (the old catalogue stays open
for them, and for explaining its runs).

Not every publication is a rename in place: `mv` from another file system copies into a new file, which a server
may see half-written, and `cp` over the served file rewrites it where it stands. So a file is known by its version
(device, inode, size and modification time), and is opened only once that version has held for SETTLE_S: a copy
in progress keeps changing it. A version that cannot be opened (not a catalogue, another encoder's) is tried once;
the server keeps the one it has, and says why in its log and in the note on each plan; the same file, changed
again (a copy that went on), is another version and is tried again. A file rewritten in place is said so in one
line: it works once whole, but publish by renaming a new file into place."""

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

log = logging.getLogger("tender.server")
T = TypeVar("T")
Identity = tuple[int, int, int, int]  # device, inode, size, modification time (ns)
SETTLE_S = 1.0  # a new version is opened once it has not changed for this long


def file_version(path: Path | str) -> Identity | None:
    """The version of the file now at `path` (device, inode, size, mtime in ns), None if there is none."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


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
        self.failed: tuple[Identity, str] | None = None  # the last new version that could not be opened, and why
        self._seen: tuple[Identity, float] | None = None  # a new version, and since when it has held
        self._told_in_place: Identity | None = None

    def poll(self) -> tuple[Identity, T] | None:
        """(identity, loaded) of a newly published catalogue, once, when it is ready to switch to; else None, having
        started to load one where the path names a new version that has settled."""
        with self._lock:
            if self._ready is not None:
                ready, self._ready = self._ready, None
                self.identity = ready[0]
                return ready
        self._load_if_settled()
        return None

    def _load_if_settled(self) -> None:
        now = file_version(self.path)
        with self._lock:
            stale = now is not None and now != self.identity
            if not stale or self._loading is not None or self._ready is not None:
                return
            if self.failed is not None and self.failed[0] == now:
                return
            assert now is not None
            self._say_if_in_place(now)
            if self._seen is None or self._seen[0] != now:
                self._seen = (now, time.monotonic())  # new, or still changing: wait for it to settle
                return
            if time.monotonic() - self._seen[1] >= SETTLE_S:
                self._loading = threading.Thread(
                    target=self._open, args=(now,), name="tender-catalogue-publication", daemon=True
                )
                self._loading.start()

    def pending(self) -> bool:
        """Whether the path names another file than the one served (being opened, or that could not be)."""
        now = file_version(self.path)
        return now is not None and now != self.identity

    def _say_if_in_place(self, now: Identity) -> None:
        if self.identity is not None and now[:2] == self.identity[:2] and self._told_in_place != now:
            self._told_in_place = now
            log.warning(
                "The catalogue at %s was rewritten in place (cp over the served file): a server may read it half-"
                "written. Publish a catalogue by renaming a new file into place (tender catalog build does).",
                self.path,
            )

    def wait(self, timeout: float | None = None, settle: bool = True) -> None:
        """Until the new version at the path, if any, is loaded (or has failed), having let it settle; with
        `settle=False`, only until a load already under way ends (a server closing)."""
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        while True:
            if settle:
                self._load_if_settled()
            loading = self._loading
            if loading is not None:
                loading.join(max(0.0, deadline - time.monotonic()))
                return
            now = file_version(self.path)
            done = self._ready is not None or not self.pending() or (self.failed is not None and self.failed[0] == now)
            if not settle or done or time.monotonic() >= deadline:
                return
            time.sleep(0.05)

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
