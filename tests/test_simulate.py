"""Strategy simulation against the real thing: transformers' DataCollatorWithPadding on real text
and a real tokenizer, transformers' own group_by_length code, a plain per-row packer, and the
sequence-packing paper's published Wikipedia and SQuAD figures."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
from pathlib import Path

import numpy as np
import pytest

from seqprof import BucketedShuffleSampler, LengthHistogram, optimal_boundaries
from seqprof.batching.simulate import (
    BUCKETED,
    FIXED,
    GROUP_BY_LENGTH,
    PACKING,
    RANDOM,
    SORTED,
    STRATEGIES,
    batch_starts,
    bucketed_shuffle_epoch,
    computed_tokens,
    length_grouped_order,
    pack_bfd,
    padded_tokens_in_order,
    simulate,
)

REFERENCE = Path(__file__).resolve().parent / "data" / "reference" / "packing_paper.json"  # copied from ../shared
STDLIB_MODULES = ("json", "os", "re", "collections", "argparse", "logging", "pathlib", "subprocess", "textwrap",
                  "decimal", "fractions", "statistics", "functools", "itertools", "email.message", "http.client",
                  "unittest.case", "asyncio.tasks", "inspect", "difflib", "shutil", "tarfile", "zipfile", "csv",
                  "datetime", "heapq", "string", "random", "enum", "dataclasses", "contextlib", "urllib.parse",
                  "xml.etree.ElementTree", "sqlite3", "threading", "socket", "ast", "dis", "pickle")


def stdlib_docstrings() -> list[str]:
    """Real text with a wide length spread: the docstrings of Python's own standard library, read from the
    modules' source files where they have one (the live modules may be patched by other libraries the
    session imported), else from the built-in module itself."""
    docs = []
    for name in STDLIB_MODULES:
        module = importlib.import_module(name)
        try:
            tree = ast.parse(Path(inspect.getsourcefile(module)).read_text(encoding="utf-8"))
        except TypeError:  # a built-in (C) module: no source, and nothing in Python patches it
            docs += [inspect.cleandoc(module.__doc__)] if module.__doc__ else []
            docs += [inspect.cleandoc(obj.__doc__) for attr, obj in sorted(vars(module).items())
                     if not attr.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)
                                                      or inspect.isbuiltin(obj)) and obj.__doc__]
            continue
        if ast.get_docstring(tree):
            docs.append(ast.get_docstring(tree))
        for node in sorted(tree.body, key=lambda n: getattr(n, "name", "")):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_") \
                    and ast.get_docstring(node):
                docs.append(ast.get_docstring(node))
    return docs


@pytest.fixture(scope="module")
def tokenizer(tokenizer_dirs):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tokenizer_dirs["qwen-2.5"]))


@pytest.fixture(scope="module")
def features(tokenizer) -> list[dict]:
    """The docstrings tokenized as a trainer's dataset holds them: input_ids + attention_mask per row."""
    enc = tokenizer(stdlib_docstrings())
    return [{"input_ids": ids, "attention_mask": mask} for ids, mask in zip(enc["input_ids"], enc["attention_mask"])]


@pytest.fixture(scope="module")
def lengths(features) -> np.ndarray:
    return np.array([len(f["input_ids"]) for f in features], dtype=np.int64)


def collated_padding(tokenizer, features: list[dict], batches: list[list[int]]) -> int:
    """Pad tokens transformers' DataCollatorWithPadding really adds to these batches."""
    from transformers import DataCollatorWithPadding

    collator = DataCollatorWithPadding(tokenizer, padding="longest", return_tensors="np")
    padded = 0
    for batch in batches:
        out = collator([features[i] for i in batch])
        padded += int(out["input_ids"].size - out["attention_mask"].sum())
    return padded


def test_the_text_is_real_and_widely_spread(lengths):
    assert len(lengths) > 500 and lengths.max() > 20 * np.median(lengths)


@pytest.mark.parametrize("batch_size", [1, 4, 8, 13])
def test_padding_in_a_given_order_equals_the_real_collator(tokenizer, features, lengths, batch_size):
    order = np.random.default_rng(batch_size).permutation(len(features))
    batches = [order[i:i + batch_size].tolist() for i in range(0, len(order), batch_size)]
    assert padded_tokens_in_order(lengths[order], batch_size=batch_size) == \
        collated_padding(tokenizer, features, batches)


@pytest.mark.parametrize("budget", [1500, 4096])
def test_token_budget_batches_follow_the_fill_rule_and_pad_as_the_collator_does(tokenizer, features, lengths,
                                                                                 budget):
    order = np.random.default_rng(budget).permutation(len(features)).tolist()
    batches, current = [], []  # fill while (n + 1) * longest <= budget, one row at a time
    for i in order:
        if current and (len(current) + 1) * max(lengths[j] for j in current + [i]) > budget:
            batches.append(current)
            current = []
        current.append(i)
    batches.append(current)
    ordered = lengths[order]
    starts = batch_starts(ordered, token_budget=budget)
    assert [b.tolist() for b in np.split(np.array(order), starts[1:])] == batches
    assert padded_tokens_in_order(ordered, token_budget=budget) == collated_padding(tokenizer, features, batches)


def test_sorted_and_bucketed_strategies_equal_the_collator_on_real_rows(tokenizer, features, lengths):
    hist = LengthHistogram.from_lengths(lengths)
    bounds = optimal_boundaries(hist, 6)
    sim = simulate(hist, max_seq_length=int(lengths.max()), boundaries=bounds, batch_size=8, epochs=2,
                   strategies=(SORTED, FIXED))
    order = np.argsort(-lengths, kind="stable")  # sorted by length, longest first, fixed batches of 8
    sorted_batches = [order[i:i + 8].tolist() for i in range(0, len(order), 8)]
    assert sim.strategies[SORTED].padded_tokens == collated_padding(tokenizer, features, sorted_batches)
    # fixed padding: the collator with padding="max_length" pads every row to max_seq_length
    from transformers import DataCollatorWithPadding

    fixed = DataCollatorWithPadding(tokenizer, padding="max_length", max_length=int(lengths.max()),
                                    return_tensors="np")
    out = fixed(features)
    assert sim.strategies[FIXED].padded_tokens == out["input_ids"].size - out["attention_mask"].sum()
    # the bucketed shuffle: the sampler's real batches through the real collator
    sampler = BucketedShuffleSampler(lengths, bounds, batch_size=8, seed=5)
    epoch = sampler.batches(0)
    order, starts = bucketed_shuffle_epoch(lengths, bounds, np.random.default_rng([5, 0]), batch_size=8)
    assert computed_tokens(lengths[order], starts) - lengths.sum() == collated_padding(tokenizer, features, epoch)


def _hf_get_length_grouped_indices():
    """transformers' own get_length_grouped_indices source, compiled here (its module imports torch)."""
    spec = importlib.util.find_spec("transformers")
    path = Path(spec.submodule_search_locations[0]) / "trainer_pt_utils.py"
    source = path.read_text()
    node = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == "get_length_grouped_indices")
    namespace: dict = {}
    exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
    return namespace


class _GivenPermutation:
    """The only torch calls in that function: randperm (we hand it our permutation), tensor, argmax."""

    def __init__(self, permutation: np.ndarray) -> None:
        self.permutation = permutation

    def randperm(self, n, generator=None):
        assert n == len(self.permutation)
        return self.permutation

    tensor = staticmethod(np.array)
    argmax = staticmethod(np.argmax)


@pytest.mark.parametrize("n, batch_size", [(705, 8), (100, 4), (37, 16), (5000, 2)])
def test_group_by_length_order_is_transformers_algorithm(n, batch_size):
    namespace = _hf_get_length_grouped_indices()
    rng = np.random.default_rng(n)
    lens = rng.integers(1, 60, size=n)  # many ties: stable order inside a megabatch matters
    perm = rng.permutation(n)
    namespace["torch"] = _GivenPermutation(perm)
    expected = namespace["get_length_grouped_indices"](lens.tolist(), batch_size)
    assert length_grouped_order(lens, batch_size, perm).tolist() == expected


def plain_bfd(lengths: list[int], capacity: int) -> int:
    """Best-fit decreasing, one row at a time: each row goes to the open bin it leaves least room in."""
    room: list[int] = []
    for length in sorted(lengths, reverse=True):
        fits = [i for i, r in enumerate(room) if r >= length]
        if fits:
            best = min(fits, key=lambda i: room[i])
            room[best] -= length
        else:
            room.append(capacity - length)
    return len(room)


def test_histogram_bfd_packs_exactly_like_the_per_row_packer():
    rng = np.random.default_rng(30)
    for _ in range(300):
        capacity = int(rng.integers(1, 80))
        high = capacity + 1 if rng.random() < 0.5 else max(2, capacity // 3)
        rows = rng.integers(1, high, size=int(rng.integers(0, 120)))
        packs = pack_bfd(LengthHistogram.from_lengths(rows), capacity)
        assert packs == plain_bfd(rows.tolist(), capacity)
        assert packs >= -(-int(rows.sum()) // capacity)  # never below the volume bound


@pytest.mark.parametrize("block", [2, 7, 1024])
def test_the_open_bin_index_finds_the_best_fit_across_its_blocks(monkeypatch, block):
    from seqprof.batching import simulate

    monkeypatch.setattr(simulate._OpenBins, "BLOCK", block)
    rng = np.random.default_rng(block)
    for _ in range(60):
        capacity = int(rng.integers(1, 3000))
        rows = rng.integers(1, capacity + 1, size=int(rng.integers(0, 400)))
        assert pack_bfd(LengthHistogram.from_lengths(rows), capacity) == plain_bfd(rows.tolist(), capacity)


def test_packing_truncates_rows_longer_than_the_bins(lengths):
    cap = 256
    hist = LengthHistogram.from_lengths(lengths)
    assert pack_bfd(hist, cap) == plain_bfd(np.minimum(lengths, cap).tolist(), cap)


def test_reproduces_the_packing_papers_wikipedia_and_squad_figures():
    ref = json.loads(REFERENCE.read_text())
    wiki = ref["wikipedia"]
    hist = LengthHistogram(np.concatenate(([0], wiki["counts"])))  # counts[i]: sequences of length i + 1
    assert hist.count == wiki["published"]["sequences"] == 16_279_552
    sim = simulate(hist, max_seq_length=wiki["max_sequence_length"], boundaries=[512], batch_size=32,
                   epochs=2, strategies=(FIXED, PACKING))
    fixed = sim.strategies[FIXED]
    assert round(fixed.speedup_bound, 4) == wiki["published"]["speed_up_theoretical_limit"] == 2.0013
    assert round(100 * (1 - fixed.padding_efficiency), 2) == 50.03
    packing = sim.strategies[PACKING].padding_efficiency
    # the paper's packers reach 99.60-99.81% with at most 3-12 sequences per pack; BFD has no cap
    assert packing >= min(wiki["published"]["packing_efficiency_percent"].values()) / 100
    assert packing <= 1.0
    squad = ref["squad_1_1"]
    hist = LengthHistogram(np.concatenate(([0], squad["counts"])))
    sim = simulate(hist, max_seq_length=squad["max_sequence_length"], boundaries=[384], batch_size=32,
                   epochs=2, strategies=(FIXED,))
    assert round(100 * (1 - sim.strategies[FIXED].padding_efficiency), 1) == \
        squad["published"]["padding_fraction_percent_fixed"]


@pytest.mark.parametrize("batching", [dict(token_budget=4096), dict(batch_size=8)])
def test_the_drafter_storys_ordering_on_real_wide_spread_text(lengths, batching):
    """sorted > bucketed >> random in padding efficiency; sorted static, bucketed diverse."""
    hist = LengthHistogram.from_lengths(lengths)
    sim = simulate(hist, max_seq_length=int(lengths.max()), boundaries=optimal_boundaries(hist, 6),
                   seed=1, epochs=4, **batching)
    s = sim.strategies
    assert list(s) == list(STRATEGIES)
    assert s[SORTED].padding_efficiency > s[BUCKETED].padding_efficiency
    assert s[BUCKETED].padding_efficiency > 2 * s[RANDOM].padding_efficiency
    assert s[FIXED].padding_efficiency < s[RANDOM].padding_efficiency
    assert s[SORTED].repeated_batches == 1.0 and s[SORTED].consecutive_similarity > 0.9
    assert s[BUCKETED].repeated_batches < 0.1 and abs(s[BUCKETED].consecutive_similarity) < 0.3
    assert s[GROUP_BY_LENGTH].repeated_batches < 0.1
    for result in s.values():
        assert result.speedup_bound == pytest.approx(1 / result.padding_efficiency)
        assert result.padded_tokens == pytest.approx(result.computed_tokens - result.real_tokens)


def test_sampling_past_max_rows_keeps_the_padding_share():
    rng = np.random.default_rng(31)
    hist = LengthHistogram.from_lengths(rng.lognormal(5, 1, 60_000).astype(int) + 1)
    bounds = optimal_boundaries(hist, 6)
    full = simulate(hist, max_seq_length=4096, boundaries=bounds, batch_size=8, epochs=2,
                    strategies=(RANDOM, BUCKETED, FIXED))
    sampled = simulate(hist, max_seq_length=4096, boundaries=bounds, batch_size=8, epochs=2,
                       strategies=(RANDOM, BUCKETED, FIXED), max_rows=20_000)
    assert sampled.simulated_rows == 20_000 and full.simulated_rows == hist.count
    for name in (RANDOM, BUCKETED):
        assert sampled.strategies[name].padding_efficiency == pytest.approx(
            full.strategies[name].padding_efficiency, rel=0.03)
    assert sampled.strategies[FIXED].computed_tokens == full.strategies[FIXED].computed_tokens


def test_group_by_length_megabatches_span_the_accumulated_batch():
    """transformers' Trainer builds LengthGroupedSampler(train_batch_size * gradient_accumulation_steps):
    megabatches of that many rows, sorted, then cut into micro-batches by the DataLoader."""
    namespace = _hf_get_length_grouped_indices()
    rng = np.random.default_rng(11)
    hist = LengthHistogram.from_lengths(rng.integers(1, 400, size=3000))
    micro, accum, cap = 2, 8, 512
    sim = simulate(hist, max_seq_length=cap, boundaries=[100, 200, cap], batch_size=micro,
                   mega_batch_size=micro * accum, strategies=[GROUP_BY_LENGTH], epochs=2)
    lens = np.repeat(np.arange(hist.counts.size), hist.counts)  # the rows simulate() runs on, in its order
    from seqprof.batching.simulate import STRATEGIES

    stream = STRATEGIES.index(GROUP_BY_LENGTH)  # simulate()'s seeded stream for this strategy
    computed = []
    for epoch in range(2):
        perm = np.random.default_rng([0, stream, epoch]).permutation(len(lens))
        namespace["torch"] = _GivenPermutation(perm)
        order = namespace["get_length_grouped_indices"](lens.tolist(), micro * accum)
        batches = [order[i:i + micro] for i in range(0, len(order), micro)]  # the DataLoader's micro-batches
        computed.append(sum(max(lens[j] for j in b) * len(b) for b in batches))
    assert sim.strategies[GROUP_BY_LENGTH].computed_tokens == pytest.approx(np.mean(computed), rel=1e-12)
    micro_only = simulate(hist, max_seq_length=cap, boundaries=[100, 200, cap], batch_size=micro,
                          strategies=[GROUP_BY_LENGTH], epochs=2)
    assert micro_only.strategies[GROUP_BY_LENGTH].computed_tokens != sim.strategies[GROUP_BY_LENGTH].computed_tokens
