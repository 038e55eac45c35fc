"""Fine-tune the sentence encoder on past mashups, so that a requirement lands near the APIs that serve it.

all-MiniLM-L6-v2 was trained on general text; it places "photos on a map" nearer to mashups about maps than
to the description of a photo API. Here it learns from pairs (mashup description, text of an API it used),
half of them with API names masked, with the other APIs of the batch as negatives (a contrastive loss in both
directions). Only the mashups of the train part are used (tender/evaluation/splits/programmableweb.json):
never a dev or test mashup.

Seeded, but not bit for bit reproducible: of three runs on one 2-core machine two gave the same weights, and
the third's losses parted from theirs in the third decimal after 50 batches. Validation F1 with the committed
bid model was the same to 0.001. About 11 minutes on 2 CPU cores.

    python -m tender.training.encoder --out models/tender-minilm
"""

import argparse
import math
import random
import shutil
from pathlib import Path

import numpy as np
from tqdm import tqdm

from tender.agents.text import mask_names
from tender.catalog import Api, Mashup, read_sources
from tender.catalog.encoders import stock_torch_dir
from tender.settings import Settings

from tender.evaluation.datasets import split


def training_pairs(
    apis: list[Api], mashups: list[Mashup], per_api: int = 30, seed: int = 0
) -> list[tuple[str, str, int]]:
    """(requirement, API text, API id) for the encoder's mashups. At most `per_api` pairs per API, so that
    Google Maps (in 38% of mashups) does not drown the long tail; half the requirements have names masked."""
    rng = random.Random(seed)
    held = set(split("programmableweb")["dev"]) | set(split("programmableweb")["test"])
    chosen = {m.id for m in mashups if m.id not in held}
    by_id = {a.id: a for a in apis}
    names = [a.name for a in apis]
    users: dict[int, list[Mashup]] = {}
    for mashup in mashups:
        if mashup.id in chosen and mashup.description:
            for api_id in mashup.api_ids:
                users.setdefault(api_id, []).append(mashup)
    pairs = []
    for api_id in sorted(users):
        sample = users[api_id][:]
        rng.shuffle(sample)
        for mashup in sample[:per_api]:
            text = mashup.description
            if rng.random() < 0.5:
                text = mask_names(text, names) or text
            pairs.append((text, by_id[api_id].text(), api_id))
    return pairs


def batches(pairs: list, size: int, rng: random.Random):
    """Shuffled batches in which no API appears twice: another pair of the same API is not a negative."""
    order = pairs[:]
    rng.shuffle(order)
    while order:
        batch: list = []
        seen: set = set()
        rest: list = []
        for pair in order:
            if len(batch) < size and pair[2] not in seen:
                batch.append(pair)
                seen.add(pair[2])
            else:
                rest.append(pair)
        order = rest
        yield batch


def fine_tune(
    pairs: list,
    out: Path,
    epochs: int = 2,
    batch_size: int = 32,
    learning_rate: float = 3e-5,
    max_seq_length: int = 128,
    base: Path | None = None,
    progress: bool = True,
) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    rng = random.Random(0)
    model = SentenceTransformer(str(base or stock_torch_dir()), device="cpu", local_files_only=True)
    model.max_seq_length = max_seq_length
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    _train(model, pairs, batch_size, epochs, optimiser, rng, progress)
    out = Path(out)
    tmp = out.with_name(out.name + ".partial")
    model.save(str(tmp))
    # Replace the old model only when the new one is complete.
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out


def warm_then_decay(optimiser, steps: int):
    """The learning rate warmed up linearly over a tenth of the steps, then decayed linearly to none."""
    import torch

    return torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / steps)
    )


def contrastive_step(forward, backward, optimiser, schedule) -> float:
    """One step of the contrastive loss in both directions: row i of `forward` (requests over items) and of
    `backward` (items over requests) is right at column i. Returns the loss."""
    import torch

    labels = torch.arange(forward.shape[0])
    loss = (
        torch.nn.functional.cross_entropy(forward, labels) + torch.nn.functional.cross_entropy(backward, labels)
    ) / 2
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    schedule.step()
    return float(loss.item())


def _train(model, pairs, batch_size, epochs, optimiser, rng, progress) -> None:
    """The contrastive loss in both directions, the other APIs of the batch as negatives, for `epochs` passes;
    the learning rate warms up linearly over a tenth of the steps, then decays linearly. Leaves the model in
    evaluation mode."""
    import torch

    steps = epochs * math.ceil(len(pairs) / batch_size)
    schedule = warm_then_decay(optimiser, steps)

    def encode(texts):
        return torch.nn.functional.normalize(model(model.tokenize(texts))["sentence_embedding"], dim=-1)

    model.train()
    bar = tqdm(total=steps, desc="fine-tuning the encoder", unit="batch", disable=not progress)
    losses: list[float] = []
    done = 0
    while done < steps:
        for batch in batches(pairs, batch_size, rng):
            if done >= steps:
                break
            scores = encode([b[0] for b in batch]) @ encode([b[1] for b in batch]).T * 20.0
            losses.append(contrastive_step(scores, scores.T, optimiser, schedule))
            done += 1
            bar.update(1)
            bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
    bar.close()
    model.eval()


# The stock ONNX graph's name for each linear layer a low-rank delta adapts (per transformer layer N, as
# `model.layers.N.<name>.MatMul.weight`, stored input x output).
LORA_TARGETS = {
    "attention.self.query": "attn.q_proj",
    "attention.self.key": "attn.k_proj",
    "attention.self.value": "attn.v_proj",
    "attention.output.dense": "attn.o_proj",
    "intermediate.dense": "mlp.fc1",
    "output.dense": "mlp.fc2",
}


def fine_tune_low_rank(
    pairs: list,
    out: Path,
    rank: int = 16,
    epochs: int = 2,
    batch_size: int = 32,
    learning_rate: float = 1e-3,
    max_seq_length: int = 128,
    progress: bool = True,
) -> Path:
    """Learn a low-rank delta (LoRA) for every linear layer of the stock encoder's transformer, the stock
    weights frozen, and write it to `out` (.npz): 1.3 MB at rank 16 against 90 MB for a full fine-tune, so it
    ships inside Tender and applies to the stock ONNX graph at load time (catalog.encoders.TUNED_NAME). Same
    pairs and loss as `fine_tune`."""
    import torch
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    rng = random.Random(0)
    model = SentenceTransformer(str(stock_torch_dir()), device="cpu", local_files_only=True)
    model.max_seq_length = max_seq_length
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    scale = 2.0  # alpha / rank with alpha = 2 * rank, as LoRA usually sets it

    class LowRank(torch.nn.Module):
        def __init__(self, base: torch.nn.Linear):
            super().__init__()
            self.base = base
            self.down = torch.nn.Parameter(torch.randn(rank, base.in_features) / math.sqrt(base.in_features))
            self.up = torch.nn.Parameter(torch.zeros(base.out_features, rank))  # starts as the stock model

        def forward(self, x):
            return self.base(x) + (x @ self.down.T @ self.up.T) * scale

    layers = model[0].auto_model.encoder.layer
    adapted: dict[str, LowRank] = {}
    for index, layer in enumerate(layers):
        for path, onnx_name in LORA_TARGETS.items():
            parent_path, _, attribute = path.rpartition(".")
            parent = layer.get_submodule(parent_path)
            wrapper = LowRank(getattr(parent, attribute))
            setattr(parent, attribute, wrapper)
            adapted[f"model.layers.{index}.{onnx_name}.MatMul.weight"] = wrapper
    parameters = [p for w in adapted.values() for p in (w.down, w.up)]
    optimiser = torch.optim.AdamW(parameters, lr=learning_rate, weight_decay=0.0)
    _train(model, pairs, batch_size, epochs, optimiser, rng, progress)
    # Stored as the ONNX graph multiplies: x @ W with W input x output, so the delta is (down.T * scale) @ up.T.
    arrays = {}
    for name, wrapper in adapted.items():
        arrays[f"{name}|in"] = (wrapper.down.detach().T * scale).numpy().astype(np.float16)
        arrays[f"{name}|out"] = wrapper.up.detach().T.numpy().astype(np.float16)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial.npz")
    np.savez_compressed(partial, **arrays)
    partial.replace(out)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="model folder to write")
    data = Settings.from_env().data_dir  # TENDER_DATA, else the data beside a clone
    parser.add_argument("--apis", type=Path, default=data / "apis.jsonl")
    parser.add_argument("--mashups", type=Path, default=data / "mashups.jsonl")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--per-api", type=int, default=30, help="at most this many training pairs per API")
    parser.add_argument("--learning-rate", type=float, default=None, help="default 3e-5, or 1e-3 with --rank")
    parser.add_argument(
        "--rank", type=int, default=None, help="learn a low-rank delta of this rank (written to --out, .npz) instead"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    apis, mashups = read_sources(args.apis, args.mashups)
    pairs = training_pairs(apis, mashups, per_api=args.per_api)
    print(f"{len(pairs)} pairs from {len({p[0] for p in pairs})} requirements")
    if args.rank:
        rate = args.learning_rate or 1e-3
        written = fine_tune_low_rank(
            pairs, args.out, args.rank, args.epochs, learning_rate=rate, progress=not args.quiet
        )
    else:
        rate = args.learning_rate or 3e-5
        written = fine_tune(pairs, args.out, epochs=args.epochs, learning_rate=rate, progress=not args.quiet)
    print(f"wrote {written}")


if __name__ == "__main__":
    main()
