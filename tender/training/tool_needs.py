"""MCP servers' tools as a kind of tool data: a need written for each tool by the local language model.

No public set pairs requests with MCP servers' tools, and the matcher trained on seven other kinds lost on them
(docs/matcher.md: the MCP suite with needs stated, -0.052). The toolsdk registry lists 8,010 tools of the servers
it started, with their own descriptions; for a sample of them the local model (Qwen2.5-Coder-1.5B, the request
reader's) writes what a user would ask an assistant that the tool serves, without its name. The set is written
like a tool-retrieval set (tools.jsonl, queries.jsonl, split by server: a server's tools are in one part) and read
as the kind `mcp-tools` (evaluation/kinds.py).

Kept apart from what judges it: no tool of a server the MCP suite lists (its 52 servers, matched by package and by
description), no judged request anywhere. Generated once (about a second a tool on 2 cores), then read.

    python -m tender.training.tool_needs --out FOLDER [--tools 1000]"""

import argparse
import hashlib
import json
import random
import re
import time
from pathlib import Path

from tender.evaluation.catalogues import MCP_LISTING
from tender.evaluation.datasets import Paths

SET = "mcp-tools"
PER_SERVER = 2  # at most this many tools of one server, so that the sample spans many servers

INSTRUCTIONS = (
    "You write what a person asks an AI assistant, in their own words, that one tool of an MCP server would "
    "serve. One request of 5 to 15 words, about their own task or data. Never the tool's name, the server's name "
    "or the word 'tool'; no code, no quotes."
)
EXAMPLES = [
    (
        "slack",
        "post_message",
        "Post a message to a channel in the Slack workspace.",
        "tell the release channel that the build is out",
    ),
    (
        "postgres",
        "query",
        "Run a read-only SQL query against the database.",
        "how many people signed up last week in our database?",
    ),
    (
        "google-maps",
        "maps_directions",
        "Get directions between two places by car, on foot or by transit.",
        "how do I walk from the train station to the museum?",
    ),
]
README = (
    "Needs written by the local model (Qwen2.5-Coder-1.5B-Instruct) for tools the toolsdk MCP registry lists "
    "(MIT, Copyright (c) toolsdk-ai; each record is its publisher's): `python -m tender.training.tool_needs`. "
    "Split by server. Not for redistribution beyond the registry's licence.\n"
)
SCHEMA = {
    "type": "object",
    "properties": {"request": {"type": "string", "maxLength": 160}},
    "required": ["request"],
    "additionalProperties": False,
}


def english(text: str) -> bool:
    return bool(text) and sum(c.isascii() for c in text) / len(text) > 0.95


def judged_servers() -> tuple[set[str], set[str]]:
    """The MCP suite's servers: their packages (from the command that starts each) and their tools' descriptions."""
    servers = json.loads(MCP_LISTING.read_text(encoding="utf-8"))["servers"]
    packages = {word.split("@")[0].lower() for s in servers for word in str(s.get("command", "")).split()[1:]}
    packages |= {str(s["name"]).lower() for s in servers}
    described = {str(t.get("description", "")).strip().lower() for s in servers for t in s.get("tools", [])}
    return packages - {"-y", "--from", "run", ""}, described - {""}


def candidates(paths: Paths, rng: random.Random) -> list[dict]:
    """toolsdk's listed tools in English, none of a server the MCP suite lists, at most PER_SERVER a server."""
    packages, described = judged_servers()
    out = []
    for line in paths.need("toolsdk-mcp-registry", "servers.jsonl").open(encoding="utf-8"):
        record = json.loads(line)
        key = str(record.get("key", ""))
        package = str((record.get("record") or {}).get("packageName") or key).lower()
        if key.lower() in packages or package in packages or package.rsplit("/", 1)[-1] in packages:
            continue
        tools = [
            t
            for t in (record.get("tools") or {}).values()
            if len(str(t.get("description") or "")) >= 25
            and english(str(t.get("description")))
            and str(t.get("description")).strip().lower() not in described
        ]
        rng.shuffle(tools)
        title = str((record.get("record") or {}).get("name") or key)
        out += [
            {"server": key, "title": title, "name": t["name"], "description": t["description"]}
            for t in tools[:PER_SERVER]
        ]
    return out


def part_of(server: str) -> str:
    """A server's part, by a hash of its key: 80% train, 10% dev, 10% test (its tools together)."""
    bucket = int(hashlib.sha256(server.encode()).hexdigest(), 16) % 10
    return "test" if bucket == 0 else "dev" if bucket == 1 else "train"


def messages(tool: dict) -> list[dict[str, str]]:
    shown = [{"role": "system", "content": INSTRUCTIONS}]
    for server, name, description, request in EXAMPLES:
        shown += [
            {"role": "user", "content": f"Server: {server}\nTool: {name}\nDescription: {description}"},
            {"role": "assistant", "content": json.dumps({"request": request})},
        ]
    description = " ".join(str(tool["description"]).split())[:600]
    return shown + [
        {"role": "user", "content": f"Server: {tool['title']}\nTool: {tool['name']}\nDescription: {description}"}
    ]


def usable(request: str, tool: dict) -> bool:
    """A request that does not give the tool away by its name, nor say nothing."""
    words = request.lower()
    name = str(tool["name"]).lower()
    spaced = re.sub(r"[_\-.]+", " ", name)
    return 4 <= len(words.split()) <= 25 and name not in words and (len(spaced.split()) < 2 or spaced not in words)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path, help="the set's folder (tools.jsonl, queries.jsonl)")
    parser.add_argument("--data", default="../shared/data", help="the shared data folder")
    parser.add_argument("--model", required=True, type=Path, help="the GGUF file of the local model")
    parser.add_argument("--tools", type=int, default=1000, help="how many tools to write a need for")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from tender.agents.local_model import load

    rng = random.Random(args.seed)
    pool = candidates(Paths(shared=Path(args.data)), rng)
    rng.shuffle(pool)
    model = load(args.model)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "README.md").write_text(README, encoding="utf-8")  # the notice, however far the run gets
    done = (
        {json.loads(line)["tools"][0] for line in (args.out / "queries.jsonl").open()}
        if (args.out / "queries.jsonl").is_file()
        else set()
    )
    started, written = time.monotonic(), len(done)
    with (
        (args.out / "tools.jsonl").open("a", encoding="utf-8") as tools,
        (args.out / "queries.jsonl").open("a", encoding="utf-8") as queries,
    ):
        for tool in pool:
            if written >= args.tools:
                break
            ident = f"{SET}:{tool['server']}/{tool['name']}"
            if ident in done:
                continue
            answer = model.generate(messages(tool), SCHEMA, max_tokens=48, deadline=time.monotonic() + 20)
            try:
                request = str(json.loads(answer.text)["request"]).strip()
            except (ValueError, KeyError, TypeError):
                continue
            if not usable(request, tool):
                continue
            tools.write(
                json.dumps(
                    {
                        "id": ident,
                        "name": tool["name"],
                        "description": tool["description"],
                        "provider": tool["title"],
                        "category": "MCP tool",
                    }
                )
                + "\n"
            )
            queries.write(
                json.dumps(
                    {
                        "id": f"q-{ident}",
                        "query": request,
                        "tools": [ident],
                        "split": part_of(tool["server"]),
                    }
                )
                + "\n"
            )
            tools.flush()
            queries.flush()
            written += 1
            if written % 50 == 0:
                print(f"{written} needs written, {time.monotonic() - started:.0f} s", flush=True)
    print(f"{written} needs in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
