"""Which ranking model ranks a catalogue: the one TENDER_RANKING_MODEL names, else the one fitted on the vectors the
catalogue is read with (shipped, or written beside a tuned encoder's folder). Asked by every entrance alike."""

from pathlib import Path

from tender.catalog import Catalog
from tender.catalog.encoders import check_encoder, recorded_encoder

from .reader import Reader
from .scorer import MODEL_FILE, Scorer, ranking_folder, shipped_model


def ranking_model(path: Path | None, embedder) -> Scorer:
    """The ranking model: a refitted one (TENDER_RANKING_MODEL) or the one fitted on the loaded encoder's vectors,
    shipped or written beside the encoder's folder by `tender train ranker` (the hashing encoder of the tests runs
    the stock one)."""
    from tender.catalog import TenderError

    encoder = embedder.encoder
    testing = encoder.name.startswith("hashing")
    if path is None:
        folder = ranking_folder(embedder)
        path = shipped_model(encoder.name, encoder.fingerprint, folder)
        if path is None and not testing:
            where = f" (it is written beside the encoder, in {folder}, and used from then on)" if folder else ""
            raise TenderError(
                f"No ranking model is fitted for the encoder {encoder}: fit one with `tender train ranker`{where}, "
                "or name one with TENDER_RANKING_MODEL."
            )
        path = path or MODEL_FILE
    try:
        scorer = Scorer.load(path)
    except (OSError, ValueError) as error:  # pydantic's ValidationError is a ValueError
        raise TenderError(
            f"Cannot read the ranking model {path}: {str(error).splitlines()[0]}. Refit it with "
            "`tender train ranker --out FILE`, or unset TENDER_RANKING_MODEL for the shipped one."
        ) from None
    if scorer.encoder and not testing:
        check_encoder(
            f"The ranking model {path.name}",
            recorded_encoder(scorer.encoder, scorer.encoder_weights or None),
            encoder,
            "Use the encoder it was fitted on (unset TENDER_EMBEDDING_MODEL for the stock one), or refit it for this "
            "encoder: `tender train ranker --out FILE`, then TENDER_RANKING_MODEL=FILE.",
        )
    return scorer


def scorer_for(path: Path | None, catalog: Catalog, reader: Reader | None) -> Scorer:
    """The ranking model for a catalogue as it is read: fitted on the reader's vectors where a reader reads the
    shortlists (ranking/reader.py), else on the catalogue's; `path` (TENDER_RANKING_MODEL) over either."""
    return ranking_model(path, reader.embedder if reader else catalog.embedder)
