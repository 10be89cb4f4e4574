"""Dataset schemas: detect which one a row follows and normalise rows to it (names per TRL/axolotl)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from seqprof.dataset.reader import Row, split_location
from seqprof.errors import SeqprofError

SCHEMAS = ("text", "prompt_completion", "messages", "preference", "alpaca")

# ShareGPT speaker names -> chat-template roles
SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                   "model": "assistant", "bot": "assistant", "system": "system", "tool": "tool",
                   "observation": "tool", "function_call": "assistant", "function": "tool"}


@dataclass(frozen=True)
class Schema:
    """Which schema, and which column holds each of its fields (overridable with --field)."""

    name: str
    columns: Mapping[str, str] = field(default_factory=dict)

    def column(self, role: str) -> str:
        return self.columns.get(role, role)


def detect_schema(record: Any, *, location: str, forced: str | None = None,
                  columns: Mapping[str, str] | None = None) -> Schema:
    """Schema from the first row's keys; `forced` and `columns` are the user's overrides."""
    columns = dict(columns or {})
    if forced is not None:
        if forced not in SCHEMAS:
            raise SeqprofError(f"unknown schema {forced!r}", fix=f"use one of {', '.join(SCHEMAS)}")
        return Schema(forced, columns)
    if not isinstance(record, Mapping):
        path, line = split_location(location)
        raise SeqprofError(f"a row must be a JSON object, got {type(record).__name__}", path=path,
                           line=line, fix="write one object per row")
    keys = set(record) | set(columns.values())

    def has(role: str) -> bool:
        return columns.get(role, role) in keys

    if has("chosen") and has("rejected"):
        return Schema("preference", columns)
    if has("messages"):
        return Schema("messages", columns)
    if "conversations" in keys:
        return Schema("messages", {"messages": "conversations", **columns})
    if has("prompt") and has("completion"):
        return Schema("prompt_completion", columns)
    if has("instruction") and has("output"):
        return Schema("alpaca", columns)
    if has("text"):
        return Schema("text", columns)
    path, line = split_location(location)
    raise SeqprofError(f"no recognised text field in row (keys: {', '.join(sorted(map(str, record))) or 'none'})",
                       path=path, line=line,
                       fix="use text, prompt/completion, messages, prompt/chosen/rejected or instruction/input/output, "
                           "or map a column with --field text=COLUMN")


def normalise(row: Row, schema: Schema) -> dict[str, Any]:
    """The row's fields in the schema's canonical shape; a wrong type is an error naming the row."""
    rec = row.record
    if not isinstance(rec, Mapping):
        raise _bad(row, f"a row must be a JSON object, got {type(rec).__name__}")
    if schema.name == "text":
        return {"text": _string(row, rec, schema.column("text"))}
    if schema.name == "prompt_completion":
        prompt = _text_or_messages(row, rec, schema.column("prompt"))
        completion = _text_or_messages(row, rec, schema.column("completion"))
        if isinstance(prompt, str) != isinstance(completion, str):
            raise _bad(row, "prompt and completion must both be strings or both be message lists")
        return {"prompt": prompt, "completion": completion}
    if schema.name == "messages":
        msgs = _messages(row, rec, schema.column("messages"))
        if not msgs:
            raise _bad(row, f"'{schema.column('messages')}' is empty")
        return {"messages": msgs}
    if schema.name == "preference":
        col = schema.column("prompt")
        prompt = _text_or_messages(row, rec, col) if col in rec else None
        chosen = _text_or_messages(row, rec, schema.column("chosen"))
        rejected = _text_or_messages(row, rec, schema.column("rejected"))
        kinds = {isinstance(x, str) for x in (prompt, chosen, rejected) if x is not None}
        if len(kinds) > 1:
            raise _bad(row, "prompt, chosen and rejected must all be strings or all be message lists")
        return {"prompt": prompt, "chosen": chosen, "rejected": rejected}
    if schema.name == "alpaca":
        inp_col = schema.column("input")
        inp = rec.get(inp_col)
        return {"instruction": _string(row, rec, schema.column("instruction")),
                "input": "" if inp is None else _string(row, rec, inp_col),
                "output": _string(row, rec, schema.column("output"))}
    raise AssertionError(schema.name)


def _string(row: Row, rec: Mapping, col: str) -> str:
    if col not in rec:
        raise _bad(row, f"missing field '{col}'")
    value = rec[col]
    if not isinstance(value, str):
        raise _bad(row, f"field '{col}' must be a string, got {_type(value)}")
    return value


def _text_or_messages(row: Row, rec: Mapping, col: str) -> str | list[dict]:
    if col not in rec:
        raise _bad(row, f"missing field '{col}'")
    value = rec[col]
    return value if isinstance(value, str) else _messages(row, rec, col)


def _messages(row: Row, rec: Mapping, col: str) -> list[dict]:
    if col not in rec:
        raise _bad(row, f"missing field '{col}'")
    value = rec[col]
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise _bad(row, f"field '{col}' must be a list of messages, got {_type(value)}")
    out = []
    for i, msg in enumerate(value):
        if not isinstance(msg, Mapping):
            raise _bad(row, f"{col}[{i}] must be an object with role and content, got {_type(msg)}")
        if "role" in msg:
            role, content = msg["role"], msg.get("content")
        elif "from" in msg:  # ShareGPT
            role, content = SHAREGPT_ROLES.get(str(msg["from"]).lower(), str(msg["from"])), msg.get("value")
        else:
            raise _bad(row, f"{col}[{i}] has no 'role' (or ShareGPT 'from')")
        if not isinstance(role, str) or not role:
            raise _bad(row, f"{col}[{i}]'s role must be a non-empty string, got {_type(role)}")
        out.append({**{k: v for k, v in msg.items() if k not in ("from", "value") and v is not None},
                    "role": role, "content": _content_text(row, col, i, content)})
    return out


def _content_text(row: Row, col: str, i: int, content: Any) -> str:
    """Content as text: a list of parts (OpenAI/HF style) is joined, so it is counted as text, never as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, Mapping):
                continue  # images/audio: no text tokens here
            else:
                raise _bad(row, f"{col}[{i}].content has a part of type {_type(part)}")
        return "\n".join(texts)
    raise _bad(row, f"{col}[{i}].content must be a string or a list of parts, got {_type(content)}")


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", type(None): "null", int: "a number", float: "a number",
            bool: "a boolean", str: "a string"}.get(type(value), type(value).__name__)


def _bad(row: Row, message: str) -> SeqprofError:
    path, line = split_location(row.location)
    return SeqprofError(message, path=path, line=line,
                        fix="fix the row, map columns with --field, or pass --skip-bad-rows")
