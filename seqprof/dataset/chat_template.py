"""Render conversations with a tokenizer's own chat template, in the sandbox transformers uses."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.sandbox import safe_range as _sandbox_range

from seqprof.dataset.reader import split_location
from seqprof.errors import SeqprofError

# Bounds on one render. A real template renders a long conversation in well under a millisecond with a few
# thousand operations; these stop a runaway template (nested loops, 'x' * 10**9, 10**10**10) in seconds.
MAX_OPERATIONS = 5_000_000  # attribute and item lookups, calls and range() items in one render
MAX_RENDER_SECONDS = 10.0
MAX_OUTPUT_CHARS = 64 << 20  # longer than any row seqprof counts (seqprof.dataset.lengths.MAX_TEXT_CHARS)
MAX_EXPONENT = 1024

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


class TemplateRunaway(SeqprofError):
    """The template, not the row, is at fault: it ran past a bound. Not skipped by --skip-bad-rows (every
    row would pay the bound)."""


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """transformers' immutable sandbox, with a budget of operations, time and output per render."""

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.operations = 0
        self.deadline = 0.0

    def start_render(self) -> None:
        self.operations = 0
        self.deadline = time.monotonic() + MAX_RENDER_SECONDS

    def spend(self, n: int = 1) -> None:
        self.operations += n
        if self.operations > MAX_OPERATIONS:
            raise _Runaway(f"more than {MAX_OPERATIONS:,} operations in one render")
        if self.operations & 1023 == 0 and time.monotonic() > self.deadline:
            raise _Runaway(f"more than {MAX_RENDER_SECONDS:g} s on one conversation")

    def getattr(self, obj, attribute):
        self.spend()
        return super().getattr(obj, attribute)

    def getitem(self, obj, argument):
        self.spend()
        return super().getitem(obj, argument)

    def call(self, context, obj, /, *args, **kwargs):
        self.spend()
        return super().call(context, obj, *args, **kwargs)

    def call_binop(self, context, operator, left, right):
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_OUTPUT_CHARS:
                    raise _Runaway(f"a repetition of {len(seq) * n:,} items")
        elif isinstance(left, int) and isinstance(right, int) and abs(right) > MAX_EXPONENT and abs(left) > 1:
            raise _Runaway(f"an exponent of {right:,}")
        return super().call_binop(context, operator, left, right)

    def counted_range(self, *args) -> _CountedRange:
        return _CountedRange(_sandbox_range(*args), self)


class _CountedRange(Sequence):
    """range() whose iteration charges each item to the render's budget (a loop over a range need do
    nothing else that is counted); indexing, len() and reversal work as on a range."""

    def __init__(self, items: range, sandbox: _BoundedSandbox) -> None:
        self._items, self._sandbox = items, sandbox

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):
        return self._items[index]

    def __iter__(self):
        for item in self._items:
            self._sandbox.spend()
            yield item

    def __reversed__(self):
        return iter(_CountedRange(self._items[::-1], self._sandbox))


class _Runaway(Exception):
    """Raised inside a render; ChatRenderer turns it into TemplateRunaway with the row's location."""


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(fmt):
    return datetime.now().strftime(fmt)


@lru_cache(maxsize=8)
def compile_chat_template(source: str) -> jinja2.Template:
    """Compile once per template, in an immutable sandbox with transformers' globals and filters."""
    env = _BoundedSandbox(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    env.globals["range"] = env.counted_range
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
            self._template.environment.start_render()
            return "".join(_bounded(self._template.generate(
                messages=chat, tools=None, documents=None, add_generation_prompt=add_generation_prompt,
                **self._specials)))
        except _Runaway as exc:
            path, line = split_location(location) if location else (None, None)
            raise TemplateRunaway(f"chat template ran past its bound on this conversation ({exc})", path=path,
                                  line=line, fix="fix the template's loops (--chat-template FILE)") from None
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


def _bounded(pieces: Iterator[str]) -> Iterator[str]:
    """The rendered pieces, stopped once their total passes MAX_OUTPUT_CHARS."""
    total = 0
    for piece in pieces:
        total += len(piece)
        if total > MAX_OUTPUT_CHARS:
            raise _Runaway(f"more than {MAX_OUTPUT_CHARS:,} characters of output")
        yield piece


def _alias_reasoning(message: dict) -> dict:
    reasoning = next((message[k] for k in _REASONING_FIELDS if message.get(k) is not None), None)
    if reasoning is not None:
        return {"thinking": reasoning, **message, "reasoning_content": reasoning}
    return message
