"""Readings settled in stop 67, on the real files that showed them. Each test also shows the reading without the
evidence that decides it."""

from __future__ import annotations

from pathlib import Path

from seqprof.lint.run import LintOptions, lint_paths


def _fresh(tmp_path: Path, folder: str):
    """A fresh layout of one corpus repository (seqprof caches what it reads of a project per path)."""
    from corpus_layout import lay_out

    return lay_out(tmp_path / f"v{len(list(tmp_path.iterdir())) if tmp_path.exists() else 0}", only=folder)


def _lint(config: Path):
    return lint_paths([config], LintOptions()).files[0]


def _findings(config: Path, key: str, code: str):
    return [f for f in _lint(config).findings if f.key == key and f.code == code]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


WSDM = "Gladiator07__WSDM-Cup-2025-Kaggle"


def test_a_section_spread_into_a_project_subclass_of_training_arguments(tmp_path):
    """train_stage_2_kd.py spreads trainer_args into DistillationTrainingArguments, whose __init__ takes alpha_ce ...
    temperature itself and hands **kwargs to transformers' TrainingArguments: warmup_ratio and group_by_length reach
    TrainingArguments, which transformers 5.15 and 5.2 removed."""
    name = f"{WSDM}/configs__gemma2_9B_stage2_v8.yaml"
    found = _findings(_fresh(tmp_path, WSDM) / name, "trainer_args.warmup_ratio", "SP408")
    assert [(f.severity, f.line) for f in found] == [("error", 62)]
    assert "train_stage_2_kd.py:585" in found[0].message
    assert not [f for f in _lint(_fresh(tmp_path, WSDM) / name).findings if "alpha_ce" in f.key]

    # a subclass whose __init__ takes no **kwargs hands nothing on by name
    tree = _fresh(tmp_path, WSDM)
    _edit(tree / f"{WSDM}/src__train_stage_2_kd.py",
          "temperature=1.0, **kwargs):\n        super().__init__(*args, **kwargs)",
          "temperature=1.0, output_dir=None):\n        super().__init__(*args, output_dir=output_dir)")
    assert not _findings(tree / name, "trainer_args.warmup_ratio", "SP408")


OPEN_R1 = "luohongyin__open-r1"


def test_grpo_groups_against_the_processes_the_launcher_starts(tmp_path):
    """launch.sh runs config_demo.yaml with `accelerate launch --num_processes=3`: TRL derives the generation batch
    4 x 3 x 8 = 96, which no group of num_generations 7 divides, and GRPOConfig refuses it. With 7 processes
    (open-r1's 8 GPUs less one for vLLM) it is 224, seven groups of 32."""
    name = f"{OPEN_R1}/recipes__Qwen2.5-1.5B-Instruct__grpo__config_demo.yaml"
    found = _findings(_fresh(tmp_path, OPEN_R1) / name, "num_generations", "SP460")
    assert [(f.severity, f.line) for f in found] == [("error", 35)]
    assert "= 96" in found[0].message and "launch.sh:2" in found[0].message

    tree = _fresh(tmp_path, OPEN_R1)
    _edit(tree / f"{OPEN_R1}/launch.sh", "--num_processes=3", "--num_processes=7")
    assert not _findings(tree / name, "num_generations", "SP460")

    # a launcher that leaves the count to a variable says nothing
    tree = _fresh(tmp_path, OPEN_R1)
    _edit(tree / f"{OPEN_R1}/launch.sh", "--num_processes=3", "--num_processes=$NUM_GPUS")
    assert not _findings(tree / name, "num_generations", "SP460")


SIMPO = "XuHuang441__SimPO"


def test_pins_of_the_environment_the_launch_lines_run_in(tmp_path):
    """env_install.sh builds the `inpo` environment (transformers 4.53.1, for vLLM decoding) and environment.yml the
    `sim` one (transformers 4.44.2, trl 0.9.6); run_inpo.sh activates .../envs/sim above the lines that train on
    the configs. At 4.44.2 evaluation_strategy still works: an upgrade warning, not a removal."""
    name = f"{SIMPO}/training_configs__gemma-2-9b-it-inpo-iter1.yaml"
    tree = _fresh(tmp_path, SIMPO)
    assert not _findings(tree / name, "evaluation_strategy", "SP408")
    found = _findings(tree / name, "evaluation_strategy", "SP402")
    assert [f.severity for f in found] == ["warning"] and "environment.yml" in found[0].message
    assert "env_install.sh" not in found[0].message

    tree = _fresh(tmp_path, SIMPO)  # the same lines run in `inpo`: its transformers 4.53.1 lacks the key
    launcher = tree / f"{SIMPO}/run_inpo.sh"
    launcher.write_text(launcher.read_text().replace("/envs/sim", "/envs/inpo"))
    assert [f.severity for f in _findings(tree / name, "evaluation_strategy", "SP408")] == ["error"]


HYPER = "allenai__hyperdecoders"


def test_a_condition_that_ends_its_line_reads_the_attribute(tmp_path):
    """The project's Seq2SeqTrainingArguments re-declares adafactor, and its T5Trainer reads it in `if
    self.args.adafactor:`: the key is the project's, whatever transformers dropped."""
    name = f"{HYPER}/hyperdecoder__configs__glue_ablations__glue_manual_generated.json"
    tree = _fresh(tmp_path, HYPER)
    assert not _findings(tree / name, "adafactor", "SP403")
    assert _findings(tree / name, "adafactor", "SP407")

    tree = _fresh(tmp_path, HYPER)
    _edit(tree / f"{HYPER}/hyperdecoder__third_party__trainers__t5_trainer.py", "if self.args.adafactor:", "if False:")
    assert [f.severity for f in _findings(tree / name, "adafactor", "SP403")] == ["warning"]


BADAM = "ElementQi__LLaMA-Factory-Badam"


def test_a_llamafactory_forks_own_parser_decides_quantized_training(tmp_path):
    """LLaMA-Factory-Badam's parser.py lets quantization_bit through with `use_qbadam: true` (its QBAdam method),
    which upstream LLaMA-Factory refuses with a full fine-tune."""
    name = f"{BADAM}/examples__extras__qbadam__qwen2_full_sft.yaml"
    assert not _findings(_fresh(tmp_path, BADAM) / name, "quantization_bit", "SP420")

    tree = _fresh(tmp_path, BADAM)  # the upstream check
    _edit(tree / f"{BADAM}/src__llamafactory__hparams__parser.py", "if finetuning_args.use_qbadam == True:",
          "if False:")
    assert [f.severity for f in _findings(tree / name, "quantization_bit", "SP420")] == ["error"]


REDESIGNED = "nbroad1881__redesigned-train"


def test_a_projects_callback_that_saves_the_model(tmp_path):
    """config.yaml's training_args say save_strategy: "no" over several epochs, but the project's SaveCallback
    writes the model with save_pretrained whenever the metric improves (utils.py on_evaluate)."""
    name = f"{REDESIGNED}/conf__config.yaml"
    assert not _findings(_fresh(tmp_path, REDESIGNED) / name, "save_strategy", "SP301")

    tree = _fresh(tmp_path, REDESIGNED)
    _edit(tree / f"{REDESIGNED}/utils.py", "    def on_evaluate(", "    def after_evaluate(")
    assert _findings(tree / name, "save_strategy", "SP301")


ATOM = "Quinn777__AtomThink"


def test_a_file_parsed_by_the_projects_own_copy_of_llamafactory(tmp_path):
    """run_eval.py hands AtomThink's inference configs to the get_infer_args of its vendored LLaMA-Factory
    (src/llamafactory/hparams/parser.py): LLaMA-Factory reads them, whatever TRL-looking keys they hold."""
    name = f"{ATOM}/configs__inference__atomic.yaml"
    assert _lint(_fresh(tmp_path, ATOM) / name).dialect == "llamafactory"

    tree = _fresh(tmp_path, ATOM)  # a parser of the project's own, not LLaMA-Factory's module
    (tree / f"{ATOM}/src__llamafactory__hparams__finetuning_args.py").unlink()
    assert _lint(tree / name).dialect == "hf"


PEFT_FACTORY = "Wicwik__PEFT-Factory"


def test_a_llamafactory_copy_whose_parser_adds_a_class_picked_at_run_time(tmp_path):
    """PEFT-Factory's parser.py builds `HfArgumentParser(_TRAIN_ARGS + [peft_args_class])`, the class chosen by
    finetuning_type from peft's configs (IA3Config for ia3): task_type and feedforward_modules are that class's,
    not typos, though none of the copy's own classes declares them."""
    name = f"{PEFT_FACTORY}/examples__peft__ia3__llama-3-8b-instruct__train.yaml"
    tree = _fresh(tmp_path, PEFT_FACTORY)
    assert not _findings(tree / name, "task_type", "SP401")
    notes = _findings(tree / name, "task_type", "SP407")
    assert notes and "parser.py:209" in notes[0].message

    tree = _fresh(tmp_path, PEFT_FACTORY)  # the fork's fixed list alone
    _edit(tree / f"{PEFT_FACTORY}/src__llamafactory__hparams__parser.py",
          "HfArgumentParser(_TRAIN_ARGS + [peft_args_class])", "HfArgumentParser(_TRAIN_ARGS)")
    assert [f.severity for f in _findings(tree / name, "task_type", "SP401")] == ["warning"]
