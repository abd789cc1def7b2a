"""A model file's chat template, rendered in a sandbox with bounds on size, work and time.

``tokenizer.chat_template`` is jinja2 code from the GGUF file, so it is untrusted: jinja2's
sandbox keeps it from reaching Python's internals, but not from spending memory and time
(``{{ 'x' * 4000000000 }}``, loops nested ten deep, a macro that calls itself twice per call).
:class:`ChatTemplate` renders it with these bounds, each enforced as the template runs and
refused before the allocation that would pass it:

* text (:data:`MAX_TEXT_CHARS`): the rendered prompt, and every string the template builds on the
  way (repetition, ``+`` and ``~``, ``%`` and ``format``, ``join``, ``replace``, ``center``,
  ``indent``, ``wordwrap``, a macro's output, ``{{ value }}`` of a list);
* values (:data:`MAX_VALUE_SIZE`): every list, tuple and dict it builds, measured as the text it
  would print as, shared parts counted each time they appear (so a list of a list of a list
  repeated cannot grow without bound behind references); integers (:data:`MAX_INT_BITS`);
* work (:data:`MAX_STEPS`): loop iterations, calls, filters and operators, together;
* nesting (:data:`MAX_DEPTH`): macros, ``caller()`` and recursive loops calling each other;
* time (:data:`MAX_SECONDS`) of one render, checked at every step;
* the template's own length (:data:`MAX_SOURCE_CHARS`), as compiling it is bounded by nothing else.

The template is compiled and tried on a sample conversation when the tokenizer is built, so a
hostile template fails the model's load (``eoc serve --model`` refuses to start); each render is
bounded again, since a template that is quick on the sample may not be on a long conversation.
Every refusal is a :class:`~eoc.errors.ChatTemplateError` that names the bound.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, cast

from eoc.errors import ChatTemplateError, InputError
from eoc_native import require

MAX_TEXT_CHARS = 1 << 20
"""The longest text a template may build or render, in characters (1 MiB): longer than any
prompt a context this runner loads can take (0.75 of 128k tokens is about 400k characters)."""
MAX_VALUE_SIZE = 4 << 20
"""The largest list, tuple or dict a template may build, as the characters it would print as
(its strings' lengths, with 2 a separator and 2 a bracket): room for a filtered copy of a whole
conversation of :data:`MAX_TEXT_CHARS`."""
MAX_INT_BITS = 1 << 16
"""The largest integer a template may compute with ``*`` or ``**``, in bits."""
MAX_ITEMS = 100_000
"""The most items ``batch``, ``slice`` or ``lipsum`` may be asked for (jinja2's own bound on
``range``)."""
MAX_STEPS = 1_000_000
"""Loop iterations, calls, filters and intercepted operators of one render, together (a template
takes about 10 a message)."""
MAX_DEPTH = 32
"""How deeply macros, ``caller()`` and recursive loops may call each other."""
MAX_SECONDS = 1.0
"""Wall time of one render (a chat template renders in about a millisecond)."""
MAX_SOURCE_CHARS = 128 << 10
"""The longest template compiled, in characters (128 KiB; templates in use are under 20 KiB):
compiling is not bounded by the steps or the clock, so the source is."""

SAMPLE = (
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Japan?"},
)
"""The conversation a template is tried on when the model loads (and the same without the system
message, for templates that take none)."""

_LOOP = "eoc_bounded_loop"
_CONCAT = "eoc_bounded_concat"
_VALUE = "eoc_bounded_value"
_AT_LOAD = (
    "the model cannot be loaded: use a model file with a standard chat template, or give this "
    "one another template (gguf-new-metadata MODEL.gguf OUT.gguf --chat-template-file FILE)"
)
_SAMPLED = "a four-message sample conversation as the model loaded"
_AT_RENDER = (
    "send a shorter conversation, or use a model file with a standard chat template (or a raw "
    "completion, which takes no template)"
)


class _Budget:
    """What one render has spent: steps, nesting, and the deadline."""

    __slots__ = ("deadline", "depth", "steps")

    def __init__(self) -> None:
        self.steps = 0
        self.depth = 0
        self.deadline = time.monotonic() + MAX_SECONDS

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _over(f"took more than {MAX_STEPS:,} steps (loop iterations, calls, filters)")
        self.clock()

    def clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise _over(f"ran longer than {MAX_SECONDS:g} s")


_BUDGET: ContextVar[_Budget | None] = ContextVar("eoc_chat_template_budget", default=None)


def _budget() -> _Budget:
    found = _BUDGET.get()
    return _Budget() if found is None else found  # outside ChatTemplate.render: a fresh one


def _over(what: str) -> ChatTemplateError:
    return ChatTemplateError(f"the model file's chat template {what}")


def _text_over(chars: int) -> ChatTemplateError:
    shown = f"{chars:,}" if chars <= 10 * MAX_TEXT_CHARS else f"more than {10 * MAX_TEXT_CHARS:,}"
    return _over(f"would build a text of {shown} characters, over the bound of {MAX_TEXT_CHARS:,}")


def _value_over(what: str = "a value") -> ChatTemplateError:
    return _over(
        f"would build {what} that prints as more than {MAX_VALUE_SIZE:,} characters (the bound "
        "on a list, tuple or dict)"
    )


# -- measuring ------------------------------------------------------------------------------


def _size(value: Any, limit: int) -> int:
    """About how many characters ``str(value)`` is (never fewer), counting a part shared by
    reference each time it appears; stops once past ``limit``."""
    jinja2 = require("jinja2", package="jinja2", why="chat templates")
    total = 0
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            total += len(v) + 2
        elif isinstance(v, jinja2.Undefined):
            pass
        elif isinstance(v, bytes | bytearray):
            total += 4 * len(v) + 3
        elif isinstance(v, bool) or v is None:
            total += 5
        elif isinstance(v, int):
            total += v.bit_length() * 31 // 100 + 3
        elif isinstance(v, float | complex):
            total += 48
        elif isinstance(v, range):
            total += 2 + len(v) * (2 + max(len(str(v.start)), len(str(v.stop))))
        elif isinstance(v, Mapping):
            total += 2 + 4 * len(v)
            if total <= limit:
                todo.extend(v.keys())
                todo.extend(v.values())
        elif isinstance(v, Collection):  # lists, tuples, sets, a dict's keys, values or items
            total += 2 + 2 * len(v) + (0 if isinstance(v, list | tuple | set) else 16)
            if total <= limit:
                todo.extend(v)
        elif isinstance(v, jinja2.utils.Namespace):
            total += 16
            todo.append(object.__getattribute__(v, "_Namespace__attrs"))
        else:  # a function, macro, loop, generator: its repr is short
            total += 64
        if total > limit:
            return total
    return total


def _check_text(value: Any) -> None:
    """Refuse ``value`` if ``str(value)`` would pass :data:`MAX_TEXT_CHARS`."""
    n = len(value) if isinstance(value, str) else _size(value, MAX_TEXT_CHARS)
    if n > MAX_TEXT_CHARS:
        raise _text_over(n)


def _check_value(value: Any) -> Any:
    """Refuse a string over :data:`MAX_TEXT_CHARS` or a container over :data:`MAX_VALUE_SIZE`
    (something a call or filter returned); returns ``value``."""
    if isinstance(value, str | bytes | bytearray):
        if len(value) > MAX_TEXT_CHARS:
            raise _text_over(len(value))
    elif isinstance(value, Mapping | list | tuple | set | frozenset):
        if _size(value, MAX_VALUE_SIZE) > MAX_VALUE_SIZE:
            raise _value_over()
    _budget().clock()
    return value


def _width(n: Any, what: str) -> None:
    if isinstance(n, int) and n > MAX_TEXT_CHARS:
        raise _over(f"asked for {what} of {n:,}, over the bound of {MAX_TEXT_CHARS:,} characters")


def _text_len(value: Any) -> int:
    return (
        len(value) if isinstance(value, str | bytes | bytearray) else _size(value, MAX_TEXT_CHARS)
    )


# -- what amplifies: checked before it runs --------------------------------------------------


def _check_binop(op: str, left: Any, right: Any) -> None:
    if op == "*":
        if isinstance(left, int) and isinstance(right, int):
            if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise _over(f"would compute an integer of more than {MAX_INT_BITS:,} bits")
            return
        seq, times = (left, right) if isinstance(right, int) else (right, left)
        if not isinstance(times, int) or times <= 0:
            return
        if isinstance(seq, str | bytes | bytearray):
            if len(seq) * times > MAX_TEXT_CHARS:
                raise _text_over(len(seq) * times)
        elif isinstance(seq, list | tuple):
            if _size(seq, MAX_VALUE_SIZE) * times > MAX_VALUE_SIZE:
                raise _value_over("a repeated list")
    elif op == "+":
        if isinstance(left, str | bytes | bytearray) and isinstance(right, str | bytes | bytearray):
            if len(left) + len(right) > MAX_TEXT_CHARS:
                raise _text_over(len(left) + len(right))
        elif isinstance(left, list | tuple) and isinstance(right, list | tuple):
            if _size(left, MAX_VALUE_SIZE) + _size(right, MAX_VALUE_SIZE) > MAX_VALUE_SIZE:
                raise _value_over("a joined list")
    elif op == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            if left.bit_length() * right > MAX_INT_BITS:
                raise _over(f"would compute an integer of more than {MAX_INT_BITS:,} bits")
    elif op == "%" and isinstance(left, str):
        _check_percent(left, right)


_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d*)(?:\.(\*|\d*))?[hlL]?(.)")


def _check_percent(fmt: str, args: Any) -> None:
    """Refuse ``fmt % args`` if it may build more than :data:`MAX_TEXT_CHARS`."""
    values = (
        list(args.values())
        if isinstance(args, Mapping)
        else list(args)
        if isinstance(args, tuple)
        else [args]
    )
    biggest = max((_text_len(v) for v in values), default=0)
    star = max((abs(v) for v in values if isinstance(v, int)), default=0)
    total = len(fmt)
    for m in _PERCENT.finditer(fmt):
        for part in (m.group(1), m.group(2)):
            if part == "*":
                total += star
            elif part:
                total += int(part) if len(part) < 10 else 10 * MAX_TEXT_CHARS
        total += biggest
        if total > MAX_TEXT_CHARS:
            raise _text_over(total)


_SPEC_NUMBER = re.compile(r"\d+")


def _check_spec(spec: str) -> None:
    """Refuse a ``format`` spec whose width or precision passes :data:`MAX_TEXT_CHARS`."""
    for digits in _SPEC_NUMBER.findall(spec):
        if len(digits) > 9 or int(digits) > MAX_TEXT_CHARS:
            raise _over(
                f"asked for a format width of {digits}, over the bound of "
                f"{MAX_TEXT_CHARS:,} characters"
            )


def _check_join(sep: Any, items: Sequence[Any]) -> None:
    total = len(sep) * len(items)
    for item in items:
        total += _text_len(item)
        if total > MAX_TEXT_CHARS:
            raise _text_over(total)


def _check_replace(s: Any, old: Any, new: Any, count: Any = -1) -> None:
    if not all(isinstance(x, str | bytes | bytearray) for x in (s, old, new)):
        return
    n = s.count(old) if old else len(s) + 1
    if isinstance(count, int) and count >= 0:
        n = min(n, count)
    if len(s) + n * (len(new) - len(old)) > MAX_TEXT_CHARS:
        raise _text_over(len(s) + n * (len(new) - len(old)))


def _check_str_method(
    method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, ...]:
    """Refuse a call of a string method that would build text past the bound (``center``,
    ``ljust``, ``rjust``, ``zfill``, ``expandtabs``, ``join``, ``replace``, ``translate``);
    returns the arguments to call it with (``join``'s items read once)."""
    s = method.__self__
    name = method.__name__
    if name in ("center", "ljust", "rjust", "zfill"):
        _width(args[0] if args else kwargs.get("width"), f"{name}()")
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if (
            isinstance(size, int)
            and len(s) + s.count("\t" if isinstance(s, str) else b"\t") * size > MAX_TEXT_CHARS
        ):
            raise _text_over(len(s) + s.count("\t" if isinstance(s, str) else b"\t") * size)
    elif name == "join" and args:
        items = list(args[0])
        _check_join(s, items)
        return (items, *args[1:])
    elif name == "replace" and len(args) >= 2:
        _check_replace(s, *args[:3])
    elif name == "translate" and args and isinstance(args[0], Mapping):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        if len(s) * longest > MAX_TEXT_CHARS:
            raise _text_over(len(s) * longest)
    return args


# -- filters -----------------------------------------------------------------------------

#: Filters that turn their input into text: the input is measured first.
_TEXT_FILTERS = frozenset(
    {
        "capitalize", "e", "escape", "filesizeformat", "float", "forceescape", "indent", "int",
        "lower", "pprint", "safe", "string", "striptags", "title", "tojson", "trim", "truncate",
        "upper", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr", "center", "replace",
        "format",
    }
)  # fmt: skip


def _filter_checks(name: str, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Refuse what filter ``name`` would build past a bound; returns the value to call it with
    (an iterator read once into a list where it is measured)."""
    if name in _TEXT_FILTERS:
        _check_text(value)

    def arg(i: int, key: str, default: Any = None) -> Any:
        return args[i] if len(args) > i else kwargs.get(key, default)

    if name == "center":
        _width(arg(0, "width", 80), "center()")
    elif name == "indent":
        width = arg(0, "width", 4)
        _width(width, "an indent")
        prefix = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        text = str(value)
        if len(text) + prefix * (text.count("\n") + 1) > MAX_TEXT_CHARS:
            raise _text_over(len(text) + prefix * (text.count("\n") + 1))
    elif name == "wordwrap":
        wrap = arg(2, "wrapstring") or "\n"
        text = str(value)
        if len(text) * (1 + len(str(wrap))) > MAX_TEXT_CHARS:
            raise _text_over(len(text) * (1 + len(str(wrap))))
    elif name == "replace":
        _check_replace(str(value), arg(0, "old"), arg(1, "new"), arg(2, "count", -1) or -1)
    elif name == "format":
        _check_percent(str(value), kwargs or args)
    elif name == "join":
        items = list(value) if not isinstance(value, list | tuple) else value
        _check_join(str(arg(0, "d", "")), items)
        return items
    elif name in ("batch", "slice"):
        n = arg(0, "linecount" if name == "batch" else "slices")
        if isinstance(n, int) and n > MAX_ITEMS:
            raise _over(f"asked {name} for {n:,} items, over the bound of {MAX_ITEMS:,}")
    elif name == "sum":
        start = arg(1, "start", 0)
        if not isinstance(start, int | float):
            items = list(value)
            total = _size(start, MAX_VALUE_SIZE) + sum(_size(i, MAX_VALUE_SIZE) for i in items)
            if total > MAX_VALUE_SIZE or total * len(items) > 50 * MAX_VALUE_SIZE:
                raise _value_over("a sum of lists")
            return items
    return value


def _bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` counted as a step, its input checked where it could amplify and its result
    measured; it takes the context (so it is never folded at compile time, outside a budget)."""
    require("jinja2", package="jinja2", why="chat templates")
    from jinja2 import pass_context
    from jinja2.utils import _PassArg

    passes = _PassArg.from_obj(func)

    @pass_context
    def bounded(context: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        _budget().step()
        value = _filter_checks(name, value, args, kwargs)
        if passes is _PassArg.context:
            lead: tuple[Any, ...] = (context,)
        elif passes is _PassArg.eval_context:
            lead = (context.eval_ctx,)
        elif passes is _PassArg.environment:
            lead = (context.environment,)
        else:
            lead = ()
        return _check_value(func(*lead, value, *args, **kwargs))

    bounded.__name__ = getattr(func, "__name__", name)
    return bounded


def _loop_items(context: Any, iterable: Iterable[Any]) -> Iterator[Any]:
    """A ``{% for %}`` loop's items, each a step."""
    budget = _budget()
    for item in iterable:
        budget.step()
        yield item


def _concat(context: Any, parts: Sequence[Any]) -> str:
    """``a ~ b``: the parts' text measured before it is joined."""
    _budget().step()
    _check_join("", parts)
    return "".join(str(p) for p in parts)


def _built(context: Any, value: Any) -> Any:
    """A list, tuple or dict written in the template with variables in it, measured."""
    return _check_value(value)


def _bounded_range(*args: int) -> range:
    """``range()`` of at most :data:`MAX_ITEMS` numbers (jinja2's sandbox has the same bound,
    but raises an OverflowError that would not name it)."""
    made = range(*args)
    try:
        n = len(made)
    except OverflowError:  # longer than sys.maxsize
        n = -1
    if n < 0 or n > MAX_ITEMS:
        shown = f"{n:,}" if n >= 0 else "more than 2**63"
        raise _over(f"asked range() for {shown} numbers, over the bound of {MAX_ITEMS:,}")
    return made


def _bounded_lipsum(original: Callable[..., Any]) -> Callable[..., Any]:
    def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> Any:
        if isinstance(n, int) and isinstance(max, int) and n * max > MAX_ITEMS:
            raise _over(f"asked lipsum for {n * max:,} words, over the bound of {MAX_ITEMS:,}")
        return original(n, html, min, max)

    return lipsum


# -- the environment -----------------------------------------------------------------------


def _environment_class() -> type:
    """jinja2's immutable sandbox with every bound hooked in (built on first use: jinja2 is
    imported only when a chat template is)."""
    global _ENV_CLASS
    if _ENV_CLASS is not None:
        return _ENV_CLASS
    require("jinja2", package="jinja2", why="chat templates")
    from jinja2 import nodes, pass_context
    from jinja2.compiler import CodeGenerator
    from jinja2.runtime import BlockReference, LoopContext
    from jinja2.sandbox import (
        ImmutableSandboxedEnvironment,
        SandboxedEscapeFormatter,
        SandboxedFormatter,
    )
    from jinja2.visitor import NodeTransformer
    from markupsafe import Markup

    class Bounder(NodeTransformer):
        """Rewrites the parsed template so that every loop counts its iterations, ``~`` measures
        what it joins, and a list, tuple or dict literal holding variables is measured."""

        def __init__(self, environment: Any) -> None:
            self.environment = environment

        def _filter(self, node: Any, name: str) -> Any:
            made = nodes.Filter(node, name, [], [], None, None, lineno=node.lineno)
            made.set_environment(self.environment)
            return made

        def visit_For(self, node: Any) -> Any:
            self.generic_visit(node)
            node.iter = self._filter(node.iter, _LOOP)
            return node

        def visit_Concat(self, node: Any) -> Any:
            self.generic_visit(node)
            listed = nodes.List(node.nodes, lineno=node.lineno)
            listed.set_environment(self.environment)
            return self._filter(listed, _CONCAT)

        def _literal(self, node: Any) -> Any:
            self.generic_visit(node)
            if getattr(node, "ctx", "load") != "load":
                return node
            try:
                node.as_const()
            except nodes.Impossible:
                return self._filter(node, _VALUE)
            return node

        visit_List = visit_Tuple = visit_Dict = _literal

    class BoundedGenerator(CodeGenerator):
        def visit_Template(self, node: Any, frame: Any = None) -> None:
            Bounder(self.environment).visit(node)
            super().visit_Template(node, frame)

    class BoundedMixin:
        """A ``str.format`` formatter that measures each field and what it has built."""

        built = 0

        def format_field(self, value: Any, format_spec: str) -> Any:
            _budget().step()
            _check_spec(format_spec)
            _check_text(value)
            out = super().format_field(value, format_spec)  # type: ignore[misc]
            self.built += len(out)
            if self.built > MAX_TEXT_CHARS:
                raise _text_over(self.built)
            return out

    class BoundedFormatter(BoundedMixin, SandboxedFormatter):
        pass

    class BoundedEscapeFormatter(BoundedMixin, SandboxedEscapeFormatter):
        pass

    class BoundedEnvironment(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*", "+", "%", "**"})
        code_generator_class = BoundedGenerator

        def __init__(self) -> None:
            super().__init__(trim_blocks=True, lstrip_blocks=True, finalize=_finalize)
            self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}
            self.filters[_LOOP] = pass_context(_loop_items)
            self.filters[_CONCAT] = pass_context(_concat)
            self.filters[_VALUE] = pass_context(_built)
            self.globals["lipsum"] = _bounded_lipsum(
                cast(Callable[..., Any], self.globals["lipsum"])
            )
            self.globals["range"] = _bounded_range

        def concat(self, parts: Iterable[Any]) -> str:
            """A macro's, ``caller()``'s or ``{% set %}`` block's output, measured first."""
            held = list(parts)
            _check_join("", held)
            return "".join(held)

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            _budget().step()
            _check_binop(operator, left, right)
            return _check_value(super().call_binop(context, operator, left, right))

        def wrap_str_format(self, value: Any) -> Any:
            found = super().wrap_str_format(value)
            if found is None:
                return None
            f_self = value.__self__
            formatter = (
                BoundedEscapeFormatter(self, escape=f_self.escape)
                if isinstance(f_self, Markup)
                else BoundedFormatter(self)
            )
            kind = type(f_self)
            is_map = value.__name__ == "format_map"

            def bounded_format(*args: Any, **kwargs: Any) -> str:
                if is_map:
                    if kwargs or len(args) != 1:
                        raise TypeError("format_map() takes exactly one argument")
                    fields: Mapping[str, Any] = args[0]
                    args = ()
                else:
                    fields = kwargs
                formatter.built = 0
                return str(kind(formatter.vformat(f_self, args, fields)))

            return bounded_format

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            budget = _budget()
            budget.step()
            if isinstance(__obj, BlockReference):
                raise _over(
                    "calls a block (self.NAME() or super()), which chat templates here may not"
                )
            if isinstance(__obj, LoopContext) and args:  # a recursive loop's next level
                args = (_loop_items(__context, args[0]), *args[1:])
            if getattr(__obj, "__name__", None) and isinstance(
                getattr(__obj, "__self__", None), str | bytes | bytearray
            ):
                args = _check_str_method(__obj, args, kwargs)
            budget.depth += 1
            try:
                if budget.depth > MAX_DEPTH:
                    raise _over(
                        f"nests calls (macros, caller(), recursive loops) more than {MAX_DEPTH} deep"
                    )
                result = super().call(__context, __obj, *args, **kwargs)
            finally:
                budget.depth -= 1
            return _check_value(result)

    _ENV_CLASS = BoundedEnvironment
    return BoundedEnvironment


_ENV_CLASS: type | None = None


def _finalize(value: Any) -> Any:
    """``{{ value }}``: measured before it is turned into text."""
    _check_text(value)
    return value


# -- the template --------------------------------------------------------------------------


class ChatTemplate:
    """A chat template compiled once and tried on :data:`SAMPLE`; :meth:`render` is bounded.

    Raises :class:`~eoc.errors.ChatTemplateError` when the template does not parse or passes a
    bound on the sample (its own ``raise_exception`` on the sample is allowed: a template may
    refuse a system message, which a conversation need not have).
    """

    def __init__(self, source: str, *, bos_token: str = "", eos_token: str = "") -> None:
        self.source = source
        if len(source) > MAX_SOURCE_CHARS:
            raise ChatTemplateError(
                f"the model file's chat template is {len(source):,} characters, over the bound of "
                f"{MAX_SOURCE_CHARS:,}: {_AT_LOAD}"
            )
        self._special = {"bos_token": bos_token, "eos_token": eos_token}
        env = _environment_class()()
        env.globals["raise_exception"] = _raise_exception
        budget = _Budget()
        mark = _BUDGET.set(budget)
        try:
            self._template = env.from_string(source)
        except ChatTemplateError as exc:
            raise ChatTemplateError(f"{exc.reason}: {_AT_LOAD}") from None
        except RecursionError:
            raise ChatTemplateError(
                f"the model file's chat template is nested too deeply to compile: {_AT_LOAD}"
            ) from None
        except Exception as exc:  # jinja2.TemplateSyntaxError, without importing jinja2 eagerly
            raise ChatTemplateError(
                f"the model file's chat template does not parse ({exc}): {_AT_LOAD}"
            ) from None
        finally:
            _BUDGET.reset(mark)
        self.check()

    def check(self) -> None:
        """Render :data:`SAMPLE` (and it without its system message) under the bounds; raise
        :class:`ChatTemplateError` if a bound is passed."""
        for sample in (SAMPLE, SAMPLE[1:]):
            try:
                self._render(sample, add_generation_prompt=True)
                return
            except ChatTemplateError as exc:
                raise ChatTemplateError(f"{exc.reason} (tried on {_SAMPLED}): {_AT_LOAD}") from None
            except InputError:  # the template's raise_exception: it refused this sample
                continue
            except (RecursionError, MemoryError) as exc:
                raise ChatTemplateError(
                    f"the model file's chat template {_BREAKS[type(exc)]} (tried on {_SAMPLED}): "
                    f"{_AT_LOAD}"
                ) from None
            except Exception as exc:
                if type(exc).__name__ == "SecurityError":  # jinja2.sandbox's: an escape attempt
                    raise ChatTemplateError(
                        f"the model file's chat template reached outside the sandbox ({exc}): "
                        f"{_AT_LOAD}"
                    ) from None
                continue  # a sample the template cannot take (it may want tools): not a bound

    def render(
        self, messages: Sequence[Mapping[str, str]], *, add_generation_prompt: bool = True
    ) -> str:
        """The prompt text of ``messages`` (``role``/``content`` dicts), under the bounds."""
        try:
            return self._render(messages, add_generation_prompt=add_generation_prompt)
        except ChatTemplateError as exc:
            raise ChatTemplateError(f"{exc.reason}: {_AT_RENDER}") from None
        except InputError:
            raise
        except (RecursionError, MemoryError) as exc:
            raise ChatTemplateError(
                f"the model file's chat template {_BREAKS[type(exc)]}: {_AT_RENDER}"
            ) from None
        except Exception as exc:
            said = str(exc) or "no reason given"
            raise ChatTemplateError(
                f"the model file's chat template failed on these messages "
                f"({type(exc).__name__}: {said})"
            ) from None

    def _render(self, messages: Sequence[Mapping[str, str]], *, add_generation_prompt: bool) -> str:
        budget = _Budget()
        mark = _BUDGET.set(budget)
        pieces = self._template.generate(
            messages=[dict(m) for m in messages],
            add_generation_prompt=add_generation_prompt,
            **self._special,
        )
        try:
            out: list[str] = []
            total = 0
            for piece in pieces:
                total += len(piece)
                if total > MAX_TEXT_CHARS:
                    raise _over(
                        f"renders more than {MAX_TEXT_CHARS:,} characters (the bound on a prompt)"
                    )
                out.append(piece)
                budget.clock()
            return "".join(out)
        finally:
            pieces.close()
            _BUDGET.reset(mark)


_BREAKS = {
    RecursionError: "recursed past Python's own limit",
    MemoryError: "ran out of memory",
}


def _raise_exception(message: str) -> None:
    raise InputError(f"chat template refused the messages: {message}")


__all__ = [
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_ITEMS",
    "MAX_SECONDS",
    "MAX_SOURCE_CHARS",
    "MAX_STEPS",
    "MAX_TEXT_CHARS",
    "MAX_VALUE_SIZE",
    "SAMPLE",
    "ChatTemplate",
]
