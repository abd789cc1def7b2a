"""Falsify breaks: the benchmark figures the pages cite, rendered from their data
(scripts/figures.py)."""

_T = "tests/test_figures_rendered.py"

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a page whose figure differs from its data is no drift",
        "scripts/figures.py",
        "        out += [c for c in citations(text, rel, folder, cache) if c.text != c.rendered]",
        "        out += [c for c in citations(text, rel, folder, cache) if False]",
    ),
    (
        "a figure the data lacks renders blank",
        "scripts/figures.py",
        '            raise FigureError(f"no figure at {pointer!r} (no {part!r})")',
        '            return ""',
    ),
    (
        "a null figure renders as None",
        "scripts/figures.py",
        "    if value is None or isinstance(value, bool | dict | list):",
        "    if isinstance(value, dict | list):",
    ),
    (
        "the miss target's median interval is one rank too narrow",
        "bench/serve.py",
        "        return s[0], s[-1]\n    return s[k - 1], s[n - k]",
        "        return s[0], s[-1]\n    return s[k], s[n - k - 1]",
    ),
    (
        "a miss row is called met by its median alone",
        "bench/serve.py",
        "    if hi <= target:\n        return \"met\"",
        "    if above <= target:\n        return \"met\"",
    ),
]

# the pages and their data are not in the falsifier's copies: only the tests on made-up pages
FOCUS: dict[str, list[str]] = {
    "a page whose figure differs from its data is no drift": [
        f"{_T}::test_a_page_that_says_another_figure_is_drift_and_write_renders_it"
    ],
    "a figure the data lacks renders blank": [
        f"{_T}::test_a_marker_that_names_no_figure_fails_and_never_renders_a_blank"
    ],
    "a null figure renders as None": [
        f"{_T}::test_a_marker_that_names_no_figure_fails_and_never_renders_a_blank"
    ],
}
