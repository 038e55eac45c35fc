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
    """On Linux, this launcher is sent SIGTERM when Tender dies (killed, even with -9), so that it stops its server."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


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
    print(f"\n{MARK} exit status {code}", file=sys.stderr, flush=True)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
