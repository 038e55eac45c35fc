"""Starts an MCP server for Tender and, when it ends, writes its exit status to stderr.

The SDK's stdio client owns the server's process and never tells how it ended; a server that quit at once was
reported as "Connection closed". Tender runs each stdio server through this script (by its path, so that
nothing of Tender is imported here), which hands the server its own stdin and stdout and reports how it ended on
the stderr Tender reads. Usage: python launcher.py COMMAND [ARG...]"""

import os
import signal
import subprocess
import sys

MARK = "[tender launcher]"


def _limited() -> None:
    """The memory a server may write to, where TENDER_LAUNCH_LIMIT_AS names it (a harvest's bound): its data
    limit, not its address space, which node reserves by the gigabyte for WebAssembly without using it."""
    limit = os.environ.get("TENDER_LAUNCH_LIMIT_AS", "")
    if limit.isdigit():
        import resource

        resource.setrlimit(resource.RLIMIT_DATA, (int(limit), int(limit)))


def _die_with_parent() -> None:
    """On Linux, this launcher is sent SIGTERM when Tender dies (killed, even with -9), so that it stops its server;
    and it adopts what the server leaves behind (a subreaper), so that a daemon that left the server's process group
    with setsid (a harvested server's did) is still its own to stop."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        libc.prctl(36, 1)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _adopted() -> list[int]:
    """This launcher's living children (on Linux, by /proc): once its server ended, what the server left behind."""
    me, found = str(os.getpid()), []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                state, parent = stat.read().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if parent == me and state != "Z":
            found.append(int(entry.name))
    return found


def _stop_adopted() -> None:
    """Kill what the server left running outside its process group, each generation in turn (a killed daemon's own
    children are adopted next), and reap them."""
    for _ in range(20):
        left = _adopted()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not left:
            return


def _stop(server: subprocess.Popen) -> None:
    """The server and whatever it started (npx starts node, uvx starts python): its whole process group."""
    if os.name != "posix":
        server.terminate()
        return
    for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(server.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            server.wait(timeout=wait) if wait else None
        except subprocess.TimeoutExpired:
            continue
        if wait:
            return


def main(argv: list[str]) -> int:
    posix = os.name == "posix"
    if posix:
        _die_with_parent()
    try:
        # Its own process group, so that stopping it stops what it started too (npx -> node).
        server = subprocess.Popen(argv, preexec_fn=_limited if posix else None, start_new_session=posix)
    except FileNotFoundError:
        print(f"\n{MARK} no such command: {argv[0]}", file=sys.stderr, flush=True)
        return 127
    except OSError as error:
        print(f"\n{MARK} cannot start {argv[0]}: {error.strerror or error}", file=sys.stderr, flush=True)
        return 126

    def stopped(signum, frame) -> None:
        _stop(server)
        sys.exit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), stopped)
    try:
        code = server.wait()
    except KeyboardInterrupt:
        _stop(server)
        code = server.wait()
    finally:
        if posix:
            try:
                os.killpg(server.pid, signal.SIGKILL)  # what it left running when it ended
            except (ProcessLookupError, PermissionError):
                pass
            _stop_adopted()
    print(f"\n{MARK} exit status {code}", file=sys.stderr, flush=True)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
