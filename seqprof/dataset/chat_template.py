"""Render conversations with a tokenizer's own chat template, in the sandbox transformers uses."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from seqprof.dataset.reader import split_location
from seqprof.errors import SeqprofError

# Names a message's reasoning may come under; templates read `reasoning_content` (gpt-oss: `thinking`).
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


class _GenerationTag(Extension):
    """`{% generation %}...{% endgeneration %}` renders its body unchanged (transformers only tracks offsets)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


class _TemplateDict:
    """`dict(...)` without attribute access to the real type, as transformers exposes it."""

    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)

    def fromkeys(self, *args, **kwargs):
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """Jinja's namespace, refusing underscore names (no path to CPython internals)."""

    def __init__(*args, **kwargs):
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _TemplateNamespace._check(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name, value):
        _TemplateNamespace._check(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check(name):
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"chat templates cannot store {name!r} on a namespace")


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt):
    return datetime.now().strftime(fmt)


@lru_cache(maxsize=8)
def compile_chat_template(source: str) -> jinja2.Template:
    """Compile once per template, in an immutable sandbox with transformers' globals and filters."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[_GenerationTag, loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    try:
        return env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise SeqprofError(f"chat template does not compile ({exc.message}, template line {exc.lineno})",
                           fix="pass a working template with --chat-template FILE") from None


class ChatRenderer:
    """Renders message lists to the exact text `apply_chat_template(..., tokenize=False)` produces."""

    def __init__(self, template: str, special_tokens: Mapping[str, str]) -> None:
        self._template = compile_chat_template(template)
        self._specials = dict(special_tokens)

    def render(self, messages: Sequence[Mapping[str, Any]], *, add_generation_prompt: bool = False,
               location: str | None = None) -> str:
        chat = [_alias_reasoning({k: v for k, v in m.items() if v is not None}) for m in messages]
        try:
            return self._template.render(messages=chat, tools=None, documents=None,
                                         add_generation_prompt=add_generation_prompt, **self._specials)
        except jinja2.exceptions.TemplateError as exc:
            path, line = split_location(location) if location else (None, None)
            raise SeqprofError(f"chat template refused this conversation: {exc}", path=path, line=line,
                               fix="check the roles and their order, or pass --skip-bad-rows") from None
        except (ArithmeticError, TypeError, ValueError, LookupError, AttributeError, RecursionError,
                MemoryError) as exc:  # the template's own code failed (1/0, str + int, runaway recursion)
            path, line = split_location(location) if location else (None, None)
            raise SeqprofError(f"chat template failed on this conversation ({type(exc).__name__}: {exc})",
                               path=path, line=line,
                               fix="fix the template (--chat-template FILE) or pass --skip-bad-rows") from None


def _alias_reasoning(message: dict) -> dict:
    reasoning = next((message[k] for k in _REASONING_FIELDS if message.get(k) is not None), None)
    if reasoning is not None:
        return {"thinking": reasoning, **message, "reasoning_content": reasoning}
    return message
