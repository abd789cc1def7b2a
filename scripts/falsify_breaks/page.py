"""Falsify breaks: the model that runs in the demo page (its backend, rates and file server)."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a stopped page answer is remembered",
        "eoc/stages/page_model.py",
        "            not (stopped or looped),\n",
        "            not looped,\n",
    ),
    (
        "an answer the page stopped in a loop is remembered",
        "eoc/stages/page_model.py",
        "            not (stopped or looped),\n",
        "            not stopped,\n",
    ),
    (
        "the page model's estimate leaves out the prompt",
        "eoc/stages/page_model.py",
        "Stage.NEURAL, tokens_in=tokens_in, tokens_out=tokens_out, rates=self.work_rates",
        "Stage.NEURAL, tokens_in=0, tokens_out=tokens_out, rates=self.work_rates",
    ),
    (
        "the page's token counts are not checked",
        "eoc/stages/page_model.py",
        "        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value",
        "        if not isinstance(value, int) or not -(2**62) <= value",
    ),
    (
        "a page reply with no finish reason is taken",
        "eoc/stages/page_model.py",
        "        if not stopped and finish not in FINISH_REASONS:",
        "        if False:",
    ),
    (
        "the neural stage ignores its backend's rates",
        "eoc/stages/neural.py",
        "        return found if isinstance(found, WorkRates) else None",
        "        return None",
    ),
    (
        "prompt tokens priced with the output head",
        "web/ggufmacs.py",
        "        macs_per_prompt_token=body,",
        "        macs_per_prompt_token=body + head,",
    ),
    (
        "a tied output head is not counted",
        "web/ggufmacs.py",
        '    head = matrices.get("output.weight", matrices["token_embd.weight"])',
        '    head = matrices.get("output.weight", 0)',
    ),
    (
        "the demo server never sends the isolation headers",
        "web/serve.py",
        '        if getattr(self.server, "isolation", True):',
        "        if False:",
    ),
    (
        "the page's loop rule never finds a loop",
        "web/src/loops.js",
        "    if (same) return true;",
        "    if (same) return false;",
    ),
    (
        "the page's loop rule is not the core's",
        "web/src/loops.js",
        "export const DEFAULT_RULE = { period: 32, repeats: 4, min_tokens: 12 };",
        "export const DEFAULT_RULE = { period: 32, repeats: 3, min_tokens: 12 };",
    ),
    (
        "the docs site loads highlight.js from a CDN",
        "mkdocs.yml",
        "  highlightjs: false\n",
        "  highlightjs: true\n",
    ),
    (
        "the docs checker lets a request elsewhere through",
        "scripts/site_offline.py",
        '        if url.startswith(origin) or url.startswith("data:"):',
        '        if url.startswith("http") or url.startswith("data:"):',
    ),
]

FOCUS: dict[str, list[str]] = {
    "the neural stage ignores its backend's rates": ["tests/test_page_model.py"],
    "the demo server never sends the isolation headers": [
        "tests/web/test_serve.py::test_isolation_headers_are_sent_unless_turned_off"
    ],
}
