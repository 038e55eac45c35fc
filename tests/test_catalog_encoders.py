"""Encoders: the stock all-MiniLM-L6-v2 runs on ONNX Runtime without torch, gives the model's own vectors, and
Tender refuses a catalogue or bid model made by another encoder than the one loaded."""

import importlib.util
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from tender.catalog import Catalog, HashingEmbedder, build_catalog, get_embedder
from tender.catalog.encoders import SHIPPED_DELTAS, STOCK_NAME, TUNED_NAME, EncoderId, stock_encoder, tuned_encoder
from tender.catalog.onnx_embedder import OnnxEmbedder
from tender.catalog.pooling import pool_parts
from tender.cli import main
from tender.errors import EncoderMismatch, TenderError
from tests.conftest import ROOT
from tender.assembly import embedder_for

HAS_TORCH = (
    importlib.util.find_spec("torch") is not None and importlib.util.find_spec("sentence_transformers") is not None
)


def needs_torch(test):
    """Marked `torch` (out of the fast lane), and skipped, saying why, where the train extra is not installed."""
    skipped = pytest.mark.skipif(not HAS_TORCH, reason="needs the train extra (torch, sentence-transformers)")
    return pytest.mark.torch(skipped(test))


# Run in a child with torch and sentence-transformers made unimportable, as in an install without the train extra.
NO_TORCH = "import sys\nfor name in ('torch', 'sentence_transformers', 'transformers'): sys.modules[name] = None\n"


def run_without_torch(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", NO_TORCH + textwrap.dedent(code), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


class RenamedEmbedder(HashingEmbedder):
    """The hashing embedder under another encoder's identity: a catalogue that says another model embedded it."""

    def __init__(self, encoder: EncoderId):
        super().__init__(256)
        self.model_name, self.encoder = encoder.name, encoder


# -- the stock encoder without torch ---------------------------------------------------------------------------
def test_the_stock_encoder_embeds_and_builds_a_catalogue_without_torch(sources, tmp_path):
    done = run_without_torch(
        """
        from tender.catalog import Catalog, build_catalog, get_embedder
        embedder = get_embedder(threads=None)
        meta = build_catalog(sys.argv[1], sys.argv[2], sys.argv[3], embedder)
        hit = Catalog(sys.argv[3], embedder=get_embedder()).search("weather forecast", k=1)[0]
        print(type(embedder).__name__, meta["model"], embedder.dimension, hit.id)
    """,
        *map(str, sources),
        str(tmp_path / "catalog.db"),
    )
    assert done.returncode == 0, done.stderr
    name, model, dimension, best = done.stdout.split()
    assert (name, model, dimension) == ("OnnxEmbedder", STOCK_NAME, "384")
    assert int(best) in (9, 10)  # the fixture's two weather APIs


def test_a_fine_tuned_folder_without_torch_asks_for_the_train_extra(tmp_path):
    folder = tmp_path / "minilm-finetuned"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "tokenizer.json").write_bytes((OnnxEmbedder().path / "tokenizer.json").read_bytes())
    done = run_without_torch(
        """
        from tender.catalog import get_embedder
        from tender.errors import TenderError
        try:
            get_embedder(sys.argv[1], cache_dir=sys.argv[2]).embed(["maps"])
        except TenderError as error:
            print(error)
    """,
        str(folder),
        str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'tender-mcp[train]'" in done.stdout and "unset TENDER_EMBEDDING_MODEL" in done.stdout


def test_the_torch_runtime_without_torch_is_a_clear_error():
    done = run_without_torch("""
        from tender.catalog import get_embedder
        from tender.errors import TenderError
        try:
            get_embedder(runtime="torch").embed(["maps"])
        except TenderError as error:
            print(error)
    """)
    assert done.returncode == 0, done.stderr
    assert "train extra" in done.stdout


def test_an_unknown_embedding_runtime_is_a_clear_error():
    with pytest.raises(TenderError, match="auto, onnx or torch"):
        get_embedder(runtime="tensorflow")


# -- the same vectors as sentence-transformers ------------------------------------------------------------------
@needs_torch
@pytest.mark.real_model
def test_the_stock_onnx_graph_gives_the_models_own_vectors():
    from tender.catalog import SentenceTransformerEmbedder

    onnx, torch = get_embedder(), SentenceTransformerEmbedder()
    assert isinstance(onnx, OnnxEmbedder) and onnx.encoder == torch.encoder == stock_encoder()
    # Texts of different lengths in one batch, and one past the stock tokenizer's 128 tokens: neither padding
    # nor truncation may change any text's vector.
    texts = ["maps", "send a text message", "a site that shows nearby restaurants on a map with their reviews " * 12]
    assert np.allclose(onnx.embed(texts), torch.embed(texts), atol=1e-5)
    text = "Show restaurants on a map, read their reviews, and send a text message reminder."
    parts = ["Show restaurants on a map", "read their reviews", "not in the text"]
    (whole, vectors), (whole_t, vectors_t) = (pool_parts(text, parts, *e.tokens(text)) for e in (onnx, torch))
    assert np.allclose(whole, whole_t, atol=1e-5)
    assert np.allclose(vectors[0], vectors_t[0], atol=1e-5) and np.allclose(vectors[1], vectors_t[1], atol=1e-5)
    assert vectors[2] is None


def test_the_stock_encoder_counts_the_tokens_it_reads_of_each_text():
    onnx = get_embedder()
    short, long = onnx.lengths(["maps", "a site that shows nearby restaurants on a map with their reviews " * 40])
    assert short == 3  # [CLS] maps [SEP]
    assert long == onnx.max_tokens  # what is cut is not read


@pytest.fixture
def tuned_folder(tmp_path):
    """The stock sentence-transformers folder under another name, standing in for a fine-tuned encoder."""
    from tender.catalog.encoders import stock_torch_dir

    folder = tmp_path / "minilm-finetuned"
    folder.mkdir()
    for file in stock_torch_dir().iterdir():
        (folder / file.name).symlink_to(file)
    return folder


@needs_torch
@pytest.mark.real_model
def test_a_fine_tuned_folder_is_exported_once_into_the_cache_folder(tuned_folder, tmp_path):
    cache = tmp_path / "cache"
    tuned = get_embedder(str(tuned_folder), cache_dir=cache)
    assert isinstance(tuned, OnnxEmbedder) and tuned.encoder.name == "minilm-finetuned"
    assert tuned.encoder.fingerprint != stock_encoder().fingerprint  # other weights file, other fingerprint
    assert np.allclose(
        tuned.embed(["maps", "send a text message"]), get_embedder().embed(["maps", "send a text message"]), atol=1e-5
    )
    graph = tuned.graph_path
    assert graph.is_file() and graph.is_relative_to(cache)
    stamp = graph.stat().st_mtime_ns
    assert np.allclose(OnnxEmbedder(tuned_folder, cache_dir=cache).embed(["maps"]), tuned.embed(["maps"]))
    assert graph.stat().st_mtime_ns == stamp and list(graph.parent.glob("*.partial")) == []


@needs_torch
@pytest.mark.real_model
def test_a_large_vocabulary_table_is_kept_in_8_bits_with_the_same_vectors_to_four_places(
    tuned_folder, tmp_path, monkeypatch
):
    from tender.catalog import onnx_embedder

    full = OnnxEmbedder(tuned_folder, cache_dir=tmp_path / "cache")
    monkeypatch.setattr(onnx_embedder, "TABLE_IN_8_BITS", 1_000_000)  # MiniLM's table (11.7M) counts as large
    small = OnnxEmbedder(tuned_folder, cache_dir=tmp_path / "cache")
    assert small.table_8_bits and small.graph_path != full.graph_path and small.encoder == full.encoder
    texts = ["maps", "send a text message", "a site that shows nearby restaurants on a map with their reviews"]
    cosines = (small.embed(texts) * full.embed(texts)).sum(axis=1)
    assert cosines.min() > 0.999 and not np.allclose(cosines, 1.0, atol=1e-7)  # close, and really quantised
    assert small.graph_path.stat().st_size < full.graph_path.stat().st_size
    assert list(small.graph_path.parent.glob("*.partial")) == []


@needs_torch
@pytest.mark.real_model
def test_an_unwritable_cache_folder_does_not_stop_queries(tuned_folder, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder should be")
    vector = OnnxEmbedder(tuned_folder, cache_dir=blocked).embed(["maps"])[0]
    assert float(vector @ get_embedder().embed(["maps"])[0]) == pytest.approx(1.0, abs=1e-5)


# -- refusing another encoder's vectors ---------------------------------------------------------------------------
TUNED = EncoderId(name="minilm-finetuned", fingerprint="0123456789abcdef")


@pytest.fixture
def tuned_catalog(sources, tmp_path):
    path = tmp_path / "tuned.db"
    build_catalog(*sources, path, RenamedEmbedder(TUNED))
    return path


def test_a_catalogue_records_its_encoder_and_opens_with_the_same_one(tuned_catalog):
    catalog = Catalog(tuned_catalog, embedder=RenamedEmbedder(TUNED))
    assert catalog.encoder == TUNED


def test_a_catalogue_opened_with_another_encoder_is_refused_with_the_fix(tuned_catalog):
    with pytest.raises(EncoderMismatch) as refused:
        Catalog(tuned_catalog, embedder=get_embedder())
    message = str(refused.value)
    assert "minilm-finetuned (weights 0123456789abcdef)" in message and STOCK_NAME in message
    assert "tender catalog build" in message and "TENDER_EMBEDDING_MODEL" in message
    with pytest.raises(EncoderMismatch):  # a retrained model of the same name
        Catalog(tuned_catalog, embedder=RenamedEmbedder(TUNED.model_copy(update={"fingerprint": "fedcba9876543210"})))
    Catalog(tuned_catalog)  # without an embedder (catalog info, the evaluation's reads) it still opens


@pytest.mark.parametrize("command", [["recommend", "weather on a map"], ["catalog", "search", "weather"]])
def test_the_cli_refuses_a_catalogue_of_another_encoder_on_every_path(tuned_catalog, tmp_path, monkeypatch, command):
    monkeypatch.setenv("TENDER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TENDER_CATALOG", str(tuned_catalog))
    monkeypatch.delenv("TENDER_EMBEDDING_MODEL", raising=False)
    result = CliRunner().invoke(main, command)
    assert result.exit_code != 0
    assert "was embedded by minilm-finetuned" in result.output and "tender catalog build" in result.output


def test_a_catalogue_from_before_fingerprints_is_taken_as_the_stock_encoder_only_if_it_says_so(sources, tmp_path):
    import sqlite_utils

    path = tmp_path / "old.db"
    build_catalog(*sources, path, RenamedEmbedder(stock_encoder()))
    sqlite_utils.Database(path)["meta"].delete("encoder_fingerprint")
    assert Catalog(path, embedder=get_embedder()).encoder == stock_encoder()
    sqlite_utils.Database(path)["meta"].upsert({"key": "model", "value": "minilm-finetuned"}, pk="key")
    with pytest.raises(EncoderMismatch, match="weights not recorded"):
        Catalog(path, embedder=RenamedEmbedder(TUNED))


def test_a_rebuild_with_another_encoder_of_the_same_name_embeds_everything_again(sources, tmp_path):
    path = tmp_path / "catalog.db"
    first = build_catalog(*sources, path, RenamedEmbedder(TUNED))
    assert build_catalog(*sources, path, RenamedEmbedder(TUNED))["texts_embedded"] == "0"
    retrained = RenamedEmbedder(TUNED.model_copy(update={"fingerprint": "fedcba9876543210"}))
    assert build_catalog(*sources, path, retrained)["texts_embedded"] == first["texts_embedded"]


def test_the_ranking_model_is_refused_with_another_encoder_than_it_was_fitted_on(tmp_path):
    from tender.ranking.choice import ranking_model
    from tender.ranking.scorer import Scorer

    stock = Scorer.load().model_copy(update={"encoder": STOCK_NAME})
    path = tmp_path / "model.json"
    path.write_text(stock.model_dump_json())
    ranking_model(path, get_embedder())
    ranking_model(path, HashingEmbedder(256))  # the tests' embedder runs any ranking model
    with pytest.raises(EncoderMismatch, match="tender train ranker"):
        ranking_model(path, RenamedEmbedder(TUNED))


class FolderEmbedder(HashingEmbedder):
    """The hashing embedder standing in for an encoder read from a model folder (its identity, its folder)."""

    def __init__(self, folder, encoder: EncoderId):
        from tender.catalog.model_folder import ModelFolder

        super().__init__(256)
        self.model_name, self.encoder, self.stock, self.folder = encoder.name, encoder, False, ModelFolder(folder)


def test_the_ranking_model_follows_the_encoder_without_any_setting(tmp_path):
    from tender.ranking.choice import ranking_model
    from tender.ranking.scorer import Scorer, beside_encoder

    for shipped in SHIPPED_DELTAS:  # a ranking model ships for each delta that ships
        assert ranking_model(None, get_embedder(shipped)).encoder == shipped
    folder = tmp_path / "my-encoder"
    folder.mkdir()
    fitted = Scorer.load().model_copy(update={"encoder": TUNED.name, "encoder_weights": TUNED.fingerprint, "bias": 0.5})
    beside_encoder(folder, TUNED.name, TUNED.fingerprint).write_text(fitted.model_dump_json())
    assert ranking_model(None, FolderEmbedder(folder, TUNED)) == fitted
    # The same weights in a folder of another name: the fingerprint picks the model.
    renamed = EncoderId(name="renamed", fingerprint=TUNED.fingerprint)
    found = beside_encoder(folder, TUNED.name, TUNED.fingerprint)
    (tmp_path / "renamed").mkdir()
    found.rename(tmp_path / "renamed" / found.name)
    assert ranking_model(None, FolderEmbedder(tmp_path / "renamed", renamed)).bias == 0.5


def test_an_encoder_with_no_fitted_ranking_model_is_told_how_to_fit_one(tmp_path):
    from tender.ranking.choice import ranking_model

    with pytest.raises(TenderError, match=r"tender train ranker.*beside the encoder"):
        ranking_model(None, FolderEmbedder(tmp_path, EncoderId(name="new-encoder", fingerprint="fedcba9876543210")))


def test_a_refit_for_a_folder_encoder_is_written_beside_it_and_a_stock_refit_over_the_shipped_model(tmp_path):
    from tender.ranking.scorer import MODEL_FILE
    from tender.training.ranker import default_out

    assert default_out(get_embedder()) == MODEL_FILE
    assert default_out(get_embedder(TUNED_NAME)).name == "model.tender-minilm.json"
    out = default_out(FolderEmbedder(tmp_path, TUNED))
    assert out.parent == tmp_path and TUNED.fingerprint in out.name


# -- the tuned encoder Tender ships -----------------------------------------------------------------------------
@pytest.mark.real_model
def test_the_shipped_tuned_encoder_is_the_stock_graph_adapted_under_an_identity_of_its_own():
    tuned, stock = get_embedder(TUNED_NAME), get_embedder()
    assert isinstance(tuned, OnnxEmbedder) and tuned.encoder == tuned_encoder() != stock.encoder
    texts = ["stock prices and related news", "Twilio. Telephony. Send SMS messages."]
    a, b = tuned.embed(texts), stock.embed(texts)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-4)
    # Adapted, not replaced: near the stock vectors, not equal to them.
    assert 0.6 < float(np.min(np.sum(a * b, axis=1))) < 0.999


def test_the_tuned_encoder_on_the_torch_runtime_is_a_clear_error():
    with pytest.raises(TenderError, match="runs on ONNX Runtime"):
        get_embedder(TUNED_NAME, runtime="torch")


@pytest.fixture
def shipped_tuned_catalog(sources, tmp_path):
    """A catalogue that says the shipped tuned encoder embedded it (hashing vectors under its identity)."""
    path = tmp_path / "tuned.db"
    build_catalog(*sources, path, RenamedEmbedder(tuned_encoder()))
    return path


def test_a_catalogue_built_with_the_tuned_encoder_keeps_it_when_no_encoder_is_configured(shipped_tuned_catalog):
    from tender.settings import Settings

    assert embedder_for(Settings(), catalog=shipped_tuned_catalog).encoder == tuned_encoder()
    Catalog(shipped_tuned_catalog, embedder=embedder_for(Settings(), catalog=shipped_tuned_catalog))  # opens
    # A configured encoder wins (and is refused by the catalogue, saying how to fix it).
    configured = embedder_for(Settings(embedding_model=STOCK_NAME), catalog=shipped_tuned_catalog)
    assert configured.encoder == stock_encoder()
    with pytest.raises(EncoderMismatch, match="tender-minilm or tender-matcher for a tuned one"):
        Catalog(shipped_tuned_catalog, embedder=configured)


def test_a_stock_catalogue_or_none_at_all_gets_the_stock_encoder(sources, tmp_path):
    from tender.settings import Settings

    stock = tmp_path / "stock.db"
    build_catalog(*sources, stock, RenamedEmbedder(stock_encoder()))
    (tmp_path / "garbage.db").write_text("not a database")
    for path in (stock, tmp_path / "missing.db", tmp_path / "garbage.db", None):
        assert embedder_for(Settings(), catalog=path).encoder == stock_encoder()


@pytest.mark.real_model
def test_a_server_or_cli_started_without_the_setting_that_built_a_tuned_catalogue_still_answers(
    sources, tmp_path, monkeypatch
):
    path = tmp_path / "tuned.db"
    build_catalog(*sources, path, get_embedder(TUNED_NAME))
    monkeypatch.setenv("TENDER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TENDER_CATALOG", str(path))
    monkeypatch.delenv("TENDER_EMBEDDING_MODEL", raising=False)
    result = CliRunner().invoke(main, ["catalog", "search", "weather forecast"])
    assert result.exit_code == 0, result.output
    assert "eather" in result.output
    apis, mashups = map(str, sources)
    rebuilt = CliRunner().invoke(main, ["catalog", "build", "--apis", apis, "--mashups", mashups, "--db", str(path)])
    assert f"with {TUNED_NAME}" in rebuilt.output  # a rebuild keeps the catalogue's encoder


# -- a model folder's own prompts and layers ----------------------------------------------------------------------
@pytest.fixture
def prompted_folder(tmp_path):
    """The stock folder with what EmbeddingGemma's has and MiniLM's lacks: a query and a document prompt, and two
    Dense layers after the pooling (random weights, saved as sentence-transformers saves them)."""
    import torch
    from safetensors.torch import save_file

    from tender.catalog.encoders import stock_torch_dir

    folder = tmp_path / "prompted"
    folder.mkdir()
    for file in stock_torch_dir().iterdir():
        if file.name not in ("modules.json", "config_sentence_transformers.json"):
            (folder / file.name).symlink_to(file)
    generator = torch.Generator().manual_seed(0)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    for index, (inputs, outputs) in enumerate([(384, 512), (512, 384)], start=2):
        layer = folder / f"{index}_Dense"
        layer.mkdir()
        (layer / "config.json").write_text(
            json.dumps(
                {
                    "in_features": inputs,
                    "out_features": outputs,
                    "bias": False,
                    "activation_function": "torch.nn.modules.linear.Identity",
                }
            )
        )
        save_file(
            {"linear.weight": torch.randn(outputs, inputs, generator=generator) / 20}, layer / "model.safetensors"
        )
        modules.append(
            {"idx": index, "name": str(index), "path": layer.name, "type": "sentence_transformers.models.Dense"}
        )
    modules.append({"idx": 4, "name": "4", "path": "4_Normalize", "type": "sentence_transformers.models.Normalize"})
    (folder / "modules.json").write_text(json.dumps(modules))
    (folder / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "task: search result | query: ", "document": "title: none | text: "}})
    )
    return folder


@needs_torch
@pytest.mark.real_model
def test_a_folder_is_read_with_its_own_prompts_and_layers_as_sentence_transformers_reads_it(prompted_folder, tmp_path):
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(prompted_folder), device="cpu", local_files_only=True)
    onnx = get_embedder(str(prompted_folder), cache_dir=tmp_path / "cache")
    texts = ["find nearby restaurants", "Yelp Fusion: local businesses and their reviews"]
    for role in ("query", "document"):
        expected = reference.encode(texts, prompt_name=role, normalize_embeddings=True)
        assert np.allclose(onnx.embed(texts, role=role), expected, atol=1e-5)
    assert not np.allclose(onnx.embed(texts, role="query"), onnx.embed(texts, role="document"), atol=1e-3)
    # A part read where it stands: the prompt is read but belongs to no part, and the whole is the text's vector.
    text = "Show restaurants on a map, read their reviews"
    whole, parts = pool_parts(text, ["Show restaurants on a map", "read their reviews"], *onnx.tokens(text))
    assert np.allclose(whole, onnx.embed([text])[0], atol=1e-5) and all(p is not None for p in parts)


@needs_torch
@pytest.mark.real_model
def test_matryoshka_truncation_keeps_the_first_dimensions_under_an_identity_of_its_own(prompted_folder, tmp_path):
    full = get_embedder(str(prompted_folder), cache_dir=tmp_path / "cache")
    cut = get_embedder(str(prompted_folder), cache_dir=tmp_path / "cache", dimensions=128)
    vector, first = cut.embed(["maps"])[0], full.embed(["maps"])[0][:128]
    assert vector.shape == (128,) and np.allclose(vector, first / np.linalg.norm(first), atol=1e-5)
    assert cut.encoder.name == f"{full.encoder.name}@128" and cut.encoder != full.encoder


def test_truncating_the_stock_encoder_is_refused_with_the_reason():
    with pytest.raises(TenderError, match="not to MiniLM"):
        get_embedder(dimensions=128)


def test_a_folder_whose_layers_cannot_be_read_here_is_refused_with_the_reason(tmp_path):
    from tender.catalog.model_folder import read_model_folder

    (tmp_path / "modules.json").write_text(json.dumps([{"path": "1", "type": "sentence_transformers.models.LSTM"}]))
    with pytest.raises(TenderError, match="LSTM is not supported"):
        read_model_folder(tmp_path)
    (tmp_path / "modules.json").write_text(json.dumps([{"path": "1", "type": "sentence_transformers.models.Pooling"}]))
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(TenderError, match="only mean pooling"):
        read_model_folder(tmp_path)


def test_every_shipped_ranking_model_is_found_by_the_encoder_it_records():
    from tender.ranking.scorer import Scorer, fitted_models, shipped_model

    shipped = fitted_models()
    assert len(shipped) >= 3  # the stock MiniLM, tender-minilm, EmbeddingGemma
    for path in shipped:
        scorer = Scorer.load(path)
        assert scorer.encoder and scorer.encoder_weights, path.name
        assert shipped_model(scorer.encoder, scorer.encoder_weights) == path
