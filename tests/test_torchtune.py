"""torchtune keys checked the way torchtune reads them, on configs copied from torchtune and two projects.

Sources of the configs: tests/data/torchtune/README.md. Signatures and recipe reads:
seqprof/config/dialects/keys/torchtune_components.json (scripts/gen_torchtune_components.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from seqprof.config.dialects.common import load_keys_file
from seqprof.config.loader import load_config
from seqprof.config.read import read_plan
from seqprof.lint.facts import build_facts
from seqprof.lint.rules import find_rule, load_rules
from seqprof.lint.run import lint_plan

DATA = Path(__file__).parent / "data" / "torchtune"
SHIPPED = DATA / "pytorch-torchtune" / "recipes" / "configs"
COMPONENTS = load_keys_file("torchtune_components")


def _signature(component: str) -> dict:
    return COMPONENTS["signatures"][COMPONENTS["paths"][component]]


def _recipe_reads() -> set[str]:
    return set(COMPONENTS["library_keys"]).union(*map(set, COMPONENTS["recipe_keys"].values()))


def _line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing *needle* (a text scan, independent of the loader)."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _warnings(path: Path) -> list[tuple[str, str | None, int]]:
    plan = read_plan(path, "torchtune")
    return [(d.key, d.suggestion, d.line) for d in plan.diagnostics if d.kind == "unknown_key"]


def _checked_component_keys(path: Path) -> int:
    """How many keys of known, **kwargs-free components the file has: the signature check is not vacuous."""
    def walk(node):
        if isinstance(node, dict):
            comp = node.get("_component_")
            if comp in COMPONENTS["paths"] and not _signature(comp)["var_kw"]:
                yield len(node) - 1
            for v in node.values():
                yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)
    return sum(walk(dict(load_config(path).data)))


def test_shipped_configs_have_no_false_warnings() -> None:
    files = sorted(SHIPPED.rglob("*.yaml"))
    assert len(files) == 8
    for path in files:
        assert _checked_component_keys(path) >= 3, path  # their kwargs were really checked
        got = _warnings(path)
        if path.name == "maverick_17B_128E_full.yaml":
            # a real dangling interpolation in torchtune's own file: nothing defines model_dir
            text = path.read_text()
            assert "\nmodel_dir:" not in text
            assert got == [("${model_dir}", None, _line_of(text, "${model_dir}"))]
        else:
            assert got == [], path


def test_third_party_custom_recipe_configs_warn_on_nothing_and_note_their_own_keys() -> None:
    notes = {}
    for path in sorted(DATA.glob("[!p]*/**/*.yaml")) + sorted((DATA / "pls331-torchtune_personify").rglob("*.yaml")):
        plan = read_plan(path, "torchtune")
        assert plan.dialect == "torchtune"
        assert [d for d in plan.diagnostics if d.kind == "unknown_key"] == [], path
        notes[path.name] = sorted(d.key for d in plan.diagnostics if d.kind == "unread_key")
    # keys the projects' own recipes read (custom_generate.py: chat_format, instruct_template; the fork's
    # full_finetune_single_device.py: dump_every_n_step, trainable_param_regex): notes, never warnings
    assert notes == {"custom_lora_single_device.yaml": [], "custom_generation.yaml": ["chat_format", "instruct_template"],
                     "personify_1B_full_single_device.yaml": ["dump_every_n_step", "trainable_param_regex"],
                     "1B_full_single_device.yaml": []}
    assert not {"chat_format", "instruct_template", "dump_every_n_step"} & _recipe_reads()


def test_planted_component_typos_are_caught_with_did_you_mean(tmp_path: Path) -> None:
    text = (SHIPPED / "llama3_2" / "1B_lora_single_device.yaml").read_text()
    assert "lora_rank" in _signature("torchtune.models.llama3_2.lora_llama3_2_1b")["params"]
    assert "weight_decay" in _signature("torch.optim.AdamW")["params"]
    planted = text.replace("  lora_rank:", "  lora_rnak:", 1).replace("  weight_decay:", "  wieght_decay:", 1)
    assert planted.count("lora_rnak") == 1 and planted.count("wieght_decay") == 1
    got = _warnings(_write(tmp_path, "typo.yaml", planted))
    assert got == [("model.lora_rnak", "lora_rank", _line_of(planted, "lora_rnak")),
                   ("optimizer.wieght_decay", "weight_decay", _line_of(planted, "wieght_decay"))]
    # the same key under a component that takes **kwargs (WandBLogger passes them to wandb.init) is fine
    assert _signature("torchtune.training.metric_logging.WandBLogger")["var_kw"] is True
    logger = text + "\nmetric_logger:\n  _component_: torchtune.training.metric_logging.WandBLogger\n  lora_rnak: 1\n"
    assert _warnings(_write(tmp_path, "kw.yaml", logger.replace("metric_logger:", "old_logger:", 1))) == []
    # and under the user's own component, whose signature seqprof cannot know
    own = text.replace("torchtune.models.llama3_2.lora_llama3_2_1b", "my_project.lora_llama3_2_1b", 1)
    assert _warnings(_write(tmp_path, "own.yaml", own.replace("  lora_rank:", "  lora_rnak:", 1))) == []


def test_interpolation_variables_are_used_keys() -> None:
    path = SHIPPED / "dev" / "qwen3B_async_grpo.yaml"
    text = path.read_text()
    # base_model_path is read only as ${base_model_path}; no recipe reads it
    assert "base_model_path" not in _recipe_reads() and text.count("${base_model_path}") >= 1
    plan = read_plan(path, "torchtune")
    assert not [d for d in plan.diagnostics if d.key == "base_model_path"]
    # the ${eval:'${a} * ${b}'} resolver (registered by the async GRPO recipe) reads its nested references
    assert "${eval:'${inference.batch_size}" in text and plan.diagnostics == ()


def test_dangling_interpolations_are_caught(tmp_path: Path) -> None:
    text = (SHIPPED / "llama3_2" / "1B_lora_single_device.yaml").read_text()
    assert "${output_dir}" in text
    planted = text.replace("${output_dir}", "${output_dri}", 1)
    got = _warnings(_write(tmp_path, "d.yaml", planted))
    assert got == [("${output_dri}", "${output_dir}", _line_of(planted, "${output_dri}"))]
    async_text = (SHIPPED / "dev" / "qwen3B_async_grpo.yaml").read_text()
    nested = async_text.replace("${inference.group_size}", "${inference.group_sise}", 1)
    assert _warnings(_write(tmp_path, "n.yaml", nested)) == [
        ("${inference.group_sise}", "${inference.group_size}", _line_of(nested, "group_sise"))]


def test_relative_references_and_resolvers(tmp_path: Path) -> None:
    text = """\
output_dir: /tmp/out
model:
  _component_: torchtune.models.llama3_2.lora_llama3_2_1b
  lora_rank: 8
  lora_alpha: ${.lora_rank}
  lora_dropout: ${..dropout}
  apply_lora_to_mlp: ${oc.env:APPLY_MLP,true}
  apply_lora_to_output: ${oc.select:flags.output,false}
  lora_attn_modules: ${.missing_sibling}
dropout: 0.0
escaped: \\${not_a_reference}
"""
    plan = read_plan(_write(tmp_path, "r.yaml", text), "torchtune")
    dangling = [(d.key, d.line) for d in plan.diagnostics if d.kind == "unknown_key"]
    assert dangling == [("${.missing_sibling}", 9)]
    # settings read through an interpolation get the value it names (OmegaConf's), or none when it is unknowable
    assert (plan.get("lora_alpha"), plan.get("lora_dropout"), plan.get("lora_targets")) == (8, 0.0, None)
    assert plan.setting("lora_alpha").line == 5
    # dropout is read only through ${..dropout}; 'escaped' is a plain top-level key no recipe reads: a note
    assert [(d.kind, d.key) for d in plan.diagnostics if d.kind != "unknown_key"] == [("unread_key", "escaped")]


def test_unread_top_level_key_is_a_torchtune_note_and_a_near_miss_a_warning(tmp_path: Path) -> None:
    text = (SHIPPED / "llama3_2" / "1B_lora_single_device.yaml").read_text()
    assert re.search(r"^batch_size:", text, re.M) and "batch_size" in _recipe_reads()
    planted = re.sub(r"^batch_size:", "batch_sise:", text, flags=re.M) + "my_recipe_flag: 3\n"
    plan = read_plan(_write(tmp_path, "t.yaml", planted), "torchtune")
    assert [(d.kind, d.key, d.suggestion) for d in plan.diagnostics] == [
        ("unknown_key", "batch_sise", "batch_size"), ("unread_key", "my_recipe_flag", None)]
    rules = load_rules()
    report = lint_plan(plan, build_facts(plan), [find_rule(rules, "SP401"), find_rule(rules, "SP407")])
    by_code = {f.code: f for f in report.findings}
    assert by_code["SP407"].severity == "info" and "torchtune ignores it" in by_code["SP407"].message
    assert "HfArgumentParser" not in by_code["SP407"].message
    assert by_code["SP401"].line == _line_of(planted, "batch_sise")


# --- a component path an older torchtune had (keys/torchtune_history.json, scripts/gen_torchtune_history.py) -----
# bahram-jahanshahi/let-me-finetune-by-torch-tune pins torchtune==0.3.1 and names
# torchtune.modules.get_cosine_schedule_with_warmup, which torchtune 0.4 moved to torchtune.training and 0.5 dropped.
BAHRAM = Path(__file__).parent / "data" / "corpus" / "bahram-jahanshahi__let-me-finetune-by-torch-tune"
OLD_PATH = "torchtune.modules.get_cosine_schedule_with_warmup"


def _scheduler_finding(tmp_path: Path, requirements: str | None):
    import shutil

    from seqprof.lint.run import LintOptions, lint_paths

    (tmp_path / ".git").mkdir(parents=True)
    shutil.copy(BAHRAM / "custom_config.yaml", tmp_path / "custom_config.yaml")
    if requirements is not None:
        (tmp_path / "requirements.txt").write_text(requirements)
    report = lint_paths([tmp_path / "custom_config.yaml"], LintOptions()).files[0]
    found = [f for f in report.findings if f.key == "lr_scheduler._component_"]
    text = (tmp_path / "custom_config.yaml").read_text()
    assert all(f.line == _line_of(text, OLD_PATH) for f in found)
    return found


def test_a_moved_component_is_judged_at_the_torchtune_pin(tmp_path: Path) -> None:
    history = load_keys_file("torchtune_history")["torchtune"]
    spans = history["classes"]["components"]["fields"]
    # the wheels' facts the findings rest on: present from 0.1 up to 0.4, gone in 0.5; the new path since 0.4
    assert spans[OLD_PATH] == [["0.1.1", "0.5.0"]]
    new = history["moved"][OLD_PATH]
    assert new == "torchtune.training.get_cosine_schedule_with_warmup" and new in COMPONENTS["paths"]
    [pinned] = _scheduler_finding(tmp_path / "pinned", "torchtune==0.3.1\n")
    assert pinned.code == "SP403" and "torchtune==0.3.1 (requirements.txt:1) still has it, torchtune 0.5 removes it" \
        in pinned.message
    assert pinned.fix == f"keep 'lr_scheduler._component_' while the pins stay; from torchtune 0.4 on, use '{new}'"
    [unpinned] = _scheduler_finding(tmp_path / "unpinned", None)
    assert unpinned.code == "SP403" and "assuming torchtune 0.6" in unpinned.message
    assert unpinned.fix == f"use '{new}' instead"
    [newest] = _scheduler_finding(tmp_path / "newest", "torchtune>=0.5\n")
    assert (newest.code, newest.severity) == ("SP408", "error")
    assert newest.fix.startswith(f"set 'lr_scheduler._component_' to '{new}'")


def test_a_checkout_of_torchtune_itself_keeps_its_own_paths(tmp_path: Path) -> None:
    """A fork whose pyproject.toml names the project torchtune has the old modules in its own tree: no finding."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "torchtune"\nversion = "0.2.1"\n')
    assert not _scheduler_finding(tmp_path, None)


def test_a_torchtune_checkout_judges_old_component_paths_by_its_own_source(tmp_path):
    """liyucheng09/torchtune (a fork at 0.5.0) keeps its checkpointers under torchtune.training: its config's
    torchtune.utils.FullModelHFCheckpointer cannot be imported. A fork that still exports the old path is left alone."""
    from seqprof.config.read import read_plan

    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "torchtune"\ndynamic = ["version"]\n')
    for module, text in (("torchtune/__init__.py", '__version__ = "0.5.0"\n'),
                         ("torchtune/utils/__init__.py", "from ._device import get_device\n"),
                         ("torchtune/training/__init__.py", "from .checkpointing import FullModelHFCheckpointer\n")):
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / module).write_text(text)
    config = tmp_path / "recipes" / "configs" / "deepseek.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("checkpointer:\n  _component_: torchtune.utils.FullModelHFCheckpointer\n  checkpoint_dir: /tmp\n"
                      "metric_logger:\n  _component_: torchtune.training.metric_logging.DiskLogger\n")
    found = {d.key: d for d in read_plan(config).diagnostics if d.kind == "removed_key"}
    assert set(found) == {"checkpointer._component_"}
    assert found["checkpointer._component_"].suggestion == "torchtune.training.FullModelHFCheckpointer"
    assert "torchtune/utils/__init__.py" in found["checkpointer._component_"].message
    (tmp_path / "torchtune" / "utils" / "__init__.py").write_text("from torchtune.training import FullModelHFCheckpointer\n")
    assert not [d for d in read_plan(config).diagnostics if d.kind == "removed_key"]


def test_a_section_the_project_s_own_recipe_never_reads_is_not_instantiated(tmp_path):
    """hmosousa/tradutor (tests/data/corpus): configs/lora/phi3.yaml's header runs it with the project's own
    recipes/lora_finetune_distributed.py, which instantiates metric_logger, checkpointer and lr_scheduler but never
    names profiler: torchtune.utils.profiler (gone since 0.2) breaks nothing there; the other three still do."""
    import json
    import shutil

    corpus = Path(__file__).parent / "data" / "corpus"
    sources = json.loads((corpus / "SOURCES.json").read_text())
    (tmp_path / ".git").mkdir()
    for name, source in sources.items():
        if name.startswith("hmosousa__tradutor/"):
            (tmp_path / source["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(corpus / name, tmp_path / source["path"])
    recipe = (tmp_path / "recipes" / "lora_finetune_distributed.py").read_text()
    assert "profiler" not in recipe and "cfg.metric_logger" in recipe
    config = tmp_path / "configs" / "lora" / "phi3.yaml"
    assert "torchtune.utils.profiler" in config.read_text()
    gone = {d.key for d in read_plan(config).diagnostics if d.kind == "removed_key"}
    assert gone == {"checkpointer._component_", "lr_scheduler._component_", "metric_logger._component_"}
    (tmp_path / "recipes" / "lora_finetune_distributed.py").write_text(
        recipe + "\nprofiler = config.instantiate(cfg.profiler)\n")
    assert "profiler._component_" in {d.key for d in read_plan(config).diagnostics if d.kind == "removed_key"}


def test_a_near_miss_the_project_s_own_recipe_reads_is_its_setting(tmp_path):
    """SalmanMohammadi/torchtune (tests/data/corpus, a 0.2.1 fork): 8b_ppo_qlora.yaml sets compile_loss beside
    compile, and the fork's recipes/lora_ppo_finetune_single_device.py reads `cfg.get("compile_loss", False)`: the
    project's setting, not a typo of `compile` (renaming it would lose the loss compilation); without that read it
    is the near miss it looks like."""
    import json
    import shutil

    corpus = Path(__file__).parent / "data" / "corpus"
    sources = json.loads((corpus / "SOURCES.json").read_text())

    def compile_loss(root: Path, reads: bool):
        (root / ".git").mkdir(parents=True)
        for name, source in sources.items():
            if name.startswith("SalmanMohammadi__torchtune/"):
                (root / source["path"]).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(corpus / name, root / source["path"])
        recipe = root / "recipes" / "lora_ppo_finetune_single_device.py"
        if not reads:
            recipe.write_text(recipe.read_text().replace('cfg.get("compile_loss", False)', "False"))
        config = root / "recipes" / "configs" / "llama3_1" / "8b_ppo_qlora.yaml"
        return [d for d in read_plan(config).diagnostics if d.key == "compile_loss"]

    line = _line_of((corpus / "SalmanMohammadi__torchtune" / "recipes__lora_ppo_finetune_single_device.py")
                    .read_text(), 'cfg.get("compile_loss", False)')
    found = compile_loss(tmp_path / "fork", reads=True)
    assert [(d.kind, d.suggestion) for d in found] == [("unread_key", None)]
    assert f"recipes/lora_ppo_finetune_single_device.py:{line}" in found[0].message
    found = compile_loss(tmp_path / "unread", reads=False)
    assert [(d.kind, d.suggestion) for d in found] == [("unknown_key", "compile")]


def test_a_fork_s_own_builder_signature_decides_its_component_keys(tmp_path):
    """shangshang-wang/Tora installs its own torchtune (pyproject name torchtune, 0.7.0): its lora_qwen2_5_3b, re-
    exported by torchtune/models/qwen2_5/__init__.py from _model_builders.py, takes lora_type, which no released
    builder does. The fork's source is what config.instantiate imports, so the key is a parameter; without it in the
    fork's signature it is the TypeError it looks like."""
    import json
    import shutil

    corpus = Path(__file__).parent / "data" / "corpus"
    sources = json.loads((corpus / "SOURCES.json").read_text())

    def lora_type(root: Path, in_signature: bool):
        (root / ".git").mkdir(parents=True)
        for name, source in sources.items():
            if name.startswith("shangshang-wang__Tora/"):
                (root / source["path"]).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(corpus / name, root / source["path"])
        builders = root / "torchtune" / "models" / "qwen2_5" / "_model_builders.py"
        text = builders.read_text()
        assert '    lora_type: str = "lora", # "lora", "dora", "dora_cache"\n' in text
        if not in_signature:
            builders.write_text(text.replace('    lora_type: str = "lora", # "lora", "dora", "dora_cache"\n', ""))
        plan = read_plan(root / "recipes" / "configs" / "qwen2_5" / "3B_lora_grpo.yaml")
        return [d.kind for d in plan.diagnostics if d.key == "model.lora_type"]

    assert lora_type(tmp_path / "fork", in_signature=True) == []
    assert lora_type(tmp_path / "without", in_signature=False) == ["unknown_key"]


def _own_recipe_project(tmp_path: Path, recipe_reads_shuffle: bool) -> Path:
    """AdalAbilbekov/new_era's layout: a config with keys no shipped recipe reads (train_type, sub_length) and the
    project's own recipe that reads them, batching through its own sampler."""
    (tmp_path / ".git").mkdir(parents=True)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    shuffle = "shuffle=cfg.shuffle" if recipe_reads_shuffle else "shuffle=True"
    (recipes / "full_finetune_loop.py").write_text(
        "class Recipe:\n    def __init__(self, cfg):\n        self.train_type = cfg.train_type\n"
        "        self.sub_length = cfg.get('sub_length', 300)\n        self.epochs = cfg.epochs\n"
        "        self.batch_size = cfg.batch_size\n"
        f"        self.sampler = DistributedSampler(ds, {shuffle}, seed=0)\n")
    shipped = (SHIPPED / "llama3_1" / "8B_qlora_single_device.yaml").read_text()
    config = tmp_path / "config_train" / "8B_qlora.yaml"
    config.parent.mkdir()
    config.write_text(re.sub(r"(?m)^epochs: 1$", "epochs: 3", re.sub(r"(?m)^shuffle: True$", "shuffle: False", shipped))
                      + "train_type: instruct\nsub_length: 300\n")
    assert "shuffle: False" in config.read_text() and "epochs: 3" in config.read_text()
    return config


def test_shuffle_is_judged_only_where_the_recipe_running_the_config_reads_it(tmp_path: Path) -> None:
    """SP201 (shuffling off) holds for a recipe that reads cfg.shuffle; the project's own recipe that shuffles with
    its own sampler leaves `shuffle: False` unread, so nothing is reported (new_era, batch 86)."""
    rule = find_rule(load_rules(), "SP201")
    for reads, expected in ((False, []), (True, ["SP201"])):
        config = _own_recipe_project(tmp_path / str(reads), reads)
        plan = read_plan(config, "torchtune")
        hits = [f.code for f in lint_plan(plan, build_facts(plan), [rule]).findings]
        assert hits == expected, reads


CORPUS_DIR = Path(__file__).parent / "data" / "corpus"


def _laid_out(tmp_path: Path, folder: str) -> Path:
    """A corpus folder laid out as its repository (flat names back to paths), with a .git marking the root."""
    (tmp_path / ".git").mkdir(parents=True)
    for file in (CORPUS_DIR / folder).iterdir():
        target = tmp_path.joinpath(*file.name.split("__"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.read_bytes())
    return tmp_path


def test_a_fork_s_own_builder_takes_the_parameters_it_added(tmp_path: Path) -> None:
    """fxmeng/torchtune (pyproject name torchtune, batch 90) adds pissa_config to lora_llama3_8b in
    torchtune/models/llama3/_model_builders.py; the copy has no llama3/__init__.py, so the builder is found among
    the package's modules. Upstream's signature lacks it; the fork's takes it, and nothing is reported."""
    root = _laid_out(tmp_path, "fxmeng__torchtune")
    builders = (root / "torchtune/models/llama3/_model_builders.py").read_text()
    assert re.search(r"def lora_llama3_8b\([^)]*pissa_config", builders, re.S)
    assert "pissa_config" not in _signature("torchtune.models.llama3.lora_llama3_8b")["params"]
    config = root / "recipes/configs/llama3/8B_pissa.yaml"
    assert "pissa_config" in config.read_text()
    assert not [d for d in read_plan(config, "torchtune").diagnostics if "pissa_config" in (d.key or "")]


def test_a_custom_rl_recipe_s_advantage_estimator_names_its_trainer(tmp_path: Path) -> None:
    """RLHF-And-Friends/TunePPO's recipe receipts/ppo/ppo.py trains by rollouts: GAE (over a value model) is PPO,
    the group-relative GRAE is GRPO; neither is a cross-entropy SFT run."""
    root = _laid_out(tmp_path, "RLHF-And-Friends__TunePPO")
    seen = {}
    for config in sorted((root / "receipts/ppo/configs").rglob("*.yaml")):
        estimator = load_config(config).data["advantage"]["_component_"].rsplit(".", 1)[-1]
        seen[estimator] = read_plan(config, "torchtune").settings["trainer"].value
    assert seen == {"GAE": "ppo", "GRAE": "grpo"}


def test_a_copy_of_torchtune_the_project_installs_gives_its_builder_signatures(tmp_path):
    """shawnricecake/Heima keeps torchtune 0.5.0 with its own changes in torchtune_pkg/torchtune (pyproject name
    torchtune; the README installs it with `pip install -e .`): its lora_llama3_1_8b takes use_abstract_projection
    and projector_input_dim, which the released builder lacks. That copy is what config.instantiate imports; without
    its pyproject.toml it is not a torchtune checkout, and the released signature makes both keys TypeErrors."""
    from corpus_layout import lay_out

    repo = "shawnricecake__Heima"
    name = ("heima__configs__2_1-llama3_2_vision-11b-main_lora-pure_llm_decoder_lora-split_3_stages-fix_num-"
            "progressive.yaml")
    keys = {"model_decoder.use_abstract_projection", "model_decoder.projector_input_dim"}
    plan = read_plan(lay_out(tmp_path / "copy", only=repo) / f"{repo}/{name}")
    assert not [d for d in plan.diagnostics if d.key in keys]
    bare = lay_out(tmp_path / "bare", only=repo)
    (bare.root / repo / "torchtune_pkg" / "torchtune" / "pyproject.toml").unlink()
    plan = read_plan(bare / f"{repo}/{name}")
    assert {d.key for d in plan.diagnostics if d.kind == "unknown_key"} >= keys


def test_an_rl_loss_one_section_down_names_the_trainer(tmp_path):
    """joecummings/r1-zero's dev/qwen3B_async_grpo.yaml keeps its GRPOWithChunkedOutputLoss under `training: loss:`
    (the async recipe reads cfg.training.loss): a GRPO run, not the supervised default."""
    from corpus_layout import lay_out

    repo = "joecummings__r1-zero"
    config = lay_out(tmp_path, only=repo) / f"{repo}/recipes__configs__dev__qwen3B_async_grpo.yaml"
    text = config.read_text()
    assert "\nloss:" not in text and "_component_: torchtune.dev.rl.loss.GRPOWithChunkedOutputLoss" in text
    assert read_plan(config).settings["trainer"].value == "grpo"
    config.write_text(text.replace("GRPOWithChunkedOutputLoss", "CEWithChunkedOutputLoss"))
    assert read_plan(config).settings["trainer"].value == "sft"


def test_a_component_key_the_project_reads_itself_is_a_note(tmp_path):
    """Jacklu0831/marc's prompt-tuning config gives model: llama3_2_1b a prompt_tuning block, which llama3_2_1b
    does not take; test_time_train_prompt_tuning.py:139 sets conf.model.prompt_tuning for the project's own
    prompt-tuning recipe, which builds the adapter from it. Without that line nothing reads it: a TypeError."""
    from corpus_layout import lay_out

    repo = "Jacklu0831__marc"
    name = f"{repo}/configs__ttt__1B_prompt_tuning_single_device.yaml"
    found = {d.key: d for d in read_plan(lay_out(tmp_path / "as_published", only=repo) / name).diagnostics}
    note = found["model.prompt_tuning"]
    assert note.kind == "unread_key" and "test_time_train_prompt_tuning.py:139" in note.message
    bare = lay_out(tmp_path / "bare", only=repo)
    script = bare.root / repo / "test_time_train_prompt_tuning.py"
    script.write_text(script.read_text().replace("conf.model.prompt_tuning.num_virtual_tokens = "
                                                 "args.num_virtual_tokens", ""))
    found = {d.key: d for d in read_plan(bare / name).diagnostics}
    assert found["model.prompt_tuning"].kind == "unknown_key"


def test_a_near_miss_of_a_key_only_another_kind_of_recipe_reads_is_a_note(tmp_path):
    """marc's save_every_n_epoch is one letter from save_every_n_epochs, which only the dev GRPO recipe reads
    (dev/grpo_full_finetune_distributed.py); its LoRA/prompt-tuning recipe would ignore either spelling, so there is
    no typo to fix: a note. In a GRPO config the near miss is the warning it was."""
    from corpus_layout import lay_out

    recipes = COMPONENTS["recipe_keys"]
    assert [r for r, keys in recipes.items() if "save_every_n_epochs" in keys] == ["dev/grpo_full_finetune_distributed"]
    repo = "Jacklu0831__marc"
    config = lay_out(tmp_path, only=repo) / f"{repo}/configs__ttt__1B_prompt_tuning_single_device.yaml"
    found = {d.key: d for d in read_plan(config).diagnostics}
    assert found["save_every_n_epoch"].kind == "unread_key"
    text = re.sub(r"(?m)^loss:\n  _component_: .*$", "loss:\n  _component_: torchtune.dev.rl.loss.GRPOLoss",
                  config.read_text())
    assert "GRPOLoss" in text
    config.write_text(text)
    found = {d.key: d for d in read_plan(config).diagnostics}
    assert found["save_every_n_epoch"].kind == "unknown_key" and found["save_every_n_epoch"].suggestion == \
        "save_every_n_epochs"


def test_a_repository_that_is_torchtune_s_own_source_judges_components_there(tmp_path):
    """myeongkyunkang/medcap carries torchtune 0.2.1's source, modified (torchtune/modules, torchtune/utils), and runs
    `PYTHONPATH=./ python torchtune/_cli/tune.py run ...` after uninstalling the release (README.md:69, 112-113):
    torchtune.utils.FullModelHFCheckpointer and torchtune.utils.metric_logging.DiskLogger are that checkout's, so no
    release upgrade moves them. Without the checkout's own source, they are release paths torchtune 0.3 moved."""
    from corpus_layout import lay_out

    folder = "myeongkyunkang__medcap"
    name = f"{folder}/recipes__configs__llama3_1__8B_full.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    assert not [d for d in read_plan(config).diagnostics if d.key.endswith("._component_")]

    bare = lay_out(tmp_path / "no_source", only=folder) / name
    for module in ("modules/__init__.py", "__init__.py"):
        (bare.parents[3] / "torchtune" / module).unlink()
    moved = {d.key for d in read_plan(bare).diagnostics if d.key.endswith("._component_")}
    assert {"checkpointer._component_", "metric_logger._component_"} <= moved
