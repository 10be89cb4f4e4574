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


# --- analyze ---------------------------------------------------------------------------------------------


def _parse_fields(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in values:
        role, sep, column = item.partition("=")
        if not sep or not role or not column:
            raise click.BadParameter(f"{item!r} is not ROLE=COLUMN (e.g. text=content)", param_hint="--field")
        out[role] = column
    return out


@main.command()
@click.argument("data", required=False)
@click.option("--tokenizer", "-t", help="Model dir, tokenizer.json, cached hub id, or packaged name.")
@click.option("--chat-template", type=click.Path(dir_okay=False), help="Jinja file overriding the tokenizer's template.")
@click.option("--schema", type=click.Choice(["text", "prompt_completion", "messages", "preference", "alpaca"]),
              help="Force the schema instead of detecting it.")
@click.option("--field", "fields", multiple=True, metavar="ROLE=COLUMN", help="Map a schema field to a column.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Save the profile (for lint/buckets).")
@click.option("--coverage", type=click.FloatRange(0.5, 1.0), default=0.999, show_default=True,
              help="Quantile to cover when covering every row is too costly.")
@click.option("--multiple-of", type=click.IntRange(1), default=64, show_default=True,
              help="Round max_seq_length up to this multiple.")
@click.option("--skip-bad-rows", is_flag=True, help="Skip malformed rows and count them instead of stopping.")
def analyze(data, tokenizer, chat_template, schema, fields, fmt, output, coverage, multiple_of, skip_bad_rows):
    """Profile DATA's token lengths exactly as the trainer will see them."""
    import json

    from .analyze import AnalyzeOptions, build_profile, default_dataset_path
    from .tokenizer_loader import DEFAULT_TOKENIZER

    if data is None:
        data = str(default_dataset_path())
        click.echo(f"seqprof: no DATA given; profiling the embedded default dataset {data}", err=True)
    if tokenizer is None:
        click.echo(f"seqprof: no --tokenizer given; using the embedded default {DEFAULT_TOKENIZER!r}", err=True)
    options = AnalyzeOptions(tokenizer=tokenizer, chat_template=chat_template, schema=schema,
                             columns=_parse_fields(fields), skip_bad_rows=skip_bad_rows, coverage=coverage,
                             multiple=multiple_of)
    with _progress() as progress:
        profile = build_profile(data, options, progress=progress,
                                on_skip=lambda loc, why: click.echo(f"seqprof: skipped {loc}: {why}", err=True))
    if output:
        profile.save(output)
    if fmt == "json":
        click.echo(json.dumps(profile.to_dict(), indent=2))
    else:
        from rich.console import Console

        from .profile_text import profile_renderable

        Console().print(profile_renderable(profile))


class _progress:
    """A rows-counted progress line on stderr, only when stderr is a terminal."""

    def __enter__(self):
        self._bar = None
        if sys.stderr.isatty():
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._bar = Progress(SpinnerColumn(), TextColumn("tokenizing: {task.completed:,} rows"),
                                 TimeElapsedColumn(), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("rows", total=None)
        return (lambda rows: self._bar.update(self._task, completed=rows)) if self._bar else None

    def __exit__(self, *exc):
        if self._bar:
            self._bar.stop()
        return False
