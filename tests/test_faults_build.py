"""Catalogue builds under faults: two builds of one file at once, an incomplete file, bad input."""

import os
import resource
import sqlite3
import subprocess
import sys
import threading

import pytest

from tender.catalog import Catalog, HashingEmbedder, build_catalog
from tender.catalog.build import MAX_EMBEDDED_CHARS, BuildInProgress, IncompleteBuild, check_complete
from tender.catalog.sources.openapi import read_document
from tests.conftest import write_jsonl
from tests.fixture_data import APIS, api_rows


class GatedEmbedder(HashingEmbedder):
    """Holds the build inside its first embedding until `release` is set."""

    def __init__(self):
        super().__init__(256)
        self.started, self.release = threading.Event(), threading.Event()

    def embed(self, texts, progress=False, role="query"):
        self.started.set()
        assert self.release.wait(30), "the test never released the build"
        return super().embed(texts, progress)


def test_a_second_build_of_the_same_catalogue_is_refused_and_the_first_completes(sources, tmp_path):
    path = tmp_path / "catalog.db"
    gated = GatedEmbedder()
    outcome = {}
    first = threading.Thread(target=lambda: outcome.update(meta=build_catalog(*sources, path, gated)))
    first.start()
    try:
        assert gated.started.wait(30), "the first build never started embedding"
        with pytest.raises(BuildInProgress, match="Another build of .*catalog.db is running"):
            build_catalog(*sources, path, HashingEmbedder(256))
    finally:
        gated.release.set()
        first.join(60)

    assert outcome["meta"]["apis"] == str(len(APIS))
    assert len(Catalog(path).api_ids()) == len(APIS)
    assert not list(tmp_path.glob("catalog.db.tmp-*"))
    build_catalog(*sources, path, HashingEmbedder(256))  # the lock is released afterwards


def test_builds_of_different_catalogues_run_side_by_side(sources, tmp_path):
    gated = GatedEmbedder()
    first = threading.Thread(target=build_catalog, args=(*sources, tmp_path / "a.db", gated))
    first.start()
    try:
        assert gated.started.wait(30)
        build_catalog(*sources, tmp_path / "b.db", HashingEmbedder(256))
    finally:
        gated.release.set()
        first.join(60)
    assert len(Catalog(tmp_path / "a.db").api_ids()) == len(Catalog(tmp_path / "b.db").api_ids()) == len(APIS)


def test_a_file_holding_only_meta_is_never_installed(tmp_path):
    stub = tmp_path / "stub.db"
    db = sqlite3.connect(stub)
    db.execute("create table meta (key text primary key, value text)")
    db.execute("insert into meta values ('apis', '12')")
    db.commit()
    db.close()

    with pytest.raises(IncompleteBuild, match="incomplete"):
        check_complete(stub, {"apis": "12"})


def test_a_complete_file_passes_the_check(catalog_path):
    check_complete(catalog_path, {"apis": str(len(APIS))})


# -- bad input: one line naming the file and the line, exit 2, nothing written ----------------------------
def cli_build(tmp_path, *args, memory_limit: int | None = None):
    """`tender catalog build` into c.db; `memory_limit` (bytes of address space) keeps a fault from taking the
    machine's memory should it not be caught."""

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    return subprocess.run(
        [sys.executable, "-m", "tender", "catalog", "build", "--db", str(tmp_path / "c.db"), "--quiet", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "TENDER_EMBEDDING_MODEL": "hashing", "TENDER_HOME": str(tmp_path)},
        preexec_fn=limit_memory if memory_limit else None,
        timeout=300,
    )


def error_lines(result) -> list[str]:
    assert "Traceback" not in result.stderr, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("Error:")]


def test_invalid_utf8_names_the_file_and_the_line_and_exits_2(sources, tmp_path):
    bad = tmp_path / "apis.jsonl"
    bad.write_bytes(sources[0].read_bytes() + b'{"id": 999, "name": "Caf\xe9"}\n')

    result = cli_build(tmp_path, "--apis", str(bad), "--mashups", str(sources[1]))

    assert result.returncode == 2
    (error,) = error_lines(result)
    assert f"{bad}, line {len(APIS) + 1}: not valid UTF-8 (byte 0xe9" in error
    assert not (tmp_path / "c.db").exists()


def test_an_empty_catalogue_is_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")

    result = cli_build(tmp_path, "--apis", str(empty), "--mashups", str(empty))

    assert result.returncode == 2 and len(error_lines(result)) == 1
    assert not (tmp_path / "c.db").exists()


def test_a_non_integer_in_the_exclude_mashups_file_names_its_line(sources, tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("1\n2\nthree\n")

    result = cli_build(tmp_path, "--apis", str(sources[0]), "--mashups", str(sources[1]), "--exclude-mashups", str(ids))

    assert result.returncode == 2
    (error,) = error_lines(result)
    assert f"{ids}, line 3: 'three' is not a mashup id" in error


def test_a_huge_description_is_embedded_only_up_to_the_cap_and_the_build_says_so(sources, tmp_path):
    rows = api_rows()
    rows[0]["description"] = "maps " * 200_000  # a million characters
    apis = write_jsonl(tmp_path / "apis.jsonl", rows)
    seen = []

    class Recording(HashingEmbedder):
        def embed(self, texts, progress=False, role="query"):
            seen.extend(texts)
            return super().embed(texts, progress)

    meta = build_catalog(apis, sources[1], tmp_path / "catalog.db", Recording(256))

    assert max(len(text) for text in seen) == MAX_EMBEDDED_CHARS
    assert meta["texts_truncated"] == "1"
    assert len(Catalog(tmp_path / "catalog.db").get_api(rows[0]["id"]).description) == 1_000_000  # stored whole

    result = cli_build(tmp_path, "--apis", str(apis), "--mashups", str(sources[1]))
    assert result.returncode == 0 and "only their beginning was embedded" in result.stderr


BILLION_LAUGHS = """\
openapi: 3.0.0
info: {title: Laughs, version: "1"}
x-a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
x-b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
x-c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
x-d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
x-e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
x-f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
x-g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
x-h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
x-i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
paths:
  /laugh:
    get: {operationId: laugh, summary: *i, tags: *i}
"""


def test_a_yaml_alias_bomb_is_refused_in_one_line_naming_the_document(tmp_path):
    bomb = tmp_path / "docs" / "laughs.yaml"
    bomb.parent.mkdir()
    bomb.write_text(BILLION_LAUGHS)  # 9^9 strings once expanded: gigabytes

    result = cli_build(tmp_path, "--openapi", str(bomb.parent), memory_limit=2 << 30)

    assert result.returncode == 2
    (error,) = error_lines(result)
    assert error.startswith(f"Error: {bomb}: its YAML aliases expand it to more than ") and "refused" in error
    assert not (tmp_path / "c.db").exists()


def test_aliases_that_expand_modestly_are_read(tmp_path):
    shared = tmp_path / "shared.yaml"
    shared.write_text(
        'openapi: 3.0.0\ninfo: {title: Shared, version: "1"}\n'
        "x-page: &page [{name: page, in: query}, {name: size, in: query}]\n"
        "paths:\n  /a: {get: {operationId: listA, parameters: *page}}\n  /b: {get: {operationId: listB, parameters: *page}}\n"
    )

    (first, second) = read_document(shared)

    assert first.details["inputs"] == second.details["inputs"] == ["page", "size"]
