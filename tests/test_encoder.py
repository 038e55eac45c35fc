"""Fine-tuning the sentence encoder: what it learns from, and that it learns."""

import numpy as np
import pytest

from tender.catalog import Api, Mashup
from tender.catalog.onnx_embedder import OnnxEmbedder
from tender.training.encoder import batches, fine_tune, fine_tune_low_rank, training_pairs
from tender.evaluation.datasets import split


def test_the_encoder_never_learns_from_a_dev_or_test_mashup():
    held = set(split("programmableweb")["dev"]) | set(split("programmableweb")["test"])
    apis = [Api(id=0, name="Google Maps", description="maps")]
    mashups = [Mashup(id=i, description=f"places number {i} on a map", api_ids=[0]) for i in range(4493)]
    learned = {int(p[0].split()[2]) for p in training_pairs(apis, mashups, per_api=10_000)}
    assert learned and learned.isdisjoint(held)
    assert len(learned) > 2000  # what is left is still most of the data


def test_pairs_join_a_mashup_to_each_api_it_used_and_cap_the_popular_ones():
    apis = [Api(id=0, name="Google Maps", description="maps"), Api(id=1, name="Flickr", description="photos")]
    mashups = [
        Mashup(id=i, description=f"photos number {i} shown on Google Maps", api_ids=[0, 1] if i % 2 else [0])
        for i in range(4493)
    ]
    pairs = training_pairs(apis, mashups, per_api=5)
    assert sum(p[2] == 0 for p in pairs) == 5 and sum(p[2] == 1 for p in pairs) == 5
    assert all(p[1] == apis[p[2]].text() for p in pairs)
    # Some requirements are masked, as a user who does not know the names would write them.
    assert any("Google Maps" not in p[0] for p in pairs) and any("Google Maps" in p[0] for p in pairs)
    used = {int(p[0].split()[2]) for p in pairs}
    assert used.isdisjoint(set(split("programmableweb")["dev"]) | set(split("programmableweb")["test"]))


def test_no_api_appears_twice_in_a_batch():
    import random

    pairs = [("q", "d", api) for api in [0, 0, 0, 1, 2, 3, 1]]
    seen = []
    for batch in batches(pairs, 3, random.Random(0)):
        assert len({p[2] for p in batch}) == len(batch)
        seen += batch
    assert sorted(seen) == sorted(pairs)


@pytest.mark.real_model
@pytest.mark.torch
def test_fine_tuning_brings_a_requirement_nearer_to_the_api_it_used(tmp_path):
    from tender.catalog import SentenceTransformerEmbedder

    pairs = [
        ("share holiday snapshots with friends", "Flickr. Photos. Store and share photographs.", 1),
        ("text my customers when the order ships", "Twilio. Telephony. Send SMS messages.", 2),
        ("weather at the campsite this weekend", "OpenWeather. Weather. Forecasts for any place.", 3),
        ("tweets about the match", "Twitter. Social. Read and post short messages.", 4),
    ]
    before = SentenceTransformerEmbedder()
    out = fine_tune(pairs, tmp_path / "encoder", epochs=3, batch_size=4, learning_rate=1e-4, progress=False)
    after = SentenceTransformerEmbedder(out)
    assert after.model_name == "encoder" and not (tmp_path / "encoder.partial").exists()

    def matched(embedder):
        q, d = embedder.embed([p[0] for p in pairs]), embedder.embed([p[1] for p in pairs])
        return float(np.mean(np.diag(q @ d.T)))

    assert matched(after) > matched(before)


@pytest.mark.real_model
@pytest.mark.torch
def test_a_low_rank_delta_learned_in_torch_brings_the_requirement_nearer_in_the_onnx_graph(tmp_path, monkeypatch):
    pairs = [
        ("share holiday snapshots with friends", "Flickr. Photos. Store and share photographs.", 1),
        ("text my customers when the order ships", "Twilio. Telephony. Send SMS messages.", 2),
        ("weather at the campsite this weekend", "OpenWeather. Weather. Forecasts for any place.", 3),
        ("tweets about the match", "Twitter. Social. Read and post short messages.", 4),
    ]
    delta = fine_tune_low_rank(pairs, tmp_path / "delta.npz", rank=4, epochs=3, batch_size=4, progress=False)
    # 6 layers x 6 linear layers, each a pair of factors; a small file, not a model.
    assert len(np.load(delta).files) == 72 and delta.stat().st_size < 1_000_000
    stock, tuned = OnnxEmbedder(), OnnxEmbedder(delta=delta, name="tuned")

    def matched(embedder):
        q, d = embedder.embed([p[0] for p in pairs]), embedder.embed([p[1] for p in pairs])
        return float(np.mean(np.diag(q @ d.T)))

    assert matched(tuned) > matched(stock)


def test_train_encoder_with_a_rank_writes_a_delta_file_under_the_home_and_stops_there(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import tender.training.encoder as training
    from tender.cli import main

    seen = []
    monkeypatch.setattr(training, "main", seen.append)
    data = tmp_path / "data"
    data.mkdir()
    for name in ("apis.jsonl", "mashups.jsonl"):
        (data / name).write_text("")
    environment = {"TENDER_HOME": str(tmp_path / "home"), "TENDER_DATA": str(data)}

    result = CliRunner().invoke(main, ["train", "encoder", "--rank", "16"], env=environment)

    assert result.exit_code == 0, result.output
    argv = seen[0]
    assert argv[argv.index("--out") + 1] == str(tmp_path / "home" / "models" / "tender-minilm-lora.npz")
    assert argv[argv.index("--rank") + 1] == "16" and "--learning-rate" not in argv  # the rank's own default
    assert "TENDER_EMBEDDING_MODEL" not in result.output  # a delta replaces the shipped one; no folder to point at
