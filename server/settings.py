"""Settings read once from the environment, in the CLI, and passed down; nothing deeper reads os.environ."""

import os
from dataclasses import dataclass, field
from pathlib import Path

from catalog.sources import DATA_DIR

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    catalog_path: Path = ROOT / "catalog.db"
    runs_path: Path = ROOT / "runs.db"
    embedding_model: str | None = None
    data_dir: Path = DATA_DIR
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    http_token: str | None = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_env(cls, env=None) -> "Settings":
        env = os.environ if env is None else env
        catalog = Path(env["TENDER_CATALOG"]) if env.get("TENDER_CATALOG") else cls.catalog_path
        return cls(
            catalog_path=catalog,
            runs_path=Path(env["TENDER_RUNS"]) if env.get("TENDER_RUNS") else catalog.with_name("runs.db"),
            embedding_model=env.get("TENDER_EMBEDDING_MODEL") or None,
            data_dir=Path(env["TENDER_DATA"]) if env.get("TENDER_DATA") else DATA_DIR,
            llm_base_url=env.get("TENDER_LLM_BASE_URL") or env.get("OPENAI_BASE_URL") or None,
            llm_model=env.get("TENDER_LLM_MODEL") or env.get("OPENAI_MODEL") or None,
            llm_api_key=env.get("TENDER_LLM_API_KEY") or env.get("OPENAI_API_KEY") or None,
            http_token=env.get("TENDER_HTTP_TOKEN") or None,
        )
