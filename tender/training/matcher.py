"""Train the matcher: the stock all-MiniLM-L6-v2 adapted, by a low-rank delta, to the one judgement every plan rests
on (does this item serve this need?) on tool data of many kinds (evaluation/kinds.py).

What it learns from, per set of the kinds asked for (train parts only: no dev or test request, and no item that is
gold for a dev or test request, ever reaches it, not even as a negative):

- whole requests paired with each gold item, as the catalogue embeds the item (`Api.text()`); ProgrammableWeb's
  half with the API names masked, as a user who does not know them writes;
- need-like queries: a composite request's parts, as the embedded decomposition reads them, each paired with the
  gold item it is nearest to where that item is nearest to it too (both ways, by the stock encoder), so that a need
  is matched the way the manager asks for it;
- one mined hard negative per pair: a train item of the same set that the stock encoder ranks high for the query,
  not gold, and scoring below 95% of the gold item (positive-aware mining: a near-copy of the gold item is more
  likely an unlabelled right answer than a wrong one).

Batches are drawn from one set at a time, so the other items of a batch are of the same kind (harder negatives
than another kind's), never two pairs of one item or one request; an item that is gold for a request is never its
negative. The loss is the contrastive loss in both directions over the batch's items and hard negatives.

The delta (LoRA on the transformer's linear layers, the stock weights frozen) applies to the stock ONNX graph at
load time, so the matcher serves without torch. A run keeps a checkpoint and resumes from it.

    tender train encoder --kinds all --out FOLDER     (python -m tender.training.matcher)
"""

import argparse
import hashlib
import json
import math
import random
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from tender.agents.text import mask_names
from tender.catalog.encoders import DELTA_FILE, DELTA_RECORD, stock_torch_dir
from tender.evaluation.datasets import Paths
from tender.evaluation.kinds import KINDS, NAMED_ONLY, ToolSet, kind_of, read_set, sets_of

from .encoder import LORA_TARGETS, contrastive_step, warm_then_decay

PER_ITEM = 30  # at most this many pairs of one item, so that a popular one does not drown the long tail
SCALE = 20.0  # the similarities' scale in the loss (a temperature of 0.05)
POSITIVE_AWARE = 0.95  # a negative scores below this share of the gold item's score


@dataclass(frozen=True)
class Pair:
    query: str
    item: str  # the gold item's text, as the catalogue embeds it
    key: str  # the item, across sets: "set:id"
    source: str  # the set
    gold: tuple[str, ...]  # keys of every item that serves the query: none of them is its negative
    need: bool = False  # a part of a request rather than the whole request
    negative: str = ""  # a mined hard negative's text, "" where none was found
    negative_key: str = ""


def whole_request_pairs(tool_set: ToolSet, rng: random.Random, per_item: int = PER_ITEM) -> list[Pair]:
    """Each train request with each of its gold items; at most `per_item` pairs of an item; a maskable set's
    requests half masked."""
    names = [a.name for a in tool_set.items]
    queries = tool_set.part("train")
    rng.shuffle(queries)
    used: dict[int, int] = {}
    out = []
    for query in queries:
        gold = tuple(f"{tool_set.name}:{i}" for i in query.gold)
        text = query.text
        if tool_set.maskable and rng.random() < 0.5:
            text = mask_names(text, names) or text
        for item in query.gold:
            if used.get(item, 0) >= per_item:
                continue
            used[item] = used.get(item, 0) + 1
            out.append(Pair(text, tool_set.by_id[item].text(), f"{tool_set.name}:{item}", tool_set.name, gold))
    return out


def need_pairs(tool_set: ToolSet, embedder, rng: random.Random, limit: int) -> list[Pair]:
    """Parts of the train part's composite requests (two or more gold items), each with the gold item it and that
    item choose each other by (the stock encoder's cosine); at most `limit`."""
    from tender.agents.decomposition import read

    composite = [q for q in tool_set.part("train") if len(q.gold) > 1]
    rng.shuffle(composite)
    out: list[Pair] = []
    for query in composite:
        if len(out) >= limit:
            break
        needs = [n for n in dict.fromkeys(read(query.text).needs) if n != query.text and len(n.split()) >= 3]
        if len(needs) < 2:
            continue
        items = [tool_set.by_id[i] for i in query.gold]
        scores = embedder.embed(needs, role="query") @ embedder.embed([a.text() for a in items], role="document").T
        gold = tuple(f"{tool_set.name}:{i}" for i in query.gold)
        for n, need in enumerate(needs):
            best = int(scores[n].argmax())
            if int(scores[:, best].argmax()) == n:
                item = items[best]
                out.append(Pair(need, item.text(), f"{tool_set.name}:{item.id}", tool_set.name, gold, need=True))
    return out[:limit]


def mine_negatives(tool_set: ToolSet, pairs: list[Pair], embedder, rng: random.Random, depth: int = 10) -> list[Pair]:
    """Each pair with one hard negative: drawn from the first `depth` train items the stock encoder ranks for the
    query that are not gold, not a copy of the gold item's text, and score below POSITIVE_AWARE of it."""
    pool = sorted(tool_set.train_items)
    if len(pool) < 2 or not pairs:
        return pairs
    texts = [tool_set.by_id[i].text() for i in pool]
    items = embedder.embed(texts, role="document")
    queries = embedder.embed([p.query for p in pairs], role="query")
    row = {f"{tool_set.name}:{i}": n for n, i in enumerate(pool)}
    out = []
    for pair, vector in zip(pairs, queries):
        scores = items @ vector
        positive = scores[row[pair.key]]  # every pair's item is gold for a train request, so in the pool
        gold = set(pair.gold)
        chosen = []
        for n in np.argsort(-scores):
            key = f"{tool_set.name}:{pool[n]}"
            if key in gold or texts[n] == pair.item:
                continue
            if scores[n] < POSITIVE_AWARE * positive:
                chosen.append(n)
            if len(chosen) >= depth:
                break
        if chosen:
            n = rng.choice(chosen)
            pair = Pair(**{**asdict(pair), "negative": texts[n], "negative_key": f"{tool_set.name}:{pool[n]}"})
        out.append(pair)
    return out


def set_pairs(paths: Paths, name: str, per_set: int, embedder, seed: int = 0, needs: float = 0.25) -> list[Pair]:
    """One set's training pairs: at most `per_set`, a share `needs` of them need-like where the set has composite
    requests, each with a hard negative. Drawn with the set's own seed, so that a set gives the same pairs whatever
    other sets are trained beside it (a leave-one-kind-out run differs from the all-kinds one only by the kind)."""
    rng = random.Random(f"{seed}:{name}")
    tool_set = read_set(paths, name)
    whole = whole_request_pairs(tool_set, rng)
    parts = need_pairs(tool_set, embedder, rng, int(per_set * needs))
    rng.shuffle(whole)
    return mine_negatives(tool_set, whole[: per_set - len(parts)] + parts, embedder, rng)


def described(pairs: list[Pair], kind: str) -> dict:
    return {
        "kind": kind,
        "part": "train",
        "requests": len({p.query for p in pairs if not p.need}),
        "pairs": len(pairs),
        "need_pairs": sum(p.need for p in pairs),
        "items": len({p.key for p in pairs}),
        "with_negative": sum(bool(p.negative) for p in pairs),
    }


def mixture(
    paths: Paths,
    kinds: list[str],
    per_set: int,
    embedder,
    seed: int = 0,
    needs: float = 0.25,
    cache: Path | None = None,
    progress: bool = True,
) -> tuple[list[Pair], dict]:
    """The training pairs of the kinds' sets (set_pairs), kept in `cache` (one file per set and draw) for the
    next run; and a record of what each set gave."""
    pairs: list[Pair] = []
    seen: dict[str, dict] = {}
    for name in sets_of(kinds):
        file = cache / f"pairs-{name}-{per_set}-{needs}-{seed}.jsonl" if cache else None
        if file is not None and file.is_file():
            chosen = [Pair(**{**row, "gold": tuple(row["gold"])}) for row in map(json.loads, file.open())]
        else:
            if embedder is None:
                from tender.catalog import get_embedder

                embedder = get_embedder(None, threads=None, runtime="onnx")
            chosen = set_pairs(paths, name, per_set, embedder, seed, needs)
            if file is not None:
                file.parent.mkdir(parents=True, exist_ok=True)
                partial = file.with_suffix(".partial")
                partial.write_text("".join(json.dumps(asdict(p)) + "\n" for p in chosen), encoding="utf-8")
                partial.replace(file)
        pairs += chosen
        seen[name] = described(chosen, kind_of(name))
        if progress:
            print(f"{name}: {seen[name]}", file=sys.stderr, flush=True)
    return pairs, seen


def batches(pairs: list[Pair], size: int, rng: random.Random) -> list[list[int]]:
    """Indices of pairs, in batches of one set each, no item and no request twice in a batch; the batches of all
    sets shuffled together."""
    by_source: dict[str, list[int]] = {}
    for n, pair in enumerate(pairs):
        by_source.setdefault(pair.source, []).append(n)
    out = []
    for source in sorted(by_source):
        order = by_source[source][:]
        rng.shuffle(order)
        while order:
            batch: list[int] = []
            items: set[str] = set()
            queries: set[str] = set()
            rest = []
            for n in order:
                pair = pairs[n]
                taken = {pair.key, pair.negative_key} - {""}
                if len(batch) < size and not (taken & items) and pair.query not in queries:
                    batch.append(n)
                    items |= taken
                    queries.add(pair.query)
                else:
                    rest.append(n)
            order = rest
            if len(batch) > 1:  # a batch of one has no negative but its own mined one
                out.append(batch)
    rng.shuffle(out)
    return out


def loss_mask(pairs: list[Pair]) -> np.ndarray:
    """For the batch's queries (rows) against its items then its hard negatives (columns): True where the column is
    an item that serves the row's request (its own item, or another gold item of the request), other than the
    row's own item: left out of the loss, neither right nor wrong."""
    columns = [p.key for p in pairs] + [p.negative_key for p in pairs if p.negative]
    mask = np.zeros((len(pairs), len(columns)), dtype=bool)
    for r, pair in enumerate(pairs):
        gold = set(pair.gold)
        for c, key in enumerate(columns):
            if c != r and key in gold:
                mask[r, c] = True
    return mask


class LowRank:
    """Builds the LoRA wrappers; a class so that torch is imported only when training."""

    @staticmethod
    def wrap(model, rank: int, layers: list[int]):
        import torch

        scale = 2.0  # alpha / rank with alpha = 2 * rank, as tender-minilm

        class Wrapped(torch.nn.Module):
            def __init__(self, base: torch.nn.Linear):
                super().__init__()
                self.base = base
                generator = torch.Generator().manual_seed(len(adapted))
                self.down = torch.nn.Parameter(
                    torch.randn(rank, base.in_features, generator=generator) / math.sqrt(base.in_features)
                )
                self.up = torch.nn.Parameter(torch.zeros(base.out_features, rank))  # starts as the stock model
                self.scale = scale

            def forward(self, x):
                return self.base(x) + (x @ self.down.T @ self.up.T) * self.scale

        for parameter in model.parameters():
            parameter.requires_grad_(False)
        adapted: dict[str, Wrapped] = {}
        encoder_layers = model[0].auto_model.encoder.layer
        for index in layers:
            for path, onnx_name in LORA_TARGETS.items():
                parent_path, _, attribute = path.rpartition(".")
                parent = encoder_layers[index].get_submodule(parent_path)
                wrapper = Wrapped(getattr(parent, attribute))
                setattr(parent, attribute, wrapper)
                adapted[f"model.layers.{index}.{onnx_name}.MatMul.weight"] = wrapper
        return adapted


@dataclass
class Settings:
    rank: int = 16
    layers: int = 6  # the top this many transformer layers are adapted (all six by default)
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 1e-3
    max_seq_length: int = 128
    per_set: int = 800  # pairs drawn a set: what the shipped tender-matcher was trained on
    needs: float = 0.25
    seed: int = 0


def config_hash(kinds: list[str], settings: Settings) -> str:
    return hashlib.sha256(json.dumps([sorted(kinds), asdict(settings)], sort_keys=True).encode()).hexdigest()[:12]


def train(
    pairs: list[Pair], out: Path, settings: Settings, tag: str, progress: bool = True, checkpoint_every: int = 20
) -> dict:
    """Fit the delta on the pairs, resuming from `out/checkpoint.pt` where a run of the same `tag` left one; write
    `out/delta.npz`. Returns what the fit did (steps, losses, seconds)."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(settings.seed)
    torch.set_num_threads(2)
    model = SentenceTransformer(str(stock_torch_dir()), device="cpu", local_files_only=True)
    model.max_seq_length = settings.max_seq_length
    layers = list(range(6 - settings.layers, 6))
    adapted = LowRank.wrap(model, settings.rank, layers)
    parameters = [p for w in adapted.values() for p in (w.down, w.up)]
    optimiser = torch.optim.AdamW(parameters, lr=settings.learning_rate, weight_decay=0.0)
    rng = random.Random(settings.seed)
    plan = [b for _ in range(settings.epochs) for b in batches(pairs, settings.batch_size, rng)]
    steps = len(plan)
    schedule = warm_then_decay(optimiser, steps)
    out.mkdir(parents=True, exist_ok=True)
    checkpoint = out / "checkpoint.pt"
    done, losses, seconds = 0, [], 0.0
    if checkpoint.is_file():
        state = torch.load(checkpoint, weights_only=False)
        if state["tag"] == tag:
            for name, wrapper in adapted.items():
                wrapper.down.data.copy_(state["delta"][name][0])
                wrapper.up.data.copy_(state["delta"][name][1])
            optimiser.load_state_dict(state["optimiser"])
            schedule.load_state_dict(state["schedule"])
            done, losses, seconds = state["done"], state["losses"], state["seconds"]
            print(f"resumed at step {done} of {steps}", file=sys.stderr)

    def encode(texts):
        features = model.tokenize(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    def save():
        state = {
            "tag": tag,
            "delta": {n: (w.down.detach().clone(), w.up.detach().clone()) for n, w in adapted.items()},
            "optimiser": optimiser.state_dict(),
            "schedule": schedule.state_dict(),
            "done": done,
            "losses": losses,
            "seconds": seconds,
        }
        partial = checkpoint.with_suffix(".partial")
        torch.save(state, partial)
        partial.replace(checkpoint)

    model.train()
    while done < steps:
        started = time.perf_counter()
        batch = [pairs[n] for n in plan[done]]
        negatives = [p.negative for p in batch if p.negative]
        queries = encode([p.query for p in batch])
        items = encode([p.item for p in batch] + negatives)
        scores = queries @ items.T * SCALE
        scores = scores.masked_fill(torch.from_numpy(loss_mask(batch)), float("-inf"))
        # Items to requests: an item's row over the batch's requests, the requests it serves left out but its own.
        backward = scores[:, : len(batch)].T
        losses.append(round(contrastive_step(scores, backward, optimiser, schedule), 4))
        done += 1
        seconds += time.perf_counter() - started
        if progress and (done % 5 == 0 or done == steps):
            print(
                f"step {done}/{steps} loss {np.mean(losses[-20:]):.3f} {seconds / done:.1f} s/step "
                f"({len(batch)} pairs, {len(negatives)} negatives)",
                file=sys.stderr,
                flush=True,
            )
        if done % checkpoint_every == 0 and done < steps:
            save()
    model.eval()
    # Stored as the ONNX graph multiplies: x @ W with W input x output, so the delta is (down.T * scale) @ up.T.
    arrays = {}
    for name, wrapper in adapted.items():
        arrays[f"{name}|in"] = (wrapper.down.detach().T * wrapper.scale).numpy().astype(np.float16)
        arrays[f"{name}|out"] = wrapper.up.detach().T.numpy().astype(np.float16)
    partial = out / (DELTA_FILE + ".partial.npz")
    np.savez_compressed(partial, **arrays)
    partial.replace(out / DELTA_FILE)
    checkpoint.unlink(missing_ok=True)
    return {
        "steps": steps,
        "seconds": round(seconds),
        "loss_first_20": float(np.mean(losses[:20])),
        "loss_last_20": float(np.mean(losses[-20:])),
    }


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tender train encoder --kinds", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write delta.npz and delta.json into")
    parser.add_argument(
        "--kinds",
        default="all",
        help=f"comma-separated; all is {', '.join(KINDS)}; add {', '.join(NAMED_ONLY)} by name (all,mcp-tools)",
    )
    parser.add_argument("--leave-out", default="", help="comma-separated kinds left out of --kinds")
    parser.add_argument("--data", type=Path, required=True, help="the shared data folder (../shared/data)")
    defaults = Settings()
    for name, value in asdict(defaults).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    parser.add_argument("--pairs", type=Path, help="folder keeping each set's pairs, for other runs (default: --out)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    kinds = [k for word in args.kinds.split(",") for k in (list(KINDS) if word == "all" else [word])]
    kinds = [k for k in kinds if k not in set(filter(None, args.leave_out.split(",")))]
    settings = Settings(**{name: getattr(args, name) for name in asdict(defaults)})
    tag = config_hash(kinds, settings)
    started = time.perf_counter()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    paths = Paths(args.data)
    cache = args.pairs or out
    pairs, seen = mixture(paths, kinds, settings.per_set, None, settings.seed, settings.needs, cache, not args.quiet)
    print(f"{len(pairs)} pairs from {len(seen)} sets ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    fit = train(pairs, out, settings, tag, progress=not args.quiet)
    record = {
        "component": f"{out.name}: a low-rank delta (rank {settings.rank}, top {settings.layers} layers) over "
        "all-MiniLM-L6-v2, trained by tender train encoder --kinds (tender/training/matcher.py)",
        "fitted": f"{time.strftime('%Y-%m-%d')}, commit {commit()}",
        "fitted_on": {
            "kinds": kinds,
            "left_out": [k for k in KINDS if k not in kinds],
            "sets": seen,
            "parts": "train parts only: tool-retrieval sets' split 'train'; MetaTool single-tool split 'train'; "
            "ProgrammableWeb mashups outside splits/programmableweb.json's dev and test. Negatives only among "
            "items that are gold for a train request. Never: a dev or test part, the eval-only sets (nestful, "
            "api-bank, tooltalk, restbench), the MCP, today's, OpenAPI, ProgrammableWeb and assistant suites.",
        },
        "settings": asdict(settings),
        "training": fit,
    }
    (out / DELTA_RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out / DELTA_FILE} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
