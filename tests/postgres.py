"""A throwaway PostgreSQL cluster for the runs-store tests: initdb into a temporary folder, started by pg_ctl on a
Unix socket in that folder (no TCP port, nothing another process could collide with), stopped and removed after.

Used by the test fixtures (`postgres_url` in conftest.py) when TENDER_TEST_POSTGRES names no server, and by
.ci/run, which starts one for the whole suite:

    eval "$(.venv/bin/python -m tests.postgres start)"   # exports TENDER_TEST_POSTGRES and TENDER_TEST_POSTGRES_DIR
    .venv/bin/python -m tests.postgres stop "$TENDER_TEST_POSTGRES_DIR"

initdb refuses to run as root, so under root the cluster belongs to the `postgres` user (as Debian's packages
make it). Where it cannot start, `NoCluster` says why, and the tests skip with that reason."""

import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# Debian's PostgreSQL 15 (the CI image's); TENDER_TEST_PG_BIN names another folder of initdb and pg_ctl.
DEFAULT_BIN = Path("/usr/lib/postgresql/15/bin")
PORT = 5432  # the socket's name (.s.PGSQL.5432) in the cluster's own folder: no port is bound
USER = "tender"


class NoCluster(Exception):
    """PostgreSQL could not be started here; the message says why."""


@dataclass
class Cluster:
    folder: Path

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@/postgres?host={self.folder}&port={PORT}"


def binaries() -> Path:
    folder = Path(os.environ.get("TENDER_TEST_PG_BIN") or DEFAULT_BIN)
    if not (folder / "initdb").is_file() or not (folder / "pg_ctl").is_file():
        found = shutil.which("pg_ctl")
        if found and (Path(found).parent / "initdb").is_file():
            return Path(found).parent
        raise NoCluster(
            f"no initdb and pg_ctl in {folder} or on PATH (install postgresql-15, set TENDER_TEST_PG_BIN to their "
            "folder, or TENDER_TEST_POSTGRES to a server's URL)"
        )
    return folder


def _owner() -> pwd.struct_passwd | None:
    """Who owns the cluster: None for this user, the `postgres` user under root (initdb refuses root)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise NoCluster("running as root and there is no `postgres` user to own the cluster") from None


def _as_owner(command: list[str]) -> list[str]:
    if _owner() is None:
        return command
    runner = shutil.which("runuser") or shutil.which("su")
    if runner is None:
        raise NoCluster("running as root, with neither runuser nor su to run initdb as `postgres`")
    if runner.endswith("runuser"):
        return [runner, "-u", "postgres", "--", *command]
    return [runner, "postgres", "-s", "/bin/sh", "-c", shlex.join(command)]


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(_as_owner(command), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise NoCluster(f"{what} failed (exit {done.returncode}): {tail}")


def start() -> Cluster:
    """A new cluster, running, with a superuser `tender` that needs no password on its socket."""
    bin_dir = binaries()
    folder = Path(tempfile.mkdtemp(prefix="tender-pg-"))  # short: a socket's path is limited to about 100 bytes
    try:
        owner = _owner()
        if owner is not None:
            os.chown(folder, owner.pw_uid, owner.pw_gid)
        data = folder / "data"
        _run(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "-A", "trust", "--no-sync", "-E", "UTF8"],
            "initdb",
        )
        options = f"-k {folder} -p {PORT} -c listen_addresses='' -c fsync=off -c max_connections=200"
        _run(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(folder / "log"), "-o", options, "-w", "start"],
            "pg_ctl start",
        )
    except (NoCluster, OSError, subprocess.SubprocessError) as error:
        log = folder / "log"
        detail = f"; its log: {' '.join(log.read_text().split()[-30:])}" if log.is_file() else ""
        shutil.rmtree(folder, ignore_errors=True)
        raise NoCluster(f"{error}{detail}") from None
    return Cluster(folder)


def stop(folder: Path | str) -> None:
    """Stop the cluster in `folder` at once and remove it."""
    folder = Path(folder)
    try:
        _run([str(binaries() / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "-w", "stop"], "pg_ctl stop")
    except NoCluster:
        pass  # already stopped, or never started: the folder goes all the same
    shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["start"]:
        try:
            cluster = start()
        except NoCluster as error:
            print(f"PostgreSQL could not start: {error}", file=sys.stderr)
            return 1
        print(f"export TENDER_TEST_POSTGRES={shlex.quote(cluster.url)}")
        print(f"export TENDER_TEST_POSTGRES_DIR={shlex.quote(str(cluster.folder))}")
        return 0
    if argv[:1] == ["stop"] and len(argv) == 2:
        stop(argv[1])
        return 0
    print("usage: python -m tests.postgres start | stop FOLDER", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
