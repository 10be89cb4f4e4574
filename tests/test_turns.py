"""Per-role counts from one encoding equal rendering and encoding every prefix, on real chats and templates.

The reference is the old, quadratic definition computed with transformers alone: role of message i-1 gets
len(apply_chat_template(messages[:i])) - len(apply_chat_template(messages[:i-1])), the last role the rest.
"""

from __future__ import annotations

import pytest

from seqprof.dataset.lengths import LengthCounter, tokens_before
from seqprof.dataset.tokenizers import load_tokenizer
from seqprof.dataset.turns import TurnLocator

from conftest import materialize_tokenizer

# several families' own templates: ChatML (Qwen 2.5, Qwen 3), Llama 3 headers (R1 distill), DeepSeek V3, GLM 4
FAMILIES = ["qwen-2.5", "qwen-3", "deepseek-r1-distill-llama-8b", "deepseek-v3", "glm-4-32b-0414"]


def _chats(conversations, n=40):
    """Real conversations, some given a system turn, and one long one (several joined, ~100 turns)."""
    out = []
    for i, conv in enumerate(conversations[:n]):
        msgs = [dict(m) for m in conv]
        if i % 3 == 0 and msgs[0]["role"] != "system":
            msgs = [{"role": "system", "content": "Answer about Python's standard library."}] + msgs
        out.append(msgs)
    out.append([m for conv in conversations[n:n + 30] for m in conv if m["role"] != "system"])
    return out


def _chatml_counts(hf, msgs) -> dict[str, int]:
    """ChatML's own turn structure: each message's block starts at an `<|im_start|>`; tokens by offsets."""
    text = hf.apply_chat_template(msgs, tokenize=False)
    cuts = [i for i in range(len(text)) if text.startswith("<|im_start|>", i)][1:] + [len(text)]
    starts = [s for s, _ in hf(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]]
    fields: dict[str, int] = {}
    before = 0
    for message, cut in zip(msgs, cuts[-len(msgs):]):
        now = sum(1 for s in starts if s < cut)
        fields[message["role"]] = fields.get(message["role"], 0) + now - before
        before = now
    return fields


def _prefix_counts(hf, msgs) -> dict[str, int]:
    def length(prefix):
        ids = hf.apply_chat_template(prefix, tokenize=True) if prefix else []
        return len(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)
    fields: dict[str, int] = {}
    before = 0
    for i in range(1, len(msgs) + 1):
        now = length(msgs[:i])
        fields[msgs[i - 1]["role"]] = fields.get(msgs[i - 1]["role"], 0) + now - before
        before = now
    return fields


@pytest.mark.parametrize("family", FAMILIES)
def test_per_role_counts_equal_prefix_rendering(family, conversations, tmp_path):
    from transformers import AutoTokenizer

    folder = materialize_tokenizer(family, tmp_path / family)
    hf = AutoTokenizer.from_pretrained(str(folder))
    counter = LengthCounter(load_tokenizer(str(folder)), "messages")
    chats = _chats(conversations)
    for i, msgs in enumerate(chats):
        got = counter.count([{"messages": msgs}], [f"row {i}"])  # fields hold only the roles a row has
        row = {role: int(values[0]) for role, values in got.fields.items()}
        if family == "qwen-3":
            # Qwen 3 is not prefix-stable: a conversation's LAST assistant turn gets an empty <think></think>
            # block, earlier ones do not. Prefix rendering moved those tokens from the next user turn to the
            # assistant; one encoding counts them where the text has them (ChatML's own turn starts).
            assert row == _chatml_counts(hf, msgs), (family, i)
        else:
            assert row == _prefix_counts(hf, msgs), (family, i)
        assert sum(row.values()) == got.sequence[0]
    assert counter._turns.not_located == 0  # every content was found: no prefix encodings


def test_long_conversation_renders_once_per_role_not_per_prefix(conversations):
    tok = load_tokenizer("qwen-2.5")
    counter = LengthCounter(tok, "messages")
    renders = []
    original = counter._renderer.render

    def counting(messages, **kw):
        renders.append(len(messages))
        return original(messages, **kw)

    counter._renderer.render = counting
    long = [m for conv in conversations[:200] for m in conv]  # ~600 turns
    counter.count([{"messages": long}], ["row 1"])
    assert len(long) > 500
    assert len(renders) <= 1 + len({m["role"] for m in long})  # the full text, one prefix per role
    counter.count([{"messages": long}], ["row 2"])
    assert len(renders) <= 2 + len({m["role"] for m in long})  # closings are learned once per dataset


PLAIN = "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"


def test_a_straddling_token_counts_where_it_starts_and_fields_add_up(tmp_path):
    """A template with no special tokens between turns: a word can run across the cut."""
    template = tmp_path / "plain.jinja"
    template.write_text(PLAIN)
    tok = load_tokenizer("qwen-2.5", chat_template_path=str(template))
    msgs = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "world"}]
    counter = LengthCounter(tok, "messages")
    got = counter.count([{"messages": msgs}], ["row 1"])
    text = "user: hello\nassistant: world\n"
    enc = tok.tokenizer.encode(text, add_special_tokens=False)
    starts = [s for s, _ in enc.offsets]
    cut = text.index("assistant")
    assert got.fields["user"][0] == sum(1 for s in starts if s < cut)  # brute force over the offsets
    assert got.fields["user"][0] + got.fields["assistant"][0] == got.sequence[0] == len(enc.ids)


def test_tokens_before_counts_a_straddling_token_on_its_start_side():
    tok = load_tokenizer("qwen-2.5").tokenizer
    text = "internationalization"
    enc = tok.encode(text, add_special_tokens=False)
    for cut in range(len(text) + 1):
        assert tokens_before(enc, cut, len(text)) == sum(1 for s, _ in enc.offsets if s < cut)


def test_a_template_that_rewrites_content_falls_back_to_encoding_each_prefix(tmp_path):
    template = tmp_path / "upper.jinja"
    template.write_text("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] | upper }}"
                        "<|im_end|>\n{% endfor %}")
    tok = load_tokenizer("qwen-2.5", chat_template_path=str(template))
    counter = LengthCounter(tok, "messages")
    msgs = [{"role": "user", "content": "make it loud"}, {"role": "assistant", "content": "ok then"},
            {"role": "user", "content": "again"}]
    got = counter.count([{"messages": msgs}], ["row 1"])
    assert counter._turns.not_located == 1
    render = counter._renderer.render
    enc = tok.tokenizer.encode
    first = len(enc(render(msgs[:1]), add_special_tokens=False).ids)
    two = len(enc(render(msgs[:2]), add_special_tokens=False).ids)
    assert got.fields["assistant"][0] == two - first
    assert got.fields["user"][0] == got.sequence[0] - (two - first)


def test_a_template_that_hoists_system_turns_gets_the_prefix_counts(conversations, tmp_path):
    """DeepSeek V3 moves every system message to the front: no turn spans in order, the old counts."""
    from transformers import AutoTokenizer

    folder = materialize_tokenizer("deepseek-v3", tmp_path / "ds")
    hf = AutoTokenizer.from_pretrained(str(folder))
    counter = LengthCounter(load_tokenizer(str(folder)), "messages")
    msgs = [m for conv in conversations[:6] for m in conv]
    msgs.insert(3, {"role": "system", "content": "Be brief in the second part."})
    got = counter.count([{"messages": msgs}], ["row 1"])
    assert {role: int(v[0]) for role, v in got.fields.items()} == _prefix_counts(hf, msgs)


def test_reasoning_dropped_from_earlier_turns_is_still_located():
    """Qwen 3 renders only what follows `</think>` in earlier assistant turns: the answer is still found."""
    tok = load_tokenizer("qwen-3")
    counter = LengthCounter(tok, "messages")
    msgs = [{"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": "<think>\nadd them\n</think>\n\nIt is 4."},
            {"role": "user", "content": "And 3+3?"}, {"role": "assistant", "content": "6."}]
    text = counter._renderer.render(msgs)
    assert "add them" not in text
    got = counter.count([{"messages": msgs}], ["row 1"])
    assert counter._turns.not_located == 0
    assert sum(int(v[0]) for v in got.fields.values()) == got.sequence[0]


@pytest.mark.parametrize("family", ["qwen-2.5", "deepseek-r1-distill-llama-8b"])
def test_locator_cuts_are_where_each_prefix_render_ends(family, conversations):
    counter = LengthCounter(load_tokenizer(family), "messages")
    locator = TurnLocator(counter._renderer)
    for msgs in conversations[:20]:
        text = counter._renderer.render(msgs)
        cuts = locator.turn_starts(msgs, text)
        assert cuts == [0] + [len(counter._renderer.render(msgs[:i])) for i in range(1, len(msgs))]


def test_qwen3_cuts_fall_where_its_turns_start(conversations):
    counter = LengthCounter(load_tokenizer("qwen-3"), "messages")
    locator = TurnLocator(counter._renderer)
    for msgs in conversations[:20]:
        text = counter._renderer.render(msgs)
        heads = [i for i in range(len(text)) if text.startswith("<|im_start|>", i)]
        assert len(heads) == len(msgs) and locator.turn_starts(msgs, text) == heads
