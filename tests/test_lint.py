"""seqprof lint end to end: real configs, real profiles, facts checked against brute force, CLI contract."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from config_edits import append_lines, replace_once

from seqprof.cli import main
from seqprof.config.plan import Plan, Setting
from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.profile import DatasetInfo, Profile, TokenizerInfo
from seqprof.dataset.recommend import recommend_max_seq_length
from seqprof.errors import SeqprofError
from seqprof.lint.facts import build_facts, optimizer_steps_per_epoch
from seqprof.lint.run import LintOptions, exit_code, lint_paths
from seqprof.settings import LintSettings, find_settings

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "tests" / "data" / "configs"  # the real configs these tests read, copied exactly (README there)
CORPUS = REPO.parent / "shared" / "configs"  # every shared config: corpus-wide tests skip without it
STORY = CONFIGS / "auto-antislop" / "configs" / "gemma-3-4b-it.yaml"


# --- data ------------------------------------------------------------------------------------------------


def story_lengths() -> np.ndarray:
    """12,000 lengths reproducing the story's PUBLISHED statistics exactly (mean 529.9, median 509,
    p90 953, p99 1080, max 1126; DESIGN.md story 1). This is a synthetic distribution made to match
    those figures, not the story's real data, which is not available: ramps between the published
    percentiles, with the lower half shaped so the mean is exact. test_story_lengths_match_the_story
    checks the figures with numpy on the raw array."""
    n = 12000
    lengths = np.zeros(n, dtype=np.int64)
    for i0, v0, i1, v1 in ((6000, 509, 10799, 953), (10800, 953, 11879, 1080), (11880, 1080, 11999, 1126)):
        lengths[i0:i1 + 1] = np.round(np.linspace(v0, v1, i1 - i0 + 1)).astype(np.int64)
    rest = round(529.9 * n) - int(lengths[6000:].sum())
    t = np.linspace(0, 1, 6000)
    lo, hi = 0.05, 20.0
    for _ in range(200):  # bisect the curve's exponent so the lower half carries the remaining tokens
        p = (lo + hi) / 2
        seg = np.round(40 + (509 - 40) * t ** p).astype(np.int64)
        lo, hi = (p, hi) if seg.sum() > rest else (lo, p)
    lengths[:6000] = seg
    diff, i = rest - int(seg.sum()), 1
    step = 1 if diff > 0 else -1
    while diff:  # the rounding remainder, one token at a time, keeping the array sorted
        j = 5998 - (i % 5000)
        if lengths[j - 1] <= lengths[j] + step <= lengths[j + 1]:
            lengths[j] += step
            diff -= step
        i += 1
    return lengths


def profile_of(lengths: np.ndarray, name: str = "data.jsonl") -> Profile:
    hist = LengthHistogram.from_lengths(lengths)
    return Profile(dataset=DatasetInfo(path=name, format="jsonl", rows=hist.count, skipped_rows=0,
                                       schema="preference"),
                   tokenizer=TokenizerInfo(name="story", vocab_size=262144), sequence=hist, fields={},
                   recommendation=recommend_max_seq_length(hist))


@pytest.fixture(scope="module")
def story_profile(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("story") / "story-profile.json"
    profile_of(story_lengths(), "ftpo-story.jsonl").save(path)
    return path


@pytest.fixture(scope="module")
def real_profile(tmp_path_factory) -> Path:
    """A real profile: the packaged chat dataset tokenized with the real Qwen 2.5 tokenizer."""
    from seqprof.dataset.analyze import build_profile, default_dataset_path

    path = tmp_path_factory.mktemp("real") / "profile.json"
    build_profile(default_dataset_path()).save(path)
    return path


def raw_lengths(profile_path: Path) -> np.ndarray:
    hist = Profile.load(profile_path).sequence
    return np.repeat(np.arange(hist.counts.size), hist.counts)


def test_story_lengths_match_the_story():
    a = story_lengths()
    assert a.size == 12000 and a.mean() == pytest.approx(529.9, abs=1e-9)
    assert np.percentile(a, [50, 90, 99]).tolist() == [509, 953, 1080] and a.max() == 1126


def key_line(path: Path, key: str) -> int:
    """The line of `key:` found by plain text search, independently of the config reader."""
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if re.match(rf"\s*{re.escape(key)}\s*:", text):
            return number
    raise AssertionError(f"{key} not in {path}")


def lint(configs, **options):
    return lint_paths([str(c) for c in configs], LintOptions(**options))


# --- the story ---------------------------------------------------------------------------------------------


def test_the_story_config_is_caught_on_its_line(story_profile):
    result = lint([STORY], profile=str(story_profile))
    sp101 = [f for f in result.findings if f.code == "SP101"]
    assert len(sp101) == 1
    finding = sp101[0]
    assert finding.key == "finetune_max_seq_length"
    assert finding.line == key_line(STORY, "finetune_max_seq_length")
    use = 529.9 / 4000  # no row is longer than 4000, so content share = mean / cap
    assert f"{use * 100:.1f}%" == "13.2%" and "fill only 13.2%" in finding.message
    recommended = int(re.search(r"finetune_max_seq_length: (\d+)", finding.fix).group(1))
    assert 1126 <= recommended <= 1280  # covers the longest row, within the story's fix
    assert f"{4000 / recommended:.1f}x" in finding.message  # the token ratio: the speed-up's lower bound
    assert "batch size or gradient accumulation will not help" in finding.message
    assert exit_code(result) == 1


def test_the_fixed_story_config_is_clean(story_profile, tmp_path):
    fixed = tmp_path / "gemma-3-4b-it.yaml"
    fixed.write_text(STORY.read_text().replace("finetune_max_seq_length: 4000", "finetune_max_seq_length: 1280"))
    result = lint([fixed], profile=str(story_profile))
    assert [f.code for f in result.findings if f.severity != "info"] == []
    assert exit_code(result) == 0


def test_noqa_on_the_line_suppresses_that_code_only(story_profile, tmp_path):
    base = STORY.read_text()
    for comment, suppressed in (("# seqprof: noqa SP101", True), ("# seqprof: noqa: SP102, SP101", True),
                                ("# seqprof: noqa", True), ("# seqprof: noqa SP102", False),
                                ("# noqa", False)):
        config = tmp_path / "story.yaml"
        config.write_text(base.replace("finetune_max_seq_length: 4000 # this may truncate some outputs",
                                       f"finetune_max_seq_length: 4000 {comment}"))
        result = lint([config], profile=str(story_profile))
        codes = [f.code for f in result.findings]
        assert ("SP101" not in codes) == suppressed, comment
        assert result.files[0].suppressed == (1 if suppressed else 0)


# --- settings ------------------------------------------------------------------------------------------------


def test_pyproject_settings_are_found_walking_up_and_apply(story_profile, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.seqprof]\nignore = ["SP101"]\nseverity = { SP301 = "error" }\n')
    nested = tmp_path / "configs" / "ftpo"
    nested.mkdir(parents=True)
    config = nested / "story.yaml"
    shutil.copy(STORY, config)
    settings = find_settings(config)
    assert settings.ignore == ("SP101",) and settings.source == str(tmp_path / "pyproject.toml")
    result = lint([config], profile=str(story_profile))
    assert "SP101" not in [f.code for f in result.findings]
    assert all(f.severity == "error" for f in result.findings if f.code == "SP301")


def test_seqprof_yaml_is_nearer_than_pyproject_and_select_narrows(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.seqprof]\nselect = ["SP1"]\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".seqprof.yaml").write_text("select: [SP4]\ngpu: H100\n")
    assert find_settings(sub / "x.yaml").select == ("SP4",)
    assert find_settings(sub / "x.yaml").gpu == "H100"
    assert find_settings(tmp_path / "x.yaml").select == ("SP1",)


def test_select_and_ignore_follow_ruff_prefix_rules():
    s = LintSettings(select=("SP1", "SP301"), ignore=("SP10",))
    assert [s.is_enabled(c) for c in ("SP101", "SP110", "SP301", "SP302", "SP401")] == \
        [False, True, True, False, False]
    assert LintSettings(ignore=("ALL",)).is_enabled("SP101") is False
    assert LintSettings(select=("SP101",), ignore=("SP1",)).is_enabled("SP101") is True
    assert LintSettings().with_overrides(select=["SP4"], ignore=["SP401"]).is_enabled("SP402")
    assert not LintSettings().with_overrides(select=["SP4"], ignore=["SP401"]).is_enabled("SP401")


@pytest.mark.parametrize("text,message", [
    ("selct: [SP1]\n", "did you mean 'select'"),
    ("select: [E501]\n", "not a rule code"),
    ("severity: {SP101: fatal}\n", "severity of SP101"),
    ("- SP101\n", "must be a mapping"),
    ("select: [SP1\n", "not valid YAML"),
])
def test_bad_settings_are_errors_with_file_and_line(tmp_path, text, message):
    (tmp_path / ".seqprof.yaml").write_text(text)
    with pytest.raises(SeqprofError) as err:
        find_settings(tmp_path / "c.yaml")
    assert message in str(err.value) and str(tmp_path / ".seqprof.yaml") in str(err.value)


def test_rule_dirs_from_settings_add_rules(tmp_path, story_profile):
    rules = tmp_path / "team-rules"
    rules.mkdir()
    (rules / "SP901-no-4bit-on-ftpo.yaml").write_text("""\
code: SP901
slug: no-4bit-on-ftpo
severity: error
category: config
condition: cfg.trainer == 'ftpo' and cfg.load_in_4bit
at: [setting.load_in_4bit]
message: our team trains FTPO in bf16
fix: set finetune_load_in_4bit to false
docs: {why: house rule for reproducibility, how_to_fix: switch 4-bit loading off}
examples:
  pass: [{dialect: auto_antislop, config: "finetune_mode: ftpo"}]
  fail: [{dialect: auto_antislop, config: "finetune_mode: ftpo\\nfinetune_load_in_4bit: true"}]
""")
    (tmp_path / ".seqprof.yaml").write_text("rule-dirs: [team-rules]\n")
    config = tmp_path / "story.yaml"
    shutil.copy(STORY, config)
    result = lint([config])
    custom = [f for f in result.findings if f.code == "SP901"]
    assert [(f.line, f.key) for f in custom] == [(key_line(config, "finetune_load_in_4bit"), "finetune_load_in_4bit")]


# --- facts against independent computation -----------------------------------------------------------


def plan_of(dialect="trl", **values) -> Plan:
    return Plan(path="c.yaml", dialect=dialect,
                settings={k: Setting(v, k, "c.yaml", i + 1) for i, (k, v) in enumerate(values.items())})


@pytest.mark.parametrize("dialect,overflow", [("axolotl", "drop"), ("trl", "truncate")])
@pytest.mark.parametrize("cap", [64, 128, 512, 2048])
def test_data_facts_equal_brute_force_on_real_lengths(real_profile, dialect, overflow, cap):
    lengths = raw_lengths(real_profile)
    facts = build_facts(plan_of(dialect, max_seq_length=cap), Profile.load(real_profile), simulate=False).data
    assert facts.overflow == overflow
    over = lengths[lengths > cap]
    assert facts.rows_over_cap == over.size
    assert facts.tokens_over_cap == int((over - cap).sum())
    kept = lengths[lengths <= cap] if overflow == "drop" else np.minimum(lengths, cap)
    assert facts.fixed_use == pytest.approx(kept.sum() / (kept.size * cap), rel=1e-12)
    assert facts.padding_free_bound == pytest.approx(cap / kept.mean(), rel=1e-12)
    assert facts.mean == pytest.approx(lengths.mean()) and facts.p99 == pytest.approx(np.percentile(lengths, 99))


def brute_force_steps(rows: int, micro: int, accum: int, world: int) -> int:
    """Walk one rank's epoch the way the HF Trainer does: DistributedSampler pads the rows to a multiple
    of the world size, the rank gets every world-th row, batches of `micro`, an optimizer step after
    every `accum` batches and after the last batch."""
    per_rank = len(range(0, math.ceil(rows / world) * world, world))
    batches = [list(range(i, min(i + micro, per_rank))) for i in range(0, per_rank, micro)]
    steps = pending = 0
    for index, _ in enumerate(batches):
        pending += 1
        if pending == accum or index == len(batches) - 1:
            steps, pending = steps + 1, 0
    return steps


@pytest.mark.parametrize("rows", [1, 7, 16, 100, 12000, 12001])
@pytest.mark.parametrize("micro,accum,world", [(1, 16, 1), (4, 4, 1), (2, 8, 8), (3, 5, 2)])
def test_optimizer_steps_per_epoch_equal_a_walk_of_the_epoch(rows, micro, accum, world):
    assert optimizer_steps_per_epoch(rows, micro, accum, world) == brute_force_steps(rows, micro, accum, world)


def test_run_facts_count_dropped_rows_epochs_and_checkpoints(real_profile):
    profile = Profile.load(real_profile)
    lengths = raw_lengths(real_profile)
    plan = plan_of("axolotl", max_seq_length=512, micro_batch_size=2, gradient_accumulation_steps=3,
                   num_epochs=3, save_strategy="steps", save_steps=0.5)
    run = build_facts(plan, profile, simulate=False).run
    kept = int((lengths <= 512).sum())  # axolotl drops longer rows
    assert run.rows == kept
    assert run.estimated_steps == 3 * brute_force_steps(kept, 2, 3, 1)
    assert run.checkpoint_every == math.ceil(0.5 * run.estimated_steps) and run.mid_run_checkpoint is True
    stated = build_facts(plan_of("trl", max_steps=40, save_strategy="steps", save_steps=500)).run
    assert (stated.estimated_steps, stated.steps_source, stated.mid_run_checkpoint) == (40, "max_steps", False)
    assert build_facts(plan_of("trl", num_epochs=1)).run is None  # no data and no max_steps: unknown


# --- every shipped config -------------------------------------------------------------------------------


def all_configs() -> list[Path]:
    if not CORPUS.is_dir():
        pytest.skip("../shared/configs (the whole corpus) not beside the checkout")
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml"))


def test_every_shared_config_lints_without_a_crash():
    from seqprof.config.dialects import DIALECTS

    configs = all_configs()
    assert len(configs) > 300
    result = lint(configs)
    assert [r.path for r in result.files] == [str(c) for c in configs]
    known = [r for r in result.files if r.dialect in DIALECTS]
    assert all(r.dialect in (*DIALECTS, "unknown") for r in result.files)
    assert len(known) >= len(configs) - 5  # the rest are not training configs (cloud launch files, token lists)
    for report in result.files:
        for f in report.findings:
            assert f.file and f.message and (f.line is None or f.line >= 1)


def test_shared_configs_lint_with_real_data_without_a_crash(real_profile):
    picks = [STORY, *sorted(CONFIGS.glob("axolotl/examples/llama-3/*.yml"))[:4],
             *sorted(CONFIGS.glob("llamafactory/examples/train_lora/*.yaml"))[:4],
             *sorted(CONFIGS.glob("specforge/examples/configs/*.yaml"))[:3], *CONFIGS.glob("trl/**/*.yaml")]
    result = lint(picks, profile=str(real_profile))
    assert len(result.files) == len(picks)
    assert not [reason for reason in result.skipped if reason.startswith("no data")]


# --- command line -------------------------------------------------------------------------------------------


def run_cli(*args):
    return CliRunner().invoke(main, ["lint", *map(str, args)])


def test_cli_exit_codes(story_profile, tmp_path):
    assert run_cli(STORY, "--profile", story_profile).exit_code == 1
    assert run_cli(STORY, "--profile", story_profile, "--exit-zero").exit_code == 0
    only_101 = run_cli(STORY, "--profile", story_profile, "--select", "SP101", "--fail-on", "error")
    assert only_101.exit_code == 0 and "SP101" in only_101.output  # a warning below the error threshold
    assert run_cli(tmp_path / "missing.yaml").exit_code == 2
    both = run_cli(STORY, "--profile", story_profile, "--data", story_profile)
    assert both.exit_code == 2 and "not both" in both.output
    bad_gpu = run_cli(STORY, "--gpu", "H1000000")
    assert bad_gpu.exit_code == 2 and "unknown GPU" in bad_gpu.output
    assert run_cli(STORY, "--select", "XYZ").exit_code == 2


def test_cli_json_has_the_contract_keys_and_several_files(story_profile, tmp_path):
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(STORY.read_text().replace("finetune_max_seq_length: 4000", "finetune_max_seq_length: 1280"))
    out = run_cli(STORY, fixed, "--profile", story_profile, "--format", "json")
    data = json.loads(out.output)
    assert {f["file"] for f in data["findings"]} <= {str(STORY), str(fixed)}
    for f in data["findings"]:
        assert {"code", "severity", "message", "file", "line", "key"} <= set(f)
    assert [f["code"] for f in data["findings"] if f["file"] == str(STORY)].count("SP101") == 1
    assert len(data["files"]) == 2


def test_text_output_says_which_rules_were_skipped_for_lack_of_data():
    out = run_cli(STORY)
    skipped = [line for line in out.output.splitlines() if line.startswith("Skipped (no data")][0]
    assert skipped.startswith("Skipped (no data: pass --data DATA or --profile profile.json): SP101 fixed-padding-waste")
    assert "SP102" in skipped and "SP202" in skipped and "SP410" not in skipped


def test_lint_with_a_profile_never_imports_transformers(story_profile):
    code = ("import sys\nfrom seqprof.cli import main\n"
            f"try:\n    main(['lint', {str(STORY)!r}, '--profile', {str(story_profile)!r}])\n"
            "except SystemExit as e:\n    code = e.code\n"
            "print('transformers' in sys.modules, 'torch' in sys.modules, code)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "False False 1", out.stderr


@pytest.mark.parametrize("values,mid", [
    (dict(save_strategy="no"), False),
    (dict(save_strategy="steps", save_steps=100), True),
    (dict(save_strategy="steps", save_steps=5000), False),
    (dict(save_strategy="steps"), None),  # no interval stated or defaulted: unknown, the rule stays silent
    (dict(save_strategy="epoch"), None),  # epoch length unknown without data
    (dict(saves_per_epoch=4), None),
    (dict(save_strategy="best"), None),
])
def test_checkpoint_facts_without_data_are_unknown_unless_the_config_decides(values, mid):
    run = build_facts(plan_of("axolotl", max_steps=1000, **values)).run
    assert run.mid_run_checkpoint is mid


def test_per_epoch_saves_with_data_use_the_epoch_length(real_profile):
    profile = Profile.load(real_profile)
    rows = profile.sequence.count
    one = build_facts(plan_of("trl", max_seq_length=4096, micro_batch_size=1, num_epochs=1,
                              save_strategy="epoch"), profile, simulate=False).run
    assert (one.estimated_steps, one.checkpoint_every, one.mid_run_checkpoint) == (rows, rows, False)
    four = build_facts(plan_of("axolotl", max_seq_length=4096, micro_batch_size=1, num_epochs=1,
                               saves_per_epoch=4), profile, simulate=False).run
    assert four.checkpoint_every == rows // 4 and four.mid_run_checkpoint is True


# --- every rule on a real config (copied and changed where the original is clean) -------------------






TRL = "trl/examples/cli_configs/example_config.yaml"
QLORA = "axolotl/examples/llama-3/qlora.yml"
REAL_RULE_CASES = [
    # code, config, edit that makes it fire (None: fires as published), key, edit that makes it clean, data, dialect
    ("SP102", TRL, append_lines("max_length: 512\n"), "max_length", append_lines("max_length: 2048\n"), True, None),
    ("SP102", "axolotl/examples/llama-3/lora-1b.yml", replace_once("sequence_len: 2048", "sequence_len: 512"),
     "sequence_len", None, True, None),
    ("SP103", TRL, append_lines("per_device_train_batch_size: 8\n"), "per_device_train_batch_size",
     append_lines("per_device_train_batch_size: 8\npacking: true\n"), True, None),
    ("SP201", "axolotl/examples/llama-3/lora-1b-sample-packing-sequentially.yml", None, "curriculum_sampling",
     replace_once("curriculum_sampling: true", "curriculum_sampling: false"), False, None),
    ("SP202", TRL, append_lines("per_device_train_batch_size: 8\n"), "per_device_train_batch_size",
     append_lines("per_device_train_batch_size: 8\ntrain_sampling_strategy: group_by_length\n"), True, None),
    ("SP301", "llamafactory/examples/ascend/qwen3_full_sft_fsdp2.yaml", None, "save_steps",
     replace_once("save_steps: 500", "save_steps: 100"), False, None),
    ("SP401", "axolotl/examples/falcon-h1/falcon-h1-1b-qlora-cp.yaml", None, "context_parapllel_size",
     replace_once("context_parapllel_size", "context_parallel_size"), False, None),
    ("SP402", "axolotl/examples/eaft/eaft-example.yml", None, "evaluation_strategy",
     replace_once("evaluation_strategy:", "eval_strategy:"), False, None),
    ("SP403", TRL, append_lines("beta: 0.1\nmax_prompt_length: 512\n"), "max_prompt_length",
     append_lines("beta: 0.1\n"), False, "trl_dpo"),
    ("SP404", "llamafactory/examples/ascend/qwen3_full_sft_fsdp2.yaml", append_lines("learning_rate: 1.0e-6\n"),
     "learning_rate", None, False, None),
    ("SP433", QLORA, append_lines("learning_rate: 0.00002\n"), "learning_rate", None, False, None),
    ("SP410", QLORA, replace_once("bf16: auto", "bf16: true\nfp16: true"), "fp16", None, False, None),
    ("SP411", QLORA, replace_once("load_in_4bit: true", "load_in_4bit: false"), "adapter", None, False, None),
    ("SP412", QLORA, replace_once("load_in_8bit: false", "load_in_8bit: true"), "load_in_8bit", None, False, None),
    ("SP413", "axolotl/examples/jamba/qlora_deepspeed.yaml", append_lines("fsdp:\n  - full_shard\n"), "fsdp", None,
     False, None),
]


@pytest.mark.parametrize("code,source,breaks,key,fixes,with_data,dialect", REAL_RULE_CASES,
                         ids=[f"{c[0]}-{Path(c[1]).stem}" for c in REAL_RULE_CASES])
def test_each_rule_on_a_real_config(code, source, breaks, key, fixes, with_data, dialect, real_profile, tmp_path):
    original = (CONFIGS / source).read_text()
    config = tmp_path / Path(source).name
    config.write_text(breaks(original) if breaks else original)
    options = dict(profile=str(real_profile)) if with_data else {}
    result = lint([config], dialect=dialect, **options)
    hits = [f for f in result.findings if f.code == code]
    assert hits, f"{code} did not fire on {source}: {[f.code for f in result.findings]}"
    lines = [n for n, text in enumerate(config.read_text().splitlines(), 1)
             if re.match(rf"\s*{re.escape(key)}\s*:", text)]  # where the key is, by plain text search
    assert any(f.key == key and f.line in lines for f in hits), [(f.key, f.line) for f in hits]
    for f in hits:
        text = config.read_text().splitlines()[f.line - 1]
        assert f.column == text.index(f.key.split(".")[-1]) + 1  # the column of the key itself
    clean = fixes(original) if fixes else original
    config.write_text(clean)
    assert code not in [f.code for f in lint([config], dialect=dialect, **options).findings]


def test_rows_over_the_cap_are_counted_and_said_per_framework(real_profile, tmp_path):
    lengths = raw_lengths(real_profile)
    over = int((lengths > 512).sum())
    trl = tmp_path / "trl.yaml"
    trl.write_text((CONFIGS / TRL).read_text() + "max_length: 512\n")
    axo = tmp_path / "axolotl.yaml"
    axo.write_text((CONFIGS / "axolotl/examples/llama-3/lora-1b.yml").read_text().replace("sequence_len: 2048",
                                                                                          "sequence_len: 512"))
    result = lint([trl, axo], profile=str(real_profile), select=("SP102",))
    by_file = {Path(f.file).name: f.message for f in result.findings}
    assert by_file["trl.yaml"].startswith(f"{over} rows ") and "trl truncates them" in by_file["trl.yaml"]
    assert by_file["axolotl.yaml"].startswith(f"{over} rows ") and "axolotl drops them" in by_file["axolotl.yaml"]
    tokens_cut = int((lengths[lengths > 512] - 512).sum())
    assert f"cutting {tokens_cut:,} tokens" in by_file["trl.yaml"]


def test_raw_data_is_analyzed_when_given_with_data(tmp_path):
    from seqprof.dataset.analyze import build_profile, default_dataset_path

    data = default_dataset_path()
    config = tmp_path / "trl.yaml"
    config.write_text((CONFIGS / TRL).read_text() + "max_length: 512\n")
    out = CliRunner().invoke(main, ["lint", str(config), "--data", str(data), "--select", "SP102", "--format", "json"])
    assert out.exit_code == 1, out.output
    finding = json.loads(out.output)["findings"][0]
    over = Profile.load(build_profile_path(tmp_path, build_profile, data)).sequence.count_above(512)
    assert finding["code"] == "SP102" and finding["message"].startswith(f"{over} rows")


def build_profile_path(tmp_path: Path, build_profile, data: Path) -> Path:
    path = tmp_path / "p.json"
    build_profile(data).save(path)
    return path


# --- the tokenizer for raw --data --------------------------------------------------------------------


def _trl_config(tmp_path: Path, model: str) -> Path:
    config = tmp_path / f"trl-{model.replace('/', '_')}.yaml"
    text = (CONFIGS / TRL).read_text().replace("  Qwen/Qwen2.5-0.5B", f"  {model}")
    config.write_text(text + "max_length: 512\n")
    return config


def test_raw_data_is_tokenized_with_the_configs_model_when_no_tokenizer_is_given(tmp_path):
    from seqprof.dataset.analyze import (
        AnalyzeOptions,
        build_profile,
        default_dataset_path,
    )

    data = default_dataset_path()
    config = _trl_config(tmp_path, "glm-4")  # a packaged tokenizer, found offline
    out = CliRunner().invoke(main, ["lint", str(config), "--data", str(data), "--select", "SP102",
                                    "--format", "json"])
    assert out.exit_code in (0, 1), out.output
    payload = json.loads(out.stdout)
    assert payload["data_tokenizer"] == "glm-4"
    glm = build_profile(data, AnalyzeOptions(tokenizer="glm-4")).sequence
    qwen = build_profile(data, AnalyzeOptions(tokenizer="qwen-2.5")).sequence
    assert not np.array_equal(glm.counts, qwen.counts)  # the choice of tokenizer is visible in the lengths
    assert "not found locally" not in out.stderr


def test_raw_data_falls_back_to_the_default_tokenizer_and_says_so(tmp_path):
    from seqprof.dataset.tokenizers import DEFAULT_TOKENIZER

    config = _trl_config(tmp_path, "acme/NoSuchModel-7B")
    from seqprof.dataset.analyze import default_dataset_path

    out = CliRunner().invoke(main, ["lint", str(config), "--data", str(default_dataset_path()), "--select", "SP102",
                                    "--format", "json"])
    assert out.exit_code in (0, 1), out.output
    assert json.loads(out.stdout)["data_tokenizer"] == DEFAULT_TOKENIZER
    assert out.stderr.strip() == (f"seqprof: no --tokenizer given and 'acme/NoSuchModel-7B' not found locally; "
                                  f"using the embedded default {DEFAULT_TOKENIZER!r}")


def test_a_saved_profile_from_another_model_family_gets_a_note(tmp_path):
    hist = LengthHistogram.from_lengths(np.array([100, 200, 300]))
    profile = tmp_path / "p.json"
    Profile(dataset=DatasetInfo(path="d.jsonl", format="jsonl", rows=3, skipped_rows=0, schema="text"),
            tokenizer=TokenizerInfo(name="qwen-2.5", vocab_size=151665), sequence=hist, fields={},
            recommendation=recommend_max_seq_length(hist)).save(profile)
    llama = _trl_config(tmp_path, "meta-llama/Llama-3.1-8B")
    out = run_cli(llama, "--profile", profile)
    notes = [line for line in out.output.splitlines() if line.startswith("Note:") and "tokenizer" in line]
    assert len(notes) == 1 and "qwen-2.5" in notes[0] and "meta-llama/Llama-3.1-8B" in notes[0]
    same = run_cli(_trl_config(tmp_path, "Qwen/Qwen2.5-7B-Instruct"), "--profile", profile)
    unknown = run_cli(_trl_config(tmp_path, "acme/house-model"), "--profile", profile)
    for result in (same, unknown):  # the same family, or a model no family is known for: no note
        assert not [line for line in result.output.splitlines() if "tokenizer" in line and "Note:" in line]


def test_the_configs_group_by_length_is_simulated_with_accumulated_megabatches(real_profile):
    from seqprof.batching.buckets import optimal_boundaries
    from seqprof.batching.simulate import simulate
    from seqprof.lint.facts import DEFAULT_NUM_BUCKETS, SIM_EPOCHS

    profile = Profile.load(real_profile)
    plan = plan_of("trl", max_seq_length=1024, micro_batch_size=2, gradient_accumulation_steps=8,
                   group_by_length=True)
    sim = build_facts(plan, profile).sim
    assert sim.current_name == "group_by_length" and sim.batch_size == 2
    bounds = optimal_boundaries(profile.sequence, DEFAULT_NUM_BUCKETS, 1024)
    expected = simulate(profile.sequence, max_seq_length=1024, boundaries=bounds, batch_size=2, mega_batch_size=16,
                        epochs=SIM_EPOCHS).strategies["group_by_length"]
    assert sim.current.computed_tokens == expected.computed_tokens
    assert sim.bucketed.computed_tokens == simulate(profile.sequence, max_seq_length=1024, boundaries=bounds,
                                                    batch_size=2, epochs=SIM_EPOCHS
                                                    ).strategies["bucketed_shuffle"].computed_tokens


def test_one_broken_config_does_not_stop_the_others(story_profile, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\nb: :\n")
    missing = tmp_path / "missing.yaml"
    out = run_cli(bad, STORY, missing, "--profile", story_profile)
    assert out.exit_code == 2
    errors = out.stderr.splitlines()
    assert len(errors) == 2 and errors[0].startswith(f"seqprof: error: {bad}:2: invalid YAML")
    assert errors[1].startswith(f"seqprof: error: {missing}: config file not found")
    assert f"{STORY}:" in out.stdout and "SP101" in out.stdout  # the good config's findings are still shown
    alone = run_cli(STORY, "--profile", story_profile)
    assert alone.exit_code == 1 and alone.stdout.splitlines()[0] in out.stdout.splitlines()
    as_json = json.loads(run_cli(bad, STORY, "--profile", story_profile, "--format", "json").stdout)
    assert [f["path"] for f in as_json["files"]] == [str(STORY)] and as_json["errors"][0].startswith(f"{bad}:2:")
    assert run_cli(bad, STORY, "--profile", story_profile, "--exit-zero").exit_code == 2  # errors are not findings


def test_shared_constants_have_one_home(real_profile):
    """REFERENCE_FREE lives in seqprof.predict.memory and the default batch size in seqprof.buckets; facts uses those."""
    import seqprof.lint.facts as facts_module
    from seqprof.batching.buckets import DEFAULT_BATCH_SIZE

    assert "REFERENCE_FREE" not in vars(facts_module) and "DEFAULT_MICRO_BATCH" not in vars(facts_module)
    sim = build_facts(plan_of("trl", max_seq_length=512), Profile.load(real_profile)).sim
    assert sim.batch_size == DEFAULT_BATCH_SIZE


OHMJI = Path(__file__).parent / "data" / "corpus" / "ohmji__financial-agent-scb10-hackathon" / "config.yml"


def test_an_axolotl_alias_its_validators_still_copy_keeps_working(tmp_path):
    """ohmji/financial-agent-scb10-hackathon's axolotl config sets dataset_processes and
    pretrain_multipack_buffer_size: axolotl 0.19 still declares both and its validators copy them into
    dataset_num_proc / streaming_multipack_buffer_size with a warning (schemas/config.py default_dataset_num_proc,
    schemas/validation.py check_multipack_buffer_size), so SP402 says rename, not that the value is lost."""
    (tmp_path / ".git").mkdir()
    config = tmp_path / "config.yml"
    config.write_text(OHMJI.read_text())
    found = {f.key: f.message for f in lint_paths([config], LintOptions(select=("SP402",))).findings}
    assert set(found) == {"dataset_processes", "pretrain_multipack_buffer_size"}
    for message in found.values():
        assert "still read" in message and "the old name still works" in message
        assert "ignore or reject" not in message


PROVE = Path(__file__).parent / "data" / "corpus" / "Attapulgite999__prove" / "axolotl_training__config__qwen_axolotl.yaml"


@pytest.mark.parametrize("line, fires", [
    ("chat_template: qwen2_5", "did you mean 'qwen3_5' or 'qwen_25'?"),  # ChatTemplate.qwen_25; qwen3_5 is one edit too
    ("chat_template: qwen_25", None),
    ("chat_template: tokenizer_default_fallback_qwen_25", None),  # taken by the field's pattern, not the Enum
    ("chat_template: qwen2_5\nrl: dpo", "did you mean"),
    ("chat_template: qwen_25\nrl: dpo_pair", "'rl: dpo_pair' is not a value axolotl 0.19 takes"),
])
def test_an_axolotl_value_its_enum_refuses(tmp_path, line, fires):
    """Attapulgite999/prove writes `chat_template: qwen2_5`; axolotl types the field by its ChatTemplate Enum (or a
    tokenizer_default_fallback_ string), whose member is qwen_25 (schemas/enums.py, every release 0.5-0.19), so
    pydantic refuses the config before training. The members per release are keys/key_history.json's "values"."""
    text = PROVE.read_text()
    assert text.count("chat_template: qwen2_5") == 1
    (tmp_path / ".git").mkdir()
    config = tmp_path / "qwen_axolotl.yaml"
    config.write_text(text.replace("chat_template: qwen2_5", line))
    found = [f.message for f in lint_paths([config], LintOptions(select=("SP406",))).findings]
    assert (fires is not None and any(fires in m for m in found)) or (fires is None and found == [])


def test_a_yaml_none_is_text_unless_the_launch_line_sets_the_key(tmp_path):
    """`other_data_config: None` in wx-zhang/bfpo's recipe is the text 'None' to yaml.safe_load, but bfpo.sh, the
    command that runs the recipe, passes --other_data_config itself, so the file's value never runs. Without the
    launcher the text reaches the project's `Optional[str]` field: SP455. nlee-208/align's `reward_weights: None`
    reaches GRPOTrainer's `is not None` test."""
    from corpus_layout import lay_out

    from seqprof.lint.run import LintOptions, lint_paths

    tree = lay_out(tmp_path / "bfpo", only="wx-zhang__bfpo")
    recipe = tree / "wx-zhang__bfpo/recipes__zephyr-7b-beta__bfpo__selective.yaml"
    assert "other_data_config: None" in recipe.read_text()
    assert not [f for f in lint_paths([recipe], LintOptions()).files[0].findings if f.code == "SP455"]
    (tree / "wx-zhang__bfpo/bfpo.sh").unlink()
    [text] = [f for f in lint_paths([recipe], LintOptions()).files[0].findings if f.code == "SP455"]
    assert text.key == "other_data_config" and text.line == 12 and "the text 'None'" in text.message
    align = lay_out(tmp_path / "align", only="nlee-208__align") / "nlee-208__align/configs__grpo__base.yaml"
    [weights] = [f for f in lint_paths([align], LintOptions()).files[0].findings if f.code == "SP455"]
    assert weights.key == "reward_weights" and weights.severity == "warning"
    align.write_text(align.read_text().replace("reward_weights: None", "reward_weights: null"))
    assert not [f for f in lint_paths([align], LintOptions()).files[0].findings if f.code == "SP455"]
