"""OpenAPI 3.x and Swagger 2.0 documents as a catalogue source: the 40 real documents of ../shared/data/openapi,
small documents written here for what those lack (a deprecated operation), and documents that cannot be read."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tender.catalog import Catalog
from tender.catalog.build import build_from_sources
from tender.catalog.sources.openapi import load_openapi
from tender.cli import main
from tender.errors import SourceError

DOCS = Path(__file__).resolve().parents[2] / "shared" / "data" / "openapi" / "docs"

PETS = """
openapi: 3.0.3
info: {title: Pet Store, version: "2.1"}
servers: [{url: "https://{region}.pets.example.com/v2", variables: {region: {default: eu}}}]
externalDocs: {url: "https://docs.pets.example.com"}
paths:
  /pets:
    get: {operationId: listPets, summary: List all pets, tags: [pets], parameters: [{name: limit, in: query}]}
    post: {summary: Add a pet, tags: [pets], requestBody: {content: {}}}
  /pets/{id}/photo:
    put: {operationId: uploadPhoto, description: Upload a photo of the pet., deprecated: true}
"""


@pytest.fixture(scope="module")
def real():
    if not DOCS.is_dir():
        pytest.skip(f"{DOCS} is not here")
    return load_openapi(DOCS)


def test_every_operation_of_the_forty_documents_is_an_item_of_its_api(real):
    assert (real.info.kind, real.info.items, real.info.detail) == ("openapi", 294, "40 documents")
    assert len(real.info.sha256) == 40
    assert len({api.provider for api in real.apis}) == 40
    assert all(api.kind == "operation" and api.status == "active" and api.provider for api in real.apis)
    sms = [api for api in real.apis if api.provider == "SMS API"]  # nexmo.com: one operation
    assert len(sms) == 1 and sms[0].details["version"] == "1.2.0"


def test_swagger_2_documents_are_read_with_their_host_as_the_endpoint(real):
    postmark = [api for api in real.apis if api.provider == "Postmark API"]
    assert len(postmark) == 43
    assert all(api.details["endpoint"].startswith("https://api.postmarkapp.com") for api in postmark)
    calendar = next(api for api in real.apis if api.name == "calendar.events.insert (Calendar)")
    assert calendar.categories == ["events"] and calendar.details["method"] == "POST"
    assert calendar.link.startswith("https://")


def test_an_operation_is_named_by_its_id_or_method_and_path_and_deprecated_is_kept(tmp_path):
    (tmp_path / "pets.yaml").write_text(PETS)
    pets = {api.name: api for api in load_openapi(tmp_path / "pets.yaml").apis}
    assert list(pets) == ["listPets (Pet Store)", "POST /pets (Pet Store)", "uploadPhoto (Pet Store)"]
    listing = pets["listPets (Pet Store)"]
    assert (listing.provider, listing.categories, listing.description) == ("Pet Store", ["pets"], "List all pets")
    assert listing.link == "https://docs.pets.example.com"
    assert listing.details["endpoint"] == "https://eu.pets.example.com/v2/pets"
    assert listing.details["inputs"] == ["limit"] and pets["POST /pets (Pet Store)"].details["inputs"] == ["body"]
    photo = pets["uploadPhoto (Pet Store)"]
    assert (photo.status, photo.status_source) == ("deprecated", "openapi deprecated: true")
    assert listing.status == "active" and photo.categories == []


def test_json_documents_and_folders_are_read_too(tmp_path):
    import yaml

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "pets.json").write_text(json.dumps(yaml.safe_load(PETS)))
    (tmp_path / "a" / "notes.txt").write_text("not a document")
    assert load_openapi(tmp_path / "a").info.items == 3


@pytest.mark.parametrize(
    "text,says",
    [
        ("openapi: 3.0.0\ninfo: {title: x\npaths: {}", "does not parse as YAML or JSON at line"),
        ("openapi: 3.0.0\ninfo: {title: Empty, version: '1'}\npaths: {}\n", "has no paths"),
        ("openapi: 3.0.0\ninfo: {title: Empty, version: '1'}\n", "has no paths"),
        ("swagger: '1.2'\npaths: {/a: {get: {}}}\n", "is not an OpenAPI 3.x or Swagger 2.0 document (version '1.2')"),
        ("- just\n- a list\n", "its top level is not a mapping"),
    ],
)
def test_a_document_that_cannot_be_read_is_named(tmp_path, text, says):
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(SourceError, match="bad.yaml") as error:
        load_openapi(tmp_path)
    assert says in str(error.value)


def test_cli_builds_a_catalogue_from_a_folder_and_a_bad_document_leaves_the_previous_one(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "pets.yaml").write_text(PETS)
    db = tmp_path / "api.db"
    env = {"TENDER_EMBEDDING_MODEL": "hashing", "TENDER_HOME": str(tmp_path / "home")}
    ok = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--openapi", str(tmp_path / "docs"), "--db", str(db)], env=env
    )
    assert ok.exit_code == 0, ok.output
    assert "3 items of 1 providers (1 deprecated), 0 mashups" in ok.output
    before = db.read_bytes()
    (tmp_path / "docs" / "zz.yaml").write_text("openapi: 3.0.0\npaths: [")
    bad = CliRunner().invoke(
        main, ["catalog", "build", "--quiet", "--openapi", str(tmp_path / "docs"), "--db", str(db)], env=env
    )
    assert bad.exit_code == 2 and "zz.yaml" in bad.output and "Nothing was written" in bad.output
    assert db.read_bytes() == before
    info = CliRunner().invoke(main, ["catalog", "info", "--db", str(db)], env=env)
    assert "openapi source" in info.output and "(3 items, 1 document)" in info.output


def test_the_forty_documents_build_into_a_catalogue_grouped_by_tags(real, tmp_path, embedder):
    meta = build_from_sources([real], tmp_path / "openapi.db", embedder)
    assert (meta["apis"], meta["providers"], meta["mashups"]) == ("294", "40", "0")
    catalog = Catalog(tmp_path / "openapi.db", embedder=embedder)
    assert len(catalog.providers()) == 40 and len(catalog.apis_of_provider("Postmark API")) == 43
    assert catalog.categories() and all(c.api_count > 0 for c in catalog.categories())
    again = build_from_sources([real], tmp_path / "openapi.db", embedder)
    assert again["texts_embedded"] == "0"  # a rebuild with nothing changed embeds nothing


def test_a_document_holding_an_integer_of_thousands_of_digits_is_named_in_the_error(tmp_path):
    from tender.catalog.sources.openapi import parse
    from tender.errors import SourceError

    document = tmp_path / "huge.yaml"
    document.write_text("openapi: 3.0.0\ninfo: {title: x, version: " + "9" * 5000 + "}\npaths: {}\n")
    with pytest.raises(SourceError) as raised:
        parse(document)
    assert "huge.yaml" in str(raised.value) and "cannot be read" in str(raised.value)
