"""How to run an MCP server, built from checked parts only.

Registry records are other people's words (the official registry's included): an identifier `--call=<cmd>` makes
npx run a shell command, a runtimeHint `sh` would be run as the command, a docker flag `-v /:/host` hands the
container the user's disk. So a route is never copied from a record: Tender chooses the command from the package's
registry type, checks the identifier against that registry's grammar and the version against its version grammar,
lets the runner's own options through only from a short allow-list, and keeps a package argument that starts with
"-" only where the record names it a flag. Anything else is refused (`Refused`, saying why); the source keeps the
server without that route and names the record.

A route is data, never a shell line: `args` are list items, a flag and its value apart; a variable's value is a
placeholder for the user to fill in, never a value from a record."""

import re
from typing import Annotated, Literal

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, computed_field, model_validator

# The runner of each package registry. A record's runtimeHint is accepted only where it names this runner.
RUNNERS = {"npm": "npx", "pypi": "uvx", "oci": "docker", "nuget": "dnx"}
Registry = Literal["npm", "pypi", "oci", "nuget"]
# A route is read back into every answer that awards its server: bounded, so a record cannot fill one (a record of
# 10,000 arguments made answers of 1.2 MB against their 32 KB).
MAX_ARGS = 24
MAX_ARG_CHARS = 300
MAX_VARIABLES = 24
MAX_URL_CHARS = 1_000

NPM_NAME = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$")
NPM_LEGACY = re.compile(r"^[A-Za-z0-9~][A-Za-z0-9._~-]*$")  # unscoped names from before the lowercase rule
SEMVER = re.compile(
    r"^(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z.-]+)?$"
)
PYPI_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
NUGET_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
# The OCI distribution spec's reference: [registry[:port]/]path[:tag][@digest], lower-case path components.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
# A registry host has a dot or a port, or is localhost; else the first component is part of the path (Docker Hub).
_DOMAIN = r"(?:(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?|[A-Za-z0-9-]+:\d+|localhost)/)"
OCI_IMAGE = re.compile(rf"^{_DOMAIN}?{_COMPONENT}(?:/{_COMPONENT})*$")
OCI_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
OCI_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
FLAG = re.compile(r"^--?[A-Za-z0-9][A-Za-z0-9_.-]*$")
VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")  # what an env map and docker -e take (node reads any)
HEADER = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
PLACEHOLDER = re.compile(r"^<[^<>\s][^<>]{0,98}>$")
SCRIPT = re.compile(r"^(?:\.{0,2}/)?(?:[\w.-]+/)*[\w.-]+\.(?:py|js|mjs|cjs|ts|sh)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class Refused(ValueError):
    """A route Tender will not build; the message says why, in words a user can check against the record."""


def placeholder(name: str) -> str:
    return f"<{name}>"


def plain(value: str, what: str) -> str:
    """A value with no line break or control character (a line break in an argument printed a fake line in the
    plan), within MAX_ARG_CHARS."""
    if _CONTROL.search(value):
        raise Refused(f"{what} holds a line break or a control character")
    if len(value) > MAX_ARG_CHARS:
        raise Refused(f"{what} is over {MAX_ARG_CHARS} characters")
    return value


def check_identifier(registry: str, identifier: str) -> str:
    plain(identifier, "the identifier")
    if not identifier or identifier.startswith("-"):
        raise Refused(f"the identifier {identifier[:60]!r} is not a package name")
    ok = {
        "npm": lambda i: len(i) <= 214 and (NPM_NAME.match(i) or (NPM_LEGACY.match(i) and "/" not in i)),
        "pypi": lambda i: PYPI_NAME.match(i),
        "oci": lambda i: OCI_IMAGE.match(i),
        "nuget": lambda i: NUGET_NAME.match(i),
    }[registry](identifier)
    if not ok:
        raise Refused(f"the identifier {identifier[:60]!r} is not a package name of {registry}")
    return identifier


def check_version(registry: str, version: str) -> str:
    """The version as given, "" for none or "latest"; Refused for anything that is not a version of the registry."""
    version = version.strip()
    if version in ("", "latest"):
        return ""
    plain(version, "the version")
    if registry == "npm" and SEMVER.match(version.removeprefix("v")):
        return version.removeprefix("v")
    if registry == "pypi":
        try:
            Version(version)
            return version
        except InvalidVersion:
            pass
    if registry == "oci" and (OCI_TAG.match(version) or OCI_DIGEST.match(version)):
        return version
    if registry == "nuget" and SEMVER.match(version):
        return version
    raise Refused(f"the version {version[:40]!r} is not a version of {registry}")


class Variable(BaseModel):
    """An environment variable (a package) or an HTTP header (a remote) the user supplies."""

    name: str
    required: bool = False
    secret: bool = False
    description: str = Field("", max_length=200)

    @model_validator(mode="after")
    def _named(self):
        if not (VARIABLE.match(self.name) or HEADER.match(self.name)):
            raise ValueError(f"{self.name[:40]!r} is not a variable or header name")
        return self


class Arg(BaseModel):
    """One argument as a record states it, before it is checked: a named flag (with a value or alone) or a
    positional value. `value` None: the user's to give (a placeholder from `hint`)."""

    kind: Literal["named", "positional"]
    name: str = ""
    value: str | None = None
    hint: str = ""
    required: bool = False
    boolean: bool = False


# The runner options a route may carry, per runner: option -> a check of its value (None: takes no value).
def _docker_mount(value: str) -> bool:
    """A volume whose host side is the user's to choose (a placeholder) or a named volume; never a fixed path of
    the user's machine."""
    host = value.split(":", 1)[0] if not value.startswith("type=") else _mount_source(value)
    return bool(PLACEHOLDER.match(host) or re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", host))


def _mount_source(value: str) -> str:
    parts = dict(p.split("=", 1) for p in value.split(",") if "=" in p)
    return parts.get("source", parts.get("src", ""))


_PORTS = re.compile(r"^(?:127\.0\.0\.1:)?\d{1,5}:\d{1,5}(?:/tcp|/udp)?$")
RUNNER_OPTIONS: dict[str, dict[str, object]] = {
    "npx": {},
    "uvx": {"--python": re.compile(r"^\d+(?:\.\d+){0,2}$").match},
    "docker": {
        "-v": _docker_mount,
        "--volume": _docker_mount,
        "--mount": _docker_mount,
        "-p": _PORTS.match,
        "--publish": _PORTS.match,
        "--name": re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$").match,
        "--init": None,
    },
    "dnx": {},
}
# Options every route of the runner gets anyway (a record that repeats them repeated them on the line).
RUNNER_DEFAULTS = {"npx": {"-y", "--yes"}, "docker": {"-i", "--interactive", "--rm"}, "uvx": set(), "dnx": {"--yes"}}


def _split_glued(name: str, value: str | None) -> tuple[str, str | None]:
    """A flag and its value written as one ("--directory <path>", "--tools=a,b"): apart."""
    for joint in (" ", "="):
        head, found, rest = name.partition(joint)
        if found and FLAG.match(head):
            rest = rest.strip()
            if value is None or value.strip() == name.strip() or not value.strip():
                value = rest
            return head, value
    if value is not None and value.strip() == name.strip():
        value = None  # the seed repeats the flag as its value
    return name, value


def _value(arg: Arg, value: str | None, what: str) -> str:
    """A record's value for an argument, or a placeholder: a value that reads as one ("$DIR", "<path>", "YOUR_KEY",
    "{{x.y}}") becomes "<hint>"."""
    if value is None or value == "":
        hint = re.sub(r"[^A-Za-z0-9_.-]+", "_", arg.hint or arg.name.lstrip("-") or "value").strip("_") or "value"
        return placeholder(hint[:60])
    value = value.strip()
    looks_like = re.fullmatch(
        r"\$\{[^{}]+\}|\$[A-Za-z_]\w*|<[^<>]+>|\{\{[^{}]+\}\}|\{[A-Za-z_][\w.-]*\}|YOUR[_-][\w-]+|"
        r"(?:/path/to|~|/Users/|/home/|C:[/\\]|/ABSOLUTE).*|\w+://[^/\s@]+:[^/\s@]+@.*",
        value,
        re.I,
    )
    if looks_like:
        inner = re.sub(r"[^A-Za-z0-9_.-]+", "_", value).strip("_") or "value"
        return placeholder(inner[:60])
    return plain(value, what)


def resolve_args(args: list[Arg], what: str) -> list[tuple[str, str | None]]:
    """Each argument checked, as (flag, value) for a named one (value None: a flag alone) and (value, None) for a
    positional one; a positional value that starts with "-" is refused, as is a flag's value that does."""
    out: list[tuple[str, str | None]] = []
    for number, arg in enumerate(args[:MAX_ARGS]):
        where = f"{what} {number + 1}"
        if arg.kind == "named":
            name, value = _split_glued(plain(arg.name.strip(), where), arg.value)
            if not FLAG.match(name):
                raise Refused(f"{where}: {name[:40]!r} is not a flag")
            if arg.boolean or (value is None and not arg.required and arg.value is None and not arg.hint):
                out.append((name, None))
                continue
            if value is None and not arg.required:
                continue  # an optional flag the record gives no value for
            written = _volume(value) if name in ("-v", "--volume") and value else _value(arg, value, where)
            if written.startswith("-") and not re.fullmatch(r"-\d+(?:\.\d+)?", written):
                raise Refused(f"{where}: the value of {name} starts with '-' ({written[:40]!r})")
            out.append((name, written))
        else:
            if arg.value is None and not arg.required:
                continue
            written = _value(arg, arg.value, where)
            if written.startswith("-"):
                raise Refused(f"{where}: a positional argument starts with '-' ({written[:40]!r}); only a flag may")
            if not written.startswith("<") and any(SCRIPT.search(w) for w in written.split()):
                raise Refused(f"{where}: runs a file of a local checkout ({written[:40]!r}), not the package")
            out.append((written, None))
    if len(args) > MAX_ARGS:
        raise Refused(f"{what}: more than {MAX_ARGS} arguments")
    return out


class PackageInstall(BaseModel):
    """A package run locally by the runner of its registry. Only checked parts: the model refuses to hold
    anything else, whoever builds it (a source, or details read back from a catalogue)."""

    kind: Literal["package"] = "package"
    registry: Registry = Field(description="npm, pypi, oci (docker) or nuget.")
    identifier: str
    version: str = Field("", description="The version the source pins, '' where it pins none.")
    runtime_args: list[str] = Field(default_factory=list, description="The runner's own options (allow-listed).")
    package_args: list[str] = Field(
        default_factory=list, description="Arguments for the server, a flag apart from its value."
    )
    env: list[Variable] = Field(default_factory=list, max_length=MAX_VARIABLES)
    transport: str = "stdio"
    source: str = Field("", description="Which catalogue gave the route: registry, toolsdk, docker.")

    @model_validator(mode="after")
    def _checked(self):
        check_identifier(self.registry, self.identifier)
        if check_version(self.registry, self.version) != self.version:
            raise Refused(f"the version {self.version!r} is not written as {self.registry} writes it")
        allowed = RUNNER_OPTIONS[self.command]
        index = 0
        while index < len(self.runtime_args):
            option = plain(self.runtime_args[index], "a runner option")
            if option not in allowed:
                raise Refused(f"{self.command} option {option[:40]!r} is not one Tender passes on")
            check = allowed[option]
            if check is not None:
                value = self.runtime_args[index + 1] if index + 1 < len(self.runtime_args) else ""
                if not callable(check) or not check(plain(value, "a runner option's value")):
                    raise Refused(f"{self.command} option {option} {value[:40]!r} is not allowed")
                index += 1
            index += 1
        for value in self.package_args:
            plain(value, "an argument")
        if len(self.package_args) > 2 * MAX_ARGS:
            raise Refused(f"more than {MAX_ARGS} arguments")
        if self.transport not in ("stdio", "streamable-http", "sse"):
            raise Refused(f"the transport {self.transport[:30]!r} is not stdio, streamable-http or sse")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def command(self) -> str:
        return RUNNERS[self.registry]

    @property
    def spec(self) -> str:
        """The package as its runner names it, pinned where the source pins it."""
        if not self.version:
            return self.identifier
        if self.registry == "oci":
            return (
                f"{self.identifier}@{self.version}"
                if OCI_DIGEST.match(self.version)
                else f"{self.identifier}:{self.version}"
            )
        return f"{self.identifier}@{self.version}"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def args(self) -> list[str]:
        """The command's arguments, list items: `npx -y pkg@1.2.3 ...`, `uvx pkg@1.2.3 ...`, `docker run -i --rm -e
        NAME ... image:tag ...`, `dnx pkg@1.2.3 --yes ...`."""
        if self.registry == "npm":
            return ["-y", *self.runtime_args, self.spec, *self.package_args]
        if self.registry == "pypi":
            return [*self.runtime_args, self.spec, *self.package_args]
        if self.registry == "oci":
            passed = [part for v in self.env for part in ("-e", v.name)]
            return ["run", "-i", "--rm", *passed, *self.runtime_args, self.spec, *self.package_args]
        return [self.spec, "--yes", *self.runtime_args, *self.package_args]


class RemoteInstall(BaseModel):
    """A server hosted elsewhere, reached over streamable HTTP or SSE."""

    kind: Literal["remote"] = "remote"
    url: str
    transport: Literal["streamable-http", "sse"] = "streamable-http"
    headers: list[Variable] = Field(default_factory=list, max_length=MAX_VARIABLES)
    source: str = ""

    @model_validator(mode="after")
    def _checked(self):
        check_remote_url(self.url)
        return self


LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1"}


def check_remote_url(url: str) -> str:
    from urllib.parse import urlsplit

    if len(url) > MAX_URL_CHARS:
        raise Refused(f"the URL is over {MAX_URL_CHARS} characters")
    if _CONTROL.search(url) or " " in url:
        raise Refused("the URL holds a space, a line break or a control character")
    parts = urlsplit(url)
    if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in LOCAL_HOSTS):
        raise Refused(f"the URL {url[:60]!r} is not https")
    if not parts.hostname or parts.hostname in LOCAL_HOSTS:
        raise Refused(f"the URL {url[:60]!r} names no remote host")
    if parts.username or parts.password:
        raise Refused("the URL carries a user name or password")
    return url


Install = Annotated[PackageInstall | RemoteInstall, Field(discriminator="kind")]
INSTALL: TypeAdapter[PackageInstall | RemoteInstall] = TypeAdapter(Install)


def package(
    registry: str,
    identifier: str,
    version: str = "",
    *,
    runner_hint: str = "",
    arguments: list[Arg] = (),  # type: ignore[assignment]
    runner_arguments: list[Arg] = (),  # type: ignore[assignment]
    env: list[Variable] = (),  # type: ignore[assignment]
    transport: str = "stdio",
    source: str = "",
) -> PackageInstall:
    """A route from a record's parts, checked; Refused, saying why, for anything Tender would not run.

    Runner options misfiled among the package's arguments (the seed's uvx `--directory <path>`, docker `-i --rm -e
    NAME`) are read as the runner's: the ones it always gets are dropped, a docker `-e NAME` becomes a variable, the
    rest must pass the runner's allow-list."""
    registry = {"docker": "oci"}.get(registry.lower().strip(), registry.lower().strip())
    if registry not in RUNNERS:
        raise Refused(f"{registry[:30]!r} is not a package registry Tender knows (npm, pypi, oci, nuget)")
    runner = RUNNERS[registry]
    identifier = identifier.strip()
    if registry == "oci":  # an image named with its tag or digest: the version apart
        image, at, digest = identifier.partition("@")
        path, colon, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
        written = digest if at else tag if colon else ""
        if written:
            if version and version.strip() not in (written, "latest"):
                raise Refused(f"the image {identifier[:60]!r} names another version than {version[:30]!r}")
            identifier, version = (image if at else path), written
    if runner_hint and runner_hint.strip() != runner:
        raise Refused(f"the runtimeHint {runner_hint[:30]!r} is not the runner of {registry} ({runner})")
    check_identifier(registry, identifier.strip())
    version = check_version(registry, version)
    variables = {v.name: v for v in env}
    runtime: list[str] = []
    after: list[str] = []
    for bucket, args in (("runner", list(runner_arguments)), ("package", list(arguments))):
        for flag, value in resolve_args(args, f"{bucket} argument"):
            if flag.startswith("-") and (bucket == "runner" or _is_runner_option(runner, flag)):
                if flag in RUNNER_DEFAULTS.get(runner, set()):
                    continue
                if runner == "docker" and flag in ("-v", "--volume") and value:
                    value = _volume(value)
                if runner == "docker" and flag in ("-e", "--env"):
                    name = (value or "").split("=", 1)[0]
                    if not VARIABLE.match(name):
                        raise Refused(f"docker {flag} {str(value)[:40]!r} names no variable")
                    variables.setdefault(name, Variable(name=name, required=True))
                    continue
                if runner == "uvx" and flag == "--with" and value == identifier:
                    continue  # the package itself, again
                runtime += [flag] if value is None else [flag, value]
            elif value is None and flag.lower() == identifier.lower():
                continue  # the package's own name again (the seed's `uvx pkg pkg`)
            elif value is None and registry == "oci" and is_image(flag):
                raise Refused(f"the record names two images ({identifier[:40]} and {flag[:40]})")
            else:
                after += [flag] if value is None else [flag, value]
    return checked(
        PackageInstall,
        registry=registry,
        identifier=identifier.strip(),
        version=version,
        runtime_args=runtime,
        package_args=after,
        env=list(variables.values()),
        transport=transport or "stdio",
        source=source,
    )


def checked(model: type[BaseModel], **fields):
    """The model built from these fields, or Refused with the first reason it gives."""
    try:
        return model(**fields)
    except ValidationError as error:
        first = error.errors()[0]
        raise Refused(str(first["msg"]).removeprefix("Value error, ")) from None


def is_image(word: str) -> bool:
    """An image reference with a tag or a registry path ("mcp/grafana", "ghcr.io/x/y:latest"), not a word."""
    base = word.split("@", 1)[0]
    path, _, tag = base.rpartition(":") if ":" in base.rsplit("/", 1)[-1] else (base, "", "")
    return bool(OCI_IMAGE.match(path) and ("/" in path or tag) and "." not in path.rsplit("/", 1)[-1])


_EXAMPLE_PATH = re.compile(r"^(?:~|\$\w+|/path/to|/Users/|/home/\w+|[A-Za-z]:[/\\])|your|path", re.I)


def _volume(value: str) -> str:
    """A volume whose host side is a README's example ("~/.aws:/root/.aws", "/path/to/storage:/storage") as the
    user's to name ("<aws>:/root/.aws"); a named volume and a placeholder stay; any other fixed path of the user's
    machine ("/:/host") stays as written, for the check to refuse."""
    host, colon, inside = value.partition(":")
    if not colon or PLACEHOLDER.match(host) or re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", host):
        return value
    if not _EXAMPLE_PATH.search(host):
        return value
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", host.rstrip("/").rsplit("/", 1)[-1]).strip("_") or "folder"
    return f"<{name}>:{inside}"


# Options of each runner that a record may have written among the package's arguments.
_RUNNER_WORDS = {
    "npx": {"-y", "--yes", "--call", "-c", "--package", "-p"},
    "uvx": {
        "--directory",
        "--with",
        "--with-editable",
        "--with-requirements",
        "--python",
        "--from",
        "-p",
        "--index-url",
    },
    "docker": {
        "-i",
        "--interactive",
        "--rm",
        "-e",
        "--env",
        "-v",
        "--volume",
        "--mount",
        "-p",
        "--publish",
        "--name",
        "--privileged",
        "--network",
        "--net",
        "--cap-add",
        "--pid",
        "--device",
        "--entrypoint",
        "-u",
        "--user",
        "--security-opt",
        "--env-file",
        "--init",
        "-t",
        "--tty",
        "-d",
        "--detach",
    },
    "dnx": {"--yes"},
}


def _is_runner_option(runner: str, flag: str) -> bool:
    return flag in _RUNNER_WORDS.get(runner, set())


def remote(url: str, transport: str = "", headers: list[Variable] = (), source: str = "") -> RemoteInstall:  # type: ignore[assignment]
    """A remote route, checked: https only, a host that is not this machine, no credentials in the URL."""
    url = url.strip()
    check_remote_url(url)
    transport = {"streamable": "streamable-http", "http": "streamable-http", "": ""}.get(transport, transport)
    if not transport:
        transport = "sse" if url.rstrip("/").endswith("/sse") else "streamable-http"
    if transport not in ("streamable-http", "sse"):
        raise Refused(f"the transport {transport[:30]!r} is not streamable-http or sse")
    return checked(RemoteInstall, url=url, transport=transport, headers=list(headers), source=source)
