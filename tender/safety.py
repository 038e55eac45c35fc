"""Text that crosses a trust boundary, made safe in one place.

- Third-party text (API directories, OpenAPI documents, MCP servers' tool listings) reaches an assistant and a
  terminal. `clean` takes out what acts instead of reading: control characters (terminal escape sequences
  among them, which can move the cursor, retitle the window or hide a line) and bidirectional overrides (which
  make text display in another order than it reads). Line breaks and tabs stay.
- Credentials written into a URL (http://user:password@host/v1, ?api_key=..., #token=...) are masked by `redact`
  wherever text may be shown or kept: plan notes, the runs database, logs, error messages. A password may hold
  characters it should not (an unencoded @, / or %): the user's part is taken to the last @, so that it goes whole.
- A value echoed in an error message is shortened by `echo`, so that a 1 MB input does not come back whole."""

import logging
import re

# ESC-introduced sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other two-character ones;
# and CSI as the single C1 character U+009B.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]?")
# C0 controls but tab and line feed, DEL, C1 controls, and the bidirectional marks, embeddings, overrides
# and isolates (U+061C, U+200E/F, U+202A-E, U+2066-9).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# A URL's scheme and what follows it up to a blank. Its user's part (name and password) runs to the LAST @ of that
# stretch: a password holding an unencoded @, / or ? goes whole (an @ in a path or query takes them with it: too much
# masked rather than too little). A stretch that starts with / has none (postgresql:///db?host=...).
_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s/][^\s]*)")
# A value whose name ends in a secret's word (password, sslpassword, api_key, access_token, X-Amz-Signature, ...),
# in a query, a fragment (#token=...) or a key=value list: masked to the next &, # or blank.
_SECRET_PARAMETER = re.compile(
    r"(?i)(?<![^?&#;,(\s\"'])([\w.\-]*?(?:password|passwd|passphrase|pwd|secret|token|key|sig|signature|auth|"
    r"authorization|credentials?|session)=)[^&#\s]+"
)
MASK = "***"


def clean(text: str) -> str:
    """Third-party text without control characters, escape sequences and bidirectional controls. A carriage
    return becomes a line break (alone, it lets a line be printed over)."""
    if text.isprintable():  # the common case: nothing to take out
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


_BREAKS = re.compile(r"\s+")


def one_line(text: str) -> str:
    """Third-party text that names something (a title, a name, a URL, an argument) as one line: cleaned, and every
    run of blanks, line and paragraph breaks one space. A line break in a server's title printed a fake line in the
    plan ("run: npx -y @modelcontextprotocol/server-github", a fake "[awarded]" step)."""
    return _BREAKS.sub(" ", clean(text)).strip()


def shown(text: str) -> str:
    """Client text (a requirement, a need, a model's answer: kept as given in the store) as a terminal shows it:
    every control, escape and bidirectional character written out as `\\uXXXX`, so that it can neither move the
    cursor, clear or forge a line, nor reorder what is read. Line breaks and tabs stay. Valid inside JSON too."""
    if text.isprintable():
        return text
    return _CONTROLS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def redact(text: str) -> str:
    """`text` with the credentials of any URL in it masked, whatever their characters, encoded or not: the user's
    part (user:password@, to the last @) and the values of secret-looking parameters in a query or fragment."""
    if "://" not in text and "=" not in text:
        return text
    return _SECRET_PARAMETER.sub(rf"\1{MASK}", _URL.sub(_mask_user, text))


def _mask_user(url: re.Match) -> str:
    scheme, rest = url.groups()
    at = rest.rfind("@")
    return scheme + (MASK + rest[at:] if at >= 0 else rest)


def echo(value, limit: int = 60) -> str:
    """`value` as an error message quotes it: repr'd, and at most `limit` characters of it, saying how long it
    was when shortened."""
    text = str(value)
    if len(text) <= limit:
        return repr(value) if isinstance(value, str) else text
    return f"{text[:limit]!r}… ({len(text):,} characters)"


class Redacting(logging.Filter):
    """A log handler's filter that masks credentials in URLs (an HTTP client logs the URL it posts to)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True
