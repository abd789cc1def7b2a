"""Falsify breaks: issue 35, item 2. A model file's chat template is rendered under bounds on
work, time, nesting, the text it builds, what it renders and the lists it builds; each break
removes one bound, and the test that catches it runs each hostile template in a child process
with its address space capped and a timeout, so a break shows red, never a hung run (``FOCUS``)."""

_TEMPLATE = "native/eoc_native/llm/template.py"
_BOUNDS = "tests/native/test_chat_template_bounds.py"

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a chat template's loop work is not counted",
        _TEMPLATE,
        "        if self.steps > MAX_STEPS:\n",
        "        if False:\n",
    ),
    (
        "a chat template's render has no time bound",
        _TEMPLATE,
        "        if time.monotonic() > self.deadline:\n",
        "        if False:\n",
    ),
    (
        "a chat template's macros may nest without bound",
        _TEMPLATE,
        "                if budget.depth > MAX_DEPTH:\n",
        "                if False:\n",
    ),
    (
        "a chat template's repeated text is not measured first",
        _TEMPLATE,
        "            if len(seq) * times > MAX_TEXT_CHARS:\n",
        "            if False:\n",
    ),
    (
        "a chat template's rendered prompt has no bound",
        _TEMPLATE,
        "                if total > MAX_TEXT_CHARS:\n",
        "                if False:\n",
    ),
    (
        "a list a chat template writes with variables in it is not measured",
        _TEMPLATE,
        "                return self._filter(node, _VALUE)\n",
        "                return node\n",
    ),
]

FOCUS: dict[str, list[str]] = {name: [_BOUNDS] for name, _, _, _ in BREAKS}
