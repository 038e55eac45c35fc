"""Everything a user may type has help: every command (with an example where it does something) and every option."""

import click

from tender.cli import main


def commands(group: click.Group, path=("tender",)):
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def test_every_command_and_option_has_help():
    missing = []
    for path, command in commands(main):
        if not (command.help or "").strip():
            missing.append(" ".join(path))
        for param in command.params:
            if isinstance(param, click.Option) and not (param.help or "").strip():
                missing.append(f"{' '.join(path)} {param.opts[0]}")
    assert missing == []


def test_commands_that_read_a_catalogue_take_db():
    reading = {
        ("tender", "recommend"),
        ("tender", "explain"),
        ("tender", "serve"),
        ("tender", "eval"),
        ("tender", "catalog", "search"),
        ("tender", "catalog", "info"),
        ("tender", "catalog", "categories"),
    }
    found = {path for path, command in commands(main) if any("--db" in p.opts for p in command.params)}
    assert reading <= found
