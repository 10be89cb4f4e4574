"""Command line: parses arguments, calls one stage function, prints. No logic lives here."""

from __future__ import annotations

import sys
import threading
import time

import click

from seqprof.errors import SeqprofError


class _Group(click.Group):
    """Turns SeqprofError into one line on stderr and exit code 2, never a traceback; an interrupt exits
    130 (SIGTERM 143) after the writers have removed their temp files."""

    def invoke(self, ctx: click.Context):
        import signal

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _terminated)
        try:
            return super().invoke(ctx)
        except SeqprofError as exc:
            click.echo(f"seqprof: error: {_printable(str(exc))}", err=True)
            sys.exit(2)
        except KeyboardInterrupt:
            click.echo("seqprof: interrupted", err=True)
            sys.exit(130)


def _printable(text: str) -> str:
    """Control characters from user input (a newline in a path) shown escaped: one error line stays one."""
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def _terminated(signum, frame) -> None:
    raise SystemExit(143)  # unwinds like an exception: `finally` blocks remove temp files


@click.group(cls=_Group)
@click.version_option(package_name="seqprof")
def main() -> None:
    """seqprof: profile a fine-tuning dataset and lint its training config before any GPU run."""


# Commands are registered below, one section each: analyze, buckets, lint, rules, memory.

MAX_BUCKETS = 256  # more buckets than a trainer would use; the exact solver stays within seconds


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
@click.option("--num-buckets", "-k", type=click.IntRange(1, MAX_BUCKETS),
              help="Also solve this many padding-optimal buckets and compare batching strategies.")
@click.option("--batch-size", "-b", type=click.IntRange(1), help="Rows per batch for --num-buckets (default 8).")
@click.option("--html", type=click.Path(dir_okay=False), help="Also write a self-contained HTML report.")
@click.option("--workers", "-j", type=click.IntRange(1, 512), default=1, show_default=True,
              help="Processes that render and count batches (tokenizing already uses every core); "
                   "worth it for chat data on many cores.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="ray: one Ray Data task per shard on RAY_ADDRESS's cluster (else a local one); same result.")
@click.option("--split", help="Split of a datasets DatasetDict or hub dataset (default: train).")
@click.option("--subset", help="Subset (config) of a hub dataset in the local HF cache.")
@click.option("--no-cache", is_flag=True,
              help="Tokenize again even when the cache holds this input's profile (also SEQPROF_NO_CACHE=1).")
def analyze(data, tokenizer, chat_template, schema, fields, fmt, output, coverage, multiple_of, skip_bad_rows,
            num_buckets, batch_size, html, workers, engine, split, subset, no_cache):
    """Profile DATA's token lengths exactly as the trainer will see them."""
    import json

    from seqprof.dataset.analyze import (
        AnalyzeOptions,
        build_profile,
        default_dataset_path,
        input_files,
    )
    from seqprof.dataset.tokenizers import DEFAULT_TOKENIZER
    from seqprof.outputs import check_output

    if data is None:
        data = str(default_dataset_path())
        click.echo(f"seqprof: no DATA given; profiling the embedded default dataset {data}", err=True)
    if tokenizer is None:
        click.echo(f"seqprof: no --tokenizer given; using the embedded default {DEFAULT_TOKENIZER!r}", err=True)
    options = AnalyzeOptions(tokenizer=tokenizer, chat_template=chat_template, schema=schema,
                             columns=_parse_fields(fields), skip_bad_rows=skip_bad_rows, coverage=coverage,
                             multiple=multiple_of, cache=not no_cache, split=split, subset=subset,
                             workers=workers, engine=engine)
    if output or html:  # before tokenizing, not after: no output may replace an input or the other output
        inputs = input_files(data, options)
        if output:
            check_output(output, "--output", inputs=inputs, others=[(html, "--html")])
        if html:
            check_output(html, "--html", inputs=inputs)
    with _progress() as progress:
        profile = build_profile(data, options, progress=progress,
                                on_skip=lambda loc, why: click.echo(f"seqprof: skipped {loc}: {why}", err=True),
                                on_note=lambda note: click.echo(f"seqprof: note: {note}", err=True))
    bucket_report = None
    if num_buckets:
        from seqprof.batching.buckets import build_bucket_report

        bucket_report = build_bucket_report(profile.sequence, num_buckets, batch_size=batch_size,
                                            max_seq_length=profile.recommendation.max_seq_length)
    if output:
        profile.save(output)
    if html:
        from seqprof.render.report import DEFAULT_REPORT_BUCKETS, write_report

        if bucket_report is not None:
            write_report(html, profile, buckets=bucket_report)
        else:
            write_report(html, profile, num_buckets=DEFAULT_REPORT_BUCKETS)
    if fmt == "json":
        payload = profile.to_dict()
        if bucket_report is not None:
            payload["buckets"] = bucket_report.to_dict()
        click.echo(json.dumps(payload, indent=2))
    else:
        from rich.console import Console

        from seqprof.render.profile_text import profile_renderable

        console = Console()
        console.print(profile_renderable(profile))
        if bucket_report is not None:
            from seqprof.render.buckets_text import bucket_report_renderable

            console.print(bucket_report_renderable(bucket_report), crop=False)


class _progress:
    """Rows and tokens counted so far, and their rates, on stderr, only when stderr is a terminal."""

    def __enter__(self):
        self._bar = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(SpinnerColumn(), TextColumn("tokenizing: {task.fields[status]}"),
                                 TimeElapsedColumn(), transient=True, console=Console(stderr=True))
            self._bar.start()
            self._task = self._bar.add_task("rows", total=None, status="starting")
            self._start = time.monotonic()
        return self._update if self._bar else None

    def _update(self, rows: int, tokens: int) -> None:
        elapsed = max(time.monotonic() - self._start, 1e-6)
        status = f"{rows:,} rows, {tokens:,} tokens ({rows / elapsed:,.0f} rows/s, {tokens / elapsed:,.0f} tokens/s)"
        self._bar.update(self._task, completed=rows, status=status)

    def __exit__(self, *exc):
        if self._bar:
            self._bar.stop()
        return False


@main.command()
def tokenizers() -> None:
    """List the tokenizers installed packages ship (usable offline as --tokenizer NAME)."""
    from seqprof.dataset.tokenizers import DEFAULT_TOKENIZER, packaged_tokenizer_names

    for name in packaged_tokenizer_names():
        click.echo(name + ("  (default)" if name == DEFAULT_TOKENIZER else ""))


# --- buckets ---------------------------------------------------------------------------------------------


@main.command()
@click.argument("source", metavar="DATA|PROFILE")
@click.option("--num-buckets", "-k", type=click.IntRange(1, MAX_BUCKETS), required=True,
              help="Most buckets to solve for.")
@click.option("--batch-size", "-b", type=click.IntRange(1),
              help="Rows per batch (default 8, the transformers default).")
@click.option("--token-budget", "-n", type=click.IntRange(1),
              help="Tokens per batch instead: a batch grows while (n+1)*longest <= budget.")
@click.option("--max-seq-length", "-L", type=click.IntRange(1),
              help="Truncate rows to this length (default: the profile's recommendation).")
@click.option("--tokenizer", "-t", help="Tokenizer for raw DATA (as for analyze).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
              help="Seed of the simulated epochs.")
@click.option("--epochs", type=click.IntRange(2, 100), default=4, show_default=True,
              help="Simulated epochs per random strategy (mean and spread).")
@click.option("--workers", "-j", type=click.IntRange(1, 512), default=1, show_default=True,
              help="Processes counting raw DATA (as for analyze).")
@click.option("--config", "config", type=click.Path(dir_okay=False),
              help="Training config: with --gpu, each strategy's step and epoch time (micro batch, length, LoRA, "
                   "checkpointing, accumulation, GPUs from it unless given here).")
@click.option("--gpu", help="GPU to time the strategies on (H200, H100, A100, B200, DGX Spark, ...).")
@click.option("--model-config", type=click.Path(), help="The model's config.json, when not found locally.")
@click.option("--calibration", type=click.Path(dir_okay=False),
              help="A `seqprof calibrate` file for your GPU (default: measured H200, scaled for others).")
def buckets(source, num_buckets, batch_size, token_budget, max_seq_length, tokenizer, fmt, seed, epochs, workers,
            config, gpu, model_config, calibration):
    """Solve padding-optimal bucket boundaries and compare every batching strategy on them."""
    import json

    from seqprof.batching.buckets import build_bucket_report, histogram_from_source

    timer = None
    if config or gpu:
        if not (config and gpu):
            raise click.UsageError("timing the strategies needs both --config and --gpu")
        from seqprof.config.read import read_plan
        from seqprof.predict.runtime import epoch_timer

        plan = read_plan(config)
        if batch_size is None and token_budget is None and plan.get("micro_batch_size"):
            batch_size = int(plan.get("micro_batch_size"))
        if max_seq_length is None and plan.get("max_seq_length"):
            max_seq_length = int(plan.get("max_seq_length"))
        timer = epoch_timer(plan, gpu=gpu, model_config=model_config, calibration=calibration,
                            micro_batch_size=batch_size, max_seq_length=max_seq_length)
    hist = histogram_from_source(source, tokenizer=tokenizer, workers=workers)
    report = build_bucket_report(hist, num_buckets, batch_size=batch_size, token_budget=token_budget,
                                 max_seq_length=max_seq_length, seed=seed, epochs=epochs, timer=timer)
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        from rich.console import Console

        from seqprof.render.buckets_text import bucket_report_renderable

        wide = None if sys.stdout.isatty() else 140  # piped or captured: room for the timed columns
        Console(width=wide).print(bucket_report_renderable(report), crop=False)  # the paste lines stay whole


# --- lint ------------------------------------------------------------------------------------------------


@main.command()
@click.argument("configs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--data", help="Dataset (or a saved profile) for the data-aware rules.")
@click.option("--no-config-data", "no_config_data", is_flag=True,
              help="Without --data/--profile, do not read the datasets the config names (local files, HF cache).")
@click.option("--profile", "profile_path", type=click.Path(dir_okay=False),
              help="A profile saved by `seqprof analyze --output` (no tokenizer needed).")
@click.option("--tokenizer", "-t", help="Tokenizer for --data (as for analyze).")
@click.option("--dialect", help="Force the config dialect instead of detecting it.")
@click.option("--versions", metavar="SPEC",
              help="Framework versions the run uses, e.g. trl==0.19.1,transformers==4.57 (default: the pins in "
                   "requirements*.txt, pyproject.toml, uv.lock ... beside the config).")
@click.option("--gpu", help="GPU model for the memory rules (e.g. H100).")
@click.option("--gpu-memory", help="GPU memory for the memory rules (e.g. 80GB).")
@click.option("--gpus", "world_size", type=click.IntRange(1), help="GPUs the run uses, when the config does not say.")
@click.option("--model-config", type=click.Path(),
              help="The model's config.json (or its folder) for the memory rules, when it is not found locally.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True)
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]),
              help="Exit 1 on findings at or above this severity (default: settings, else warning).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--select", multiple=True, help="Only these rule codes or prefixes (e.g. SP1, SP301); repeatable.")
@click.option("--ignore", multiple=True, help="Skip these rule codes or prefixes; repeatable.")
@click.option("--html", type=click.Path(dir_okay=False), help="Also write a self-contained HTML report.")
@click.option("--workers", "-j", type=click.IntRange(1, 512), default=1, show_default=True,
              help="Processes counting raw --data (as for analyze).")
@click.option("--gpu-price", type=click.FloatRange(0, 1e6, min_open=True), metavar="USD_PER_HOUR",
              help="Price of one GPU-hour, for the run's cost (also [tool.seqprof] gpu-price).")
@click.option("--calibration", type=click.Path(dir_okay=False),
              help="A `seqprof calibrate` file for your GPU (default: measured H200, scaled for others).")
def lint(configs, data, profile_path, tokenizer, dialect, gpu, gpu_memory, world_size, model_config, fmt, fail_on,
         exit_zero, select, ignore, html, workers, gpu_price, calibration, no_config_data, versions):
    """Lint training CONFIGS: what will waste or break the run, on which line, and the fix."""
    from seqprof.lint.run import LintOptions, exit_code, lint_paths
    from seqprof.render.lint_output import render

    if versions:
        from seqprof.config.pins import parse_spec

        parse_spec(versions)  # a malformed spec is one error line, before any config is read

    if gpu and gpu_memory:
        raise click.UsageError("give --gpu or --gpu-memory, not both")
    options = LintOptions(data=data, profile=profile_path, tokenizer=tokenizer, dialect=dialect, gpu=gpu,
                          versions=versions, gpu_memory=gpu_memory, world_size=world_size, model_config=model_config,
                          select=tuple(select),
                          ignore=tuple(ignore), fail_on=fail_on, workers=workers, gpu_price=gpu_price,
                          calibration=calibration, config_data=not no_config_data)
    if html:
        from seqprof.lint.run import lint_inputs
        from seqprof.outputs import check_output

        check_output(html, "--html", inputs=lint_inputs(configs, options))
    result = lint_paths(configs, options, warn=lambda line: click.echo(line, err=True))
    for error in result.errors:
        click.echo(f"seqprof: error: {error}", err=True)
    if html:
        from seqprof.render.report import write_report

        write_report(html, lint=result, lint_options=options)
    text = render(result, fmt)
    if text:
        click.echo(text)
    sys.exit(exit_code(result, fail_on, exit_zero))


# --- rules -----------------------------------------------------------------------------------------------


@main.command()
@click.argument("rule", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--rule-dir", "rule_dirs", multiple=True, type=click.Path(file_okay=False, exists=True),
              help="Extra rule directory (besides the settings' rule-dirs); repeatable.")
def rules(rule, fmt, rule_dirs):
    """List the lint rules, or explain RULE (a code like SP101 or a slug): why, how to fix, examples."""
    import json
    from pathlib import Path

    from seqprof.lint.rules import find_rule, load_rules
    from seqprof.render.lint_output import (
        render_rule_doc,
        render_rule_list,
        rule_to_dict,
    )
    from seqprof.settings import find_settings

    settings = find_settings(Path.cwd())
    loaded = load_rules(tuple(settings.rule_dirs) + tuple(rule_dirs))
    if rule is None:
        if fmt == "json":
            click.echo(json.dumps([rule_to_dict(r) for r in loaded], indent=2))
        else:
            click.echo(render_rule_list(loaded))
        return
    found = find_rule(loaded, rule)
    click.echo(json.dumps(rule_to_dict(found), indent=2) if fmt == "json" else render_rule_doc(found))


# --- memory ----------------------------------------------------------------------------------------------


@main.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--model-config", type=click.Path(),
              help="The model's config.json (or its directory), when the config's model is not cached locally.")
@click.option("--gpu", help="GPU to check the peak against (H100, H200, A100 40GB, L40S, RTX 4090, ...).")
@click.option("--gpu-memory", help="GPU memory to check against instead: 80GB = 80e9 bytes (74.5 GiB); "
                                   "80GiB = binary; or name the card with --gpu.")
@click.option("--dialect", help="Config dialect, when detection is not enough (e.g. trl_dpo).")
@click.option("--prompt-length", type=click.IntRange(min=1),
              help="GRPO: the longest prompt's tokens (TRL pads each generation batch to its longest prompt).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def memory(config, model_config, gpu, gpu_memory, dialect, prompt_length, fmt):
    """Predict the peak GPU memory of CONFIG's training step, component by component."""
    import json

    from seqprof.predict.memory_plan import memory_report
    from seqprof.render.memory_text import format_memory, memory_json

    if gpu and gpu_memory:
        raise click.UsageError("give --gpu or --gpu-memory, not both")
    facts = memory_report(config, model_config=model_config, gpu=gpu, gpu_memory=gpu_memory, dialect=dialect,
                          prompt_length=prompt_length)
    click.echo(json.dumps(memory_json(facts), indent=2) if fmt == "json" else format_memory(facts), nl=False)


@main.command()
@click.option("--model-config", required=True, type=click.Path(),
              help="The model's config.json (or its folder): a randomly initialised copy is timed, nothing downloaded.")
@click.option("--gpu-name", help="Name the calibration for this GPU (default: what CUDA reports).")
@click.option("--lora", is_flag=True, help="Time LoRA steps (adapters on q_proj, v_proj) instead of a full fine-tune.")
@click.option("--gradient-checkpointing", is_flag=True, help="Time with gradient checkpointing on.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default="seqprof-calibration.json", show_default=True,
              help="Where to write the calibration (pass it to buckets/lint with --calibration).")
def calibrate(model_config, gpu_name, lora, gradient_checkpointing, output):
    """Time real training steps on this GPU (~1-2 min) and fit the step-time model to them (needs seqprof[calibrate])."""
    import json

    from seqprof.outputs import check_output, write_output
    from seqprof.predict.calibrate import calibrate as run_calibration
    from seqprof.predict.memory.setup import TrainingSetup

    check_output(output, "--output", inputs=[model_config])
    setup = TrainingSetup(adapter="lora" if lora else None, gradient_checkpointing=gradient_checkpointing)
    calibration, rows = run_calibration(model_config, gpu=gpu_name, setup=setup)
    for row in rows:
        seconds = "out of memory" if row.get("oom") else f"{row['seconds'] * 1e3:,.1f} ms"
        click.echo(f"  {row['rows']:>3} x {row['length']:>5} tokens: {seconds}", err=True)
    write_output(output, json.dumps({**calibration.to_dict(), "measurements": rows}, indent=1) + "\n", "--output")
    click.echo(f"seqprof: wrote {output} ({calibration.gpu}); use it with --calibration {output}", err=True)
