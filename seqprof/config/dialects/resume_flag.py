"""`resume_from_checkpoint: true` in a file whose reader hands it to Trainer.train: a first run stops.

transformers' Trainer.train takes `resume_from_checkpoint=True` to mean "the newest checkpoint-* in output_dir"
(trainer.py: `get_last_checkpoint(args.output_dir)`, then `ValueError("No valid checkpoint found in output
directory")` when there is none; os.listdir raises first when output_dir does not exist yet). A YAML `true` reaches
it unchanged: TrainingArguments.resume_from_checkpoint is `str | None` and parse_dict / parse_yaml_file convert
nothing. So the file works on a re-run and stops every fresh one, which is what a committed config gets.

Who hands it on: LLaMA-Factory's workflows always do (sft/dpo/kto/pt: `trainer.train(resume_from_checkpoint=
training_args.resume_from_checkpoint)`), and its parser resumes from output_dir's newest checkpoint by itself when
the key is unset (hparams/parser.py, unless overwrite_output_dir); it drops the key for rm/ppo full and freeze
runs. A TRL or transformers file is handed on only where the project's script that parses it passes the field to
`.train(resume_from_checkpoint=...)` (open-r1's and the handbook's `checkpoint = training_args.
resume_from_checkpoint`); TRL's own `trl sft` scripts call `trainer.train()` and never read it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from seqprof.config.loader import LoadedConfig
from seqprof.config.plan import ConfigDiagnostic

KEY = "resume_from_checkpoint"
LLAMAFACTORY_DROPS = ("rm", "ppo")  # full/freeze: "Cannot resume from checkpoint in current stage"; ppo+lora refuses


def resume_needs_checkpoint(cfg: LoadedConfig, dialect: str) -> list[ConfigDiagnostic]:
    """The `resume_needs_checkpoint` diagnostic where the file sets `resume_from_checkpoint: true` and its reader
    hands that to Trainer.train; none for a file named as a resume run (`*_resume.yaml`), whose first run is meant
    to find a checkpoint, or where a launch line passes the key itself."""
    if cfg.data.get(KEY) is not True or "resume" in Path(cfg.path).stem.lower():
        return []
    from seqprof.config.launches import launch_overrides

    if KEY in launch_overrides(cfg.path):
        return []
    if dialect == "llamafactory":
        stage = str(cfg.data.get("stage", "sft")).lower()
        if cfg.data.get("do_train") is not True or stage in LLAMAFACTORY_DROPS:
            return []
        reader = "LLaMA-Factory's workflow passes it to Trainer.train"
        instead = ("remove it: LLaMA-Factory resumes from output_dir's newest checkpoint by itself when it is unset "
                   "(and overwrite_output_dir is off)")
    else:
        where = _script_passing_it(cfg.path, cfg.data)
        if where is None:
            return []
        reader = f"{where} passes it to trainer.train"
        instead = "remove it, or give the checkpoint's path"
    output_dir = cfg.data.get("output_dir")
    folder = f" ({output_dir})" if isinstance(output_dir, str) and output_dir else ""
    return [ConfigDiagnostic(
        kind="resume_needs_checkpoint", key=KEY, file=cfg.path, line=cfg.line(KEY) or 1, suggestion=instead,
        message=f"resume_from_checkpoint: true resumes from the newest checkpoint in output_dir{folder} and stops a "
                f"run that finds none: {reader}, and transformers' Trainer.train raises \"No valid checkpoint found "
                "in output directory\" (or os.listdir fails on a missing folder): a fresh run of this file fails "
                "before training, and one whose output_dir holds another run's checkpoints resumes from them")]


def _script_passing_it(config_path: str, data: dict) -> str | None:
    """'scripts/sft.py:121' when a project script that parses the config calls `.train(resume_from_checkpoint=X)`
    with X the parsed field (`args.resume_from_checkpoint`) or a name assigned from it, at a place the config's
    own values reach (_reached); None otherwise."""
    from seqprof.config.project_fields import parsed_module, project_root
    from seqprof.config.project_scripts import parser_scripts

    root = project_root(config_path)
    for script in parser_scripts(config_path, [k for k in data if isinstance(k, str)]):
        tree = parsed_module(root / script.file, needs=(KEY,))
        if tree is None:
            continue
        from_field = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and _is_field(node.value)
                      for t in node.targets if isinstance(t, ast.Name)}
        for call, guards in _train_calls(tree, ()):
            for keyword in call.keywords:
                value = keyword.value
                if keyword.arg == KEY and (_is_field(value) or isinstance(value, ast.Name) and value.id in
                                           from_field) and all(_reached(guard, data) for guard in guards):
                    return f"{script.file}:{call.lineno}"
    return None


def _train_calls(node: ast.AST, guards: tuple[ast.expr, ...]):
    """Each `x.train(...)` call under *node*, with the tests of the `if` statements whose body holds it (a call in
    an `else` branch carries the negated test)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "train":
        yield node, guards
    if isinstance(node, ast.If):
        yield from _train_calls(node.test, guards)
        for child in node.body:
            yield from _train_calls(child, guards + (node.test,))
        for child in node.orelse:
            yield from _train_calls(child, guards + (ast.UnaryOp(op=ast.Not(), operand=node.test),))
        return
    for child in ast.iter_child_nodes(node):
        yield from _train_calls(child, guards)


def _reached(test: ast.expr, data: dict) -> bool:
    """Whether an `if` test the config decides lets the call run: `args.k` with k set true in the file, `not
    args.k` with k false or unset (Tomsawyerhu/APR-RL's `if not script_args.evaluate_only:` under
    `evaluate_only: true` never trains). A test of anything else is not the config's to decide: not reached."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if negated else test
    if not isinstance(inner, ast.Attribute):
        return False
    value = data.get(inner.attr)
    return not value if negated else bool(value)


def _is_field(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == KEY
