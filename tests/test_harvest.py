"""A harvest starts a catalogue's servers from their routes and records what each lists (issue: plans an assistant
can install). Here `npx` is a script on PATH that starts a small real MCP server (tests/mcp_servers/paged.py) and
the package registries' answers are given: what is tested is what Tender runs, with what, and what it keeps."""

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from tender.catalog import harvest as harvesting
from tender.catalog.harvest import PLACEHOLDER, Facts, Target, apply_harvest, harvest, read_harvest, targets
from tender.answers.install import verification
from tender.catalog.install import package
from tender.catalog.servers import Server, items_of, routes_of

PAGED = Path(__file__).resolve().parent / "mcp_servers" / "paged.py"
REPOSITORY = "https://github.com/example/shop-mcp"


@pytest.fixture
def fake_npx(tmp_path, monkeypatch):
    """`npx` that notes how it was called and with which environment, refuses to start without SHOP_API_KEY when
    asked to, and otherwise serves the paged shop server."""
    folder = tmp_path / "bin"
    folder.mkdir()
    calls = tmp_path / "calls.jsonl"
    script = folder / "npx"
    script.write_text(
        f"""#!{sys.executable}
import json, os, sys
with open({str(calls)!r}, "a") as out:
    out.write(json.dumps({{"args": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}}) + "\\n")
if "no-bin" in " ".join(sys.argv):  # a package with no program: what npx says of a library
    print("npm error could not determine executable to run", file=sys.stderr)
    sys.exit(1)
if "needs-key" in " ".join(sys.argv) and not os.environ.get("SHOP_API_KEY"):
    print("Error: SHOP_API_KEY is required but not set", file=sys.stderr)
    sys.exit(1)
os.execv({sys.executable!r}, [{sys.executable!r}, {str(PAGED)!r}])
"""
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("MY_SECRET_TOKEN", "hunter2")  # the caller's: a started server never sees it

    def facts(route, fetcher):
        if route.identifier == "unpublished":
            raise harvesting.NotFound(route.identifier, "404")
        if route.identifier == "someone-elses":
            return Facts(frozenset({"1.0.0"}), "1.0.0", ("https://github.com/another/project",))
        return Facts(frozenset({"2.0.0", "2.1.0"}), "2.1.0", (f"git+{REPOSITORY}.git",))

    monkeypatch.setattr(harvesting, "package_facts", facts)
    return lambda: [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []


def shop(key: str, version: str = "", env=()) -> Server:
    return Server(
        ref=f"toolsdk:{key}",
        namespace=key,
        title="Shop",
        description="Invoices and refunds for a shop",
        source="fixture",
        repository=REPOSITORY,
        routes=[package("npm", key, version, env=list(env))],
    )


def test_a_server_is_started_with_no_secret_in_a_throwaway_folder_and_its_tools_kept(fake_npx, tmp_path):
    out = tmp_path / "harvest.jsonl"
    found = targets(items_of(shop("shop-mcp", "2.0.0")))
    assert harvest(found, out, timeout=60, jobs=1) == 1
    [record] = read_harvest(out)
    assert record.started and [t.name for t in record.tools] == [
        "send_invoice",
        "refund_payment",
        "list_customers",
        "create_coupon",
        "ship_order",
    ]
    assert record.version == "2.0.0"  # the source's pin, which the registry has
    [call] = fake_npx()
    assert call["args"] == ["-y", "shop-mcp@2.0.0"]
    assert "MY_SECRET_TOKEN" not in call["env"] and call["env"]["HOME"] == call["cwd"] != str(Path.home())
    assert harvest(found, out, timeout=60, jobs=1) == 0  # a harvest resumes: what is in the file is not run again


def test_a_pin_the_registry_lacks_is_run_at_its_latest_and_the_route_pinned_to_what_ran(fake_npx, tmp_path):
    out = tmp_path / "harvest.jsonl"
    items = items_of(shop("shop-mcp", "0.0.46"))
    harvest(targets(items), out, timeout=60, jobs=1)
    [record] = read_harvest(out)
    assert record.started and record.version == "2.1.0" and "pins 0.0.46" in record.error
    server, *tools = apply_harvest(items, [record])
    assert [r.args for r in routes_of(server.details)] == [["-y", "shop-mcp@2.1.0"]]
    assert server.details["harvest"]["started"] and server.details["tools_from"].startswith("it was started here on")
    assert [t.tool for t in tools][:2] == ["send_invoice", "refund_payment"]
    assert all(t.details["of_server"] == server.provider for t in tools)


def test_a_server_that_asks_for_a_setting_gets_a_placeholder_never_a_secret(fake_npx, tmp_path):
    out = tmp_path / "harvest.jsonl"
    harvest(targets(items_of(shop("needs-key"))), out, timeout=60, jobs=1)
    [record] = read_harvest(out)
    assert record.started and record.asked_for == ["SHOP_API_KEY"]
    first, second = fake_npx()
    assert "SHOP_API_KEY" not in first["env"] and second["env"]["SHOP_API_KEY"] == PLACEHOLDER


def test_a_package_of_another_project_is_never_run_and_its_route_dropped(fake_npx, tmp_path):
    out = tmp_path / "harvest.jsonl"
    items = items_of(shop("someone-elses", "1.0.0"))
    harvest(targets(items), out, timeout=60, jobs=1)
    [record] = read_harvest(out)
    assert not record.started and record.not_its_package and "another project" in record.error
    assert fake_npx() == []
    [server] = apply_harvest(items, [record])
    assert routes_of(server.details) == [] and "another project" in server.details["install_refused"][-1]


def test_a_package_with_no_program_to_run_loses_its_route_and_the_plan_says_it_did_not_start(fake_npx, tmp_path):
    out = tmp_path / "harvest.jsonl"
    items = items_of(shop("no-bin", "2.0.0"))
    harvest(targets(items), out, timeout=60, jobs=1)
    [record] = read_harvest(out)
    assert not record.started and record.nothing_to_run
    [server] = apply_harvest(items, [record])
    assert routes_of(server.details) == []  # no install line that cannot start
    assert "holds no program to run" in server.details["install_refused"][-1]
    assert verification(server) == f"did not start when tried on {record.date}"


def test_a_package_its_registry_does_not_give_is_never_run_and_the_plan_says_it_was_not_started(fake_npx, tmp_path):
    out = tmp_path / "harvest.jsonl"
    items = items_of(shop("unpublished", "1.0.0"))
    harvest(targets(items), out, timeout=60, jobs=1)
    [record] = read_harvest(out)
    assert not record.started and fake_npx() == []
    [server] = apply_harvest(items, [record])
    assert routes_of(server.details)  # a registry's silence here is no fact about the package: its route stays
    assert verification(server) == f"not started here: its package could not be fetched when tried on {record.date}"


def test_a_server_that_never_answers_costs_its_timeout(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "npx").write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    (folder / "npx").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(harvesting, "package_facts", lambda r, f: Facts(frozenset({"1.0.0"}), "1.0.0", ()))
    out = tmp_path / "harvest.jsonl"
    harvest([Target(refs=["toolsdk:slow"], route=package("npm", "slow", "1.0.0"))], out, timeout=1, jobs=1)
    [record] = read_harvest(out)
    assert not record.started and "within 1 s" in record.error


def npx_starting_a_sleeper(tmp_path, monkeypatch, own_session: bool) -> Path:
    """An `npx` on PATH that starts a sleeping child (in a session of its own where asked), writes its pid to the
    file returned, and becomes a paged MCP server."""
    folder = tmp_path / "bin"
    folder.mkdir()
    pids = tmp_path / "pids"
    (folder / "npx").write_text(
        f"""#!{sys.executable}
import os, subprocess, sys
child = subprocess.Popen([{sys.executable!r}, "-c", "import time; time.sleep(300)"], start_new_session={own_session})
open({str(pids)!r}, "w").write(str(child.pid))
os.execv({sys.executable!r}, [{sys.executable!r}, {str(PAGED)!r}])
"""
    )
    (folder / "npx").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(harvesting, "package_facts", lambda r, f: Facts(frozenset({"1.0.0"}), "1.0.0", ()))
    return pids


def ended_or_killed(pid: int) -> bool:
    """Whether the process ends within 5 s; one that does not is killed (the test leaves nothing running)."""
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    os.kill(pid, 9)
    return False


def test_a_server_and_what_it_started_are_stopped_when_its_listing_ends(tmp_path, monkeypatch):
    """npx starts node, uvx starts python: the harvest stops the whole process group, leaving nothing running."""
    pids = npx_starting_a_sleeper(tmp_path, monkeypatch, own_session=False)
    out = tmp_path / "harvest.jsonl"
    harvest([Target(refs=["toolsdk:spawner"], route=package("npm", "spawner", "1.0.0"))], out, timeout=60, jobs=1)
    assert read_harvest(out)[0].started
    # the group is signalled as the listing ends; the child goes within moments
    assert ended_or_killed(int(pids.read_text())), "the server's child was left running"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="adoption of what a server leaves is read from /proc")
def test_a_daemon_that_left_the_servers_process_group_is_stopped_too(tmp_path, monkeypatch):
    """A server may start a daemon in a session of its own (setsid), which its process group's signal misses."""
    pids = npx_starting_a_sleeper(tmp_path, monkeypatch, own_session=True)
    out = tmp_path / "harvest.jsonl"
    harvest([Target(refs=["toolsdk:daemon"], route=package("npm", "daemon", "1.0.0"))], out, timeout=60, jobs=1)
    assert read_harvest(out)[0].started
    assert ended_or_killed(int(pids.read_text())), "the daemon the server started in its own session was left running"
