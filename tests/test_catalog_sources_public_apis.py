"""The public-apis directory as a catalogue source: the README of ../shared/data/public-apis as published, a small
README written here with the odd rows the real one has (a header without its outer pipe, extra cells, a row
without a link, an API under two headings, a sponsors' table of other columns), and the same over HTTP from a
local server."""

import hashlib
import http.server
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from tender.catalog import Catalog
from tender.catalog.build import build_from_sources
from tender.catalog.sources.http import Fetcher
from tender.catalog.sources.public_apis import load_public_apis
from tender.cli import main
from tender.errors import SourceError

README = Path(__file__).resolve().parents[2] / "shared" / "data" / "public-apis" / "public-apis-README.md"

ODD = """# Public APIs

## Sponsors
| API | Description | Call this API |
|:---|:---|:---|
| [Fixer](https://fixer.io/) | Exchange rates | [Run](https://example.com/run) |

### Animals
API | Description | Auth | HTTPS | CORS
|:---|:---|:---|:---|:---|
| [Cat Facts](https://catfact.ninja/) | Random cat facts | No | Yes | Yes |
| [Cats](https://docs.thecatapi.com/) | Pictures of cats | `apiKey` | Yes | No | |
| Dogs | Based on the Stanford Dogs Dataset | No | Yes | Yes |
| [Old Zoo](https://zoo.example.com/) | This API is no longer available. It listed zoos | `OAuth` | No | Unknown |

### Music
| API | Description | Auth | HTTPS | CORS |
|---|:---|:---|:---|:---|
| [Cat Facts](https://catfact.ninja/) | Random cat facts | No | Yes | Yes |
| [Genius](https://docs.genius.com/) | Crowdsourced lyrics \\| music knowledge | `OAuth` | Yes | Unknown | Yes
| [Cut](https://cut.example.com/) | Too few cells |
"""


@pytest.fixture(scope="module")
def real():
    if not README.is_file():
        pytest.skip(f"{README} is not here (the shared data sit beside the clone)")
    return load_public_apis(README)


def test_the_published_directory_reads_into_one_item_per_api(real):
    assert real.info.kind == "public-apis" and real.info.items == len(real.apis) >= 1_400
    assert real.info.counts["rows"] == 1_695 and real.info.counts["listed again"] == 1
    assert real.info.counts["tables of other columns"] == 1  # the sponsors' "Call this API" table
    assert "MIT" in real.info.licence and "public-apis" in real.info.licence
    assert list(real.info.sha256.values()) == [hashlib.sha256(README.read_bytes()).hexdigest()]
    taste = [api for api in real.apis if api.name == "TasteDive"]
    assert len(taste) == 1 and taste[0].categories == ["Entertainment", "Music"]
    pet = next(api for api in real.apis if api.name == "AdoptAPet")
    assert (pet.categories, pet.provider, pet.link, pet.status) == (
        ["Animals"],
        "AdoptAPet",
        "https://www.adoptapet.com/public/apis/pet_list.html",
        "active",
    )
    assert pet.details == {"refs": ["public-apis:AdoptAPet"], "auth": "apiKey", "https": True, "cors": "yes"}
    assert {api.details["cors"] for api in real.apis} == {"yes", "no", "unknown"}
    assert len({c for api in real.apis for c in api.categories}) == 51


def test_odd_rows_are_read_as_the_file_has_them(tmp_path):
    (tmp_path / "README.md").write_text(ODD, encoding="utf-8")
    loaded = load_public_apis(tmp_path / "README.md")
    apis = {api.name: api for api in loaded.apis}

    assert list(apis) == ["Cat Facts", "Cats", "Old Zoo", "Genius"]  # not the sponsors' Fixer
    assert apis["Cat Facts"].categories == ["Animals", "Music"]
    assert apis["Cats"].details == {"refs": ["public-apis:Cats"], "auth": "apiKey", "https": True, "cors": "no"}
    assert apis["Old Zoo"].details == {
        "refs": ["public-apis:Old Zoo"],
        "auth": "OAuth",
        "https": False,
        "cors": "unknown",
    }
    assert apis["Old Zoo"].status == "deprecated" and "no longer available" in apis["Old Zoo"].status_source
    assert apis["Genius"].description == "Crowdsourced lyrics | music knowledge"  # an escaped pipe, extra cell
    assert loaded.info.counts == {
        "rows": 7,
        "without a link": 1,
        "malformed": 1,
        "listed again": 1,
        "tables of other columns": 1,
    }


@pytest.mark.parametrize(
    "content, says",
    [("# Nothing\n\nNo tables here.\n", "holds no table of APIs"), (b"\xff\xfe", "is not UTF-8")],
)
def test_a_file_that_is_not_the_directory_is_named(tmp_path, content, says):
    path = tmp_path / "README.md"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(SourceError, match=says):
        load_public_apis(path)


class _Readme(http.server.BaseHTTPRequestHandler):
    body = ODD.encode()

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path != "/README.md":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def site():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Readme)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_url_is_fetched_within_bounds(site):
    loaded = load_public_apis(f"{site}/README.md", fetcher=Fetcher(timeout=5))
    assert loaded.info.name == f"{site}/README.md" and loaded.info.items == 4
    with pytest.raises(SourceError, match="404"):
        load_public_apis(f"{site}/missing.md", fetcher=Fetcher(timeout=5))
    with pytest.raises(SourceError, match="more than 100 bytes"):
        load_public_apis(f"{site}/README.md", fetcher=Fetcher(timeout=5, max_bytes=100))


def test_cli_builds_from_the_directory_and_a_missing_file_keeps_the_previous_catalogue(tmp_path):
    (tmp_path / "README.md").write_text(ODD, encoding="utf-8")
    db = tmp_path / "public.db"
    env = {"TENDER_EMBEDDING_MODEL": "hashing", "TENDER_HOME": str(tmp_path / "home")}
    built = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--public-apis", str(tmp_path / "README.md"), "--db", str(db)], env=env
    )
    assert built.exit_code == 0, built.output
    assert "4 items of 4 providers (1 deprecated)" in built.output
    before = hashlib.sha256(db.read_bytes()).hexdigest()

    missing = CliRunner().invoke(
        main, ["catalog", "build", "--public-apis", str(tmp_path / "nope.md"), "--db", str(db)], env=env
    )
    assert missing.exit_code == 2 and "nope.md: no such file" in missing.output
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    info = CliRunner().invoke(main, ["catalog", "info", "--db", str(db)], env=env)
    assert "public-apis source" in info.output and "licence: MIT" in info.output


def test_the_directory_builds_into_a_catalogue_with_its_categories(real, tmp_path, embedder):
    meta = build_from_sources([real], tmp_path / "public.db", embedder)
    assert int(meta["apis"]) == real.info.items and meta["categories"] == "51"
    catalog = Catalog(tmp_path / "public.db", embedder=embedder)
    assert catalog.get_api("AdoptAPet").details["auth"] == "apiKey"
    assert "Animals" in catalog.real_categories
    sources = catalog.sources()
    assert sources[0]["licence"].startswith("MIT") and sources[0]["counts"]["rows"] == 1_695
