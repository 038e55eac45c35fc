"""Errors whose message is what the user sees. Raised deep, turned into a CLI message or an MCP tool error at the edge.
A value the caller gave is quoted with `echo`: shortened, so that a huge input is not sent back whole."""

from .safety import echo


class TenderError(Exception):
    """Base of every error Tender reports to a person or a calling model."""


class InputToFix(TenderError):
    """Something the user typed or named, and can fix: a requirement, a name, a file that is not what it should
    be. The CLI exits 2 on these and 1 on every other error (the README's rule)."""


class CatalogError(TenderError):
    pass


class CatalogMissing(CatalogError, InputToFix):
    def __init__(self, path):
        super().__init__(
            f"No API catalogue at {path}. Build it with `tender catalog build`: from the ProgrammableWeb data "
            "(set TENDER_DATA to its folder when it is not beside the clone), or from your own sources "
            "(--openapi FOLDER, --mcp-config FILE). Or point --db or TENDER_CATALOG at an existing catalogue."
        )
        self.path = path


class NotACatalogue(CatalogError, InputToFix):
    """A file named as a catalogue that is not one (another SQLite file, or no database at all)."""

    def __init__(self, path, problem: str):
        super().__init__(
            f"{path} is not a Tender catalogue ({problem}). Name a catalogue built by `tender catalog build` "
            "(--db or TENDER_CATALOG), or build one there."
        )
        self.path = path


class DataMissing(CatalogError, InputToFix):
    """A file of the ProgrammableWeb data that a command needs is not in the data folder (TENDER_DATA)."""

    def __init__(self, folder, name: str, instead: str = "", *, from_env: bool = True):
        # An installed tender has no clone beside it: the folder it would look in by default means nothing to
        # its user, so only a folder they named (TENDER_DATA) is quoted.
        where = f"TENDER_DATA={folder} has no {name}" if from_env else f"TENDER_DATA is not set (no {name} found)"
        super().__init__(
            f"No ProgrammableWeb data: {where}. Set TENDER_DATA to the folder that holds apis.jsonl and "
            "mashups.jsonl (the directory as published with the R2API study; see the README, "
            f'"Data"){", or " + instead if instead else ""}.'
        )
        self.folder, self.name = folder, name


class MalformedInput(CatalogError):
    """A source line that cannot be read; names the file and the line."""

    def __init__(self, path, line: int, problem: str):
        super().__init__(f"{path}, line {line}: {problem}")
        self.path, self.line, self.problem = path, line, problem


class ApiNotFound(CatalogError, InputToFix):
    def __init__(self, api):
        super().__init__(
            f"No API {echo(api)} in the catalogue. Use search_apis or `tender catalog search` to find its id or exact name."
        )
        self.api = api


class CategoryNotFound(CatalogError, InputToFix):
    def __init__(self, category, known: list[str] | None = None):
        hint = f" Close names: {', '.join(known)}." if known else ""
        super().__init__(f"No category {echo(category)} in the catalogue.{hint} list_categories shows them all.")
        self.category = category


class SourceError(CatalogError):
    """A catalogue source (an MCP server, an OpenAPI document, a listing) that cannot be read; names the source."""

    def __init__(self, source, problem: str):
        super().__init__(f"{source}: {problem}")
        self.source, self.problem = source, problem


class EncoderMismatch(CatalogError):
    """A catalogue or bid model made with another encoder than the one loaded: their vectors do not compare."""
