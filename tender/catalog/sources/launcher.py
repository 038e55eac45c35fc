"""Starts an MCP server for Tender and, when it ends, writes its exit status to stderr.

The SDK's stdio client owns the server's process and never tells how it ended; a server that quit at once was
reported as "Connection closed". Tender runs each stdio server through this script (by its path, so that
nothing of Tender is imported here), which hands the server its own stdin and stdout and reports how it ended on
the stderr Tender reads. Usage: python launcher.py COMMAND [ARG...]"""

import os
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


def main(argv: list[str]) -> int:
    try:
        server = subprocess.Popen(argv, preexec_fn=_limited if os.name == "posix" else None)
    except FileNotFoundError:
        print(f"\n{MARK} no such command: {argv[0]}", file=sys.stderr, flush=True)
        return 127
    except OSError as error:
        print(f"\n{MARK} cannot start {argv[0]}: {error.strerror or error}", file=sys.stderr, flush=True)
        return 126
    try:
        code = server.wait()
    except KeyboardInterrupt:
        server.terminate()
        code = server.wait()
    print(f"\n{MARK} exit status {code}", file=sys.stderr, flush=True)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
