"""Command line: parses arguments, calls one stage function, prints. No logic lives here."""

from __future__ import annotations

import sys

import click

from .errors import SeqprofError


class _Group(click.Group):
    """Turns SeqprofError into one line on stderr and exit code 2, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SeqprofError as exc:
            click.echo(f"seqprof: error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(package_name="seqprof")
def main() -> None:
    """seqprof: profile a fine-tuning dataset and lint its training config before any GPU run."""


# Commands are registered below, one section each: analyze, buckets, lint, rules, memory.
