"""The guards scripts/falsify.py breaks, and which tests must catch each break.

Each break: (what it does, file, original text, broken text). The original must occur exactly
once in its file (``scripts/falsify.py --check``, also run by tests/test_falsify.py). The breaks
are kept by area, one module each; ``TESTS_FOR`` names the tests run for a break by its file's
path, ``FOCUS`` by its name.
"""

from falsify_breaks import (
    counters,
    docfigures,
    encoder,
    factwords,
    figures,
    gateway,
    gguf_mutations,
    guard,
    hostile,
    incontext,
    judge,
    ledger,
    memo,
    model,
    native_data,
    page,
    partition,
    planted,
    qwen2,
    repeat,
    serve,
    stages,
    startup,
    stores,
    templates,
    tools,
    userstore,
    wordgate,
)

TESTS_FOR: list[tuple[str, list[str]]] = [
    (
        "eoc/store/entry.py",
        ["tests/test_replay.py", "tests/test_ttl.py", "tests/test_made_cost.py"],
    ),
    ("eoc/cli/userstore.py", ["tests/test_userstore.py"]),
    ("tests/native/pg.py", ["tests/native/test_store_postgres.py"]),
    ("eoc/store/forget.py", ["tests/test_forget.py"]),
    ("eoc/files/trust.py", ["tests/test_trustfile.py", "tests/native/test_planted_files.py"]),
    ("eoc/store/keys.py", ["tests/test_trustfile.py", "tests/test_store_keys.py"]),
    ("eoc/cli/forget.py", ["tests/test_forget.py"]),
    ("native/eoc_native/serve/forgetroute.py", ["tests/native/test_serve_memo.py"]),
    (
        "eoc/meter/",
        [
            "tests/test_liveness.py",
            "tests/test_marginal.py",
            "tests/test_detect.py",
            "tests/test_cascade.py",
            "tests/test_properties.py",
            "tests/native/test_plugins.py",
        ],
    ),
    ("eoc/plugins.py", ["tests/native/test_plugins.py", "tests/test_detect.py"]),
    ("scripts/readme_check.py", ["tests/native/test_readme_check.py"]),
    ("bench/serve.py", ["tests/native/test_bench_serve_stats.py"]),
    ("scripts/falsify_anchor.py", ["tests/test_falsify.py"]),
    (
        "eoc/knowledge/",
        [
            "tests/test_knowledge.py",
            "tests/native/test_plugins.py",
            "tests/native/test_semantic.py",
        ],
    ),
    (
        "eoc/cascade.py",
        [
            "tests/test_cascade.py",
            "tests/test_cascade_steps.py",
            "tests/test_properties.py",
            "tests/test_browser_honesty.py",
            "tests/native/test_ioreport_nvml.py",
            "tests/test_chat.py",
        ],
    ),
    ("eoc/ledger.py", ["tests/test_ledger.py", "tests/test_made_cost.py"]),
    ("eoc/calibration.py", ["tests/test_cascade.py", "tests/test_properties.py"]),
    ("eoc/cost.py", ["tests/test_cost_receipt.py", "tests/test_browser_honesty.py"]),
    ("eoc/receipt.py", ["tests/test_cost_receipt.py", "tests/test_cli.py"]),
    (
        "eoc/testing.py",
        ["tests/test_cost_receipt.py", "tests/test_cascade.py", "tests/test_detect.py"],
    ),
    ("eoc/response.py", ["tests/test_stages.py", "tests/test_answerdoc.py"]),
    ("eoc/answerdoc.py", ["tests/test_answerdoc.py", "tests/test_cli.py"]),
    (
        "eoc/assemble.py",
        [
            "tests/test_assemble.py",
            "tests/test_knowledge.py",
            "tests/native/test_plugins.py",
            "tests/native/test_assemble_stores.py",
        ],
    ),
    ("eoc/chat/followup.py", ["tests/test_followups.py", "tests/test_chat.py"]),
    ("eoc/store/partition.py", ["tests/test_partitions.py"]),
    ("eoc/store/parts.py", ["tests/test_assemble.py", "tests/native/test_assemble_stores.py"]),
    ("eoc/files/bounded.py", ["tests/test_boundedio.py", "tests/test_benchrun.py"]),
    (
        "eoc/query.py",
        [
            "tests/test_query.py",
            "tests/test_stages.py",
            "tests/test_cascade.py",
            "tests/test_chat.py",
        ],
    ),
    ("eoc/cli/benchrun.py", ["tests/test_benchrun.py"]),
    (
        "eoc/store/sqlite",
        [
            "tests/test_persist.py",
            "tests/test_persist_damage.py",
            "tests/native/test_store_contract.py",
        ],
    ),
    ("eoc/persist.py", ["tests/test_persist.py", "tests/test_persist_damage.py"]),
    (
        "eoc/store/",
        [
            "tests/native/test_store_contract.py",
            "tests/test_facts.py",
            "tests/test_forget.py",
            "tests/test_persist.py",
            "tests/test_replay.py",
            "tests/test_ttl.py",
            "tests/test_stages.py",
            "tests/test_kv_bounds.py",
        ],
    ),
    ("eoc/text/facts.py", ["tests/test_facts.py", "tests/test_stages.py"]),
    ("eoc/stages/browser_remote.py", ["tests/test_browser_remote.py"]),
    ("eoc/openai/", ["tests/test_browser_remote.py", "tests/native/test_remote.py"]),
    ("eoc/stages/factwords.py", ["tests/test_factwords.py"]),
    (
        "eoc/stages/graph.py",
        [
            "tests/test_factwords.py",
            "tests/test_facts.py",
            "tests/test_stages.py",
            "tests/test_compute.py",
            "tests/test_questions.py",
            "tests/test_knowledge.py",
        ],
    ),
    ("eoc/stages/questions.py", ["tests/test_questions.py"]),
    (
        "eoc/stages/contract.py",
        [
            "tests/test_stage_contract.py",
            "tests/test_origin.py",
            "tests/test_cascade.py",
            "tests/test_cascade_steps.py",
        ],
    ),
    ("eoc/behind.py", ["tests/test_cascade_steps.py"]),
    ("eoc/stages/wrappers.py", ["tests/test_guard_wrappers.py", "tests/test_guard_rewordings.py"]),
    ("eoc/stages/repair.py", ["tests/test_guard_wrappers.py", "tests/test_nearmiss.py"]),
    (
        "eoc/stages/spelling.py",
        [
            "tests/test_guard_rewordings.py",
            "tests/test_guard_rules.py",
            "tests/test_lookalikes.py",
            "tests/test_nearmiss.py",
        ],
    ),
    ("eoc/compute/", ["tests/test_compute.py"]),
    ("native/eoc_native/graph/", ["tests/native/test_oxigraph.py"]),
    ("native/eoc_native/llm/layout_cache.py", ["tests/native/test_layout_cache.py"]),
    ("native/eoc_native/llm/gguf_header.py", ["tests/native/test_gguf_header.py"]),
    ("eoc/stages/page_model.py", ["tests/test_page_model.py"]),
    ("web/src/loops.js", ["tests/web/test_loop_rule.py"]),
    ("mkdocs.yml", ["tests/web/test_docs_offline.py"]),
    ("scripts/site_offline.py", ["tests/web/test_docs_offline.py"]),
    ("web/ggufmacs.py", ["tests/native/test_ggufmacs.py"]),
    (
        "eoc/text/",
        [
            "tests/test_stages.py",
            "tests/test_kv_bounds.py",
            "tests/test_guard_rules.py",
            "tests/test_followups.py",
            "tests/test_nearmiss.py",
        ],
    ),
    ("eoc/stages/guard/wordkeys.py", ["tests/test_wordkeys.py"]),
    (
        "eoc/stages/guard/",
        [
            "tests/test_guard_table.py",
            "tests/test_guard_rules.py",
            "tests/test_guard_rewordings.py",
            "tests/test_guard_wrappers.py",
            "tests/test_decisive.py",
            "tests/test_nearmiss.py",
            "tests/test_lookalikes.py",
            "tests/test_judging.py",
            "tests/test_kv_bounds.py",
            "tests/test_stages.py",
        ],
    ),
    ("eoc/stages/kv_hot.py", ["tests/native/test_store_pgvector.py", "tests/test_kv_hot.py"]),
    ("eoc/stages/kv_words.py", ["tests/test_wordkeys.py", "tests/test_kv_bounds.py"]),
    (
        "eoc/stages/",
        [
            "tests/test_stages.py",
            "tests/test_kv_bounds.py",
            "tests/test_guard_rules.py",
            "tests/test_guard_rewordings.py",
            "tests/test_guard_wrappers.py",
            "tests/test_lookalikes.py",
            "tests/test_nearmiss.py",
            "tests/test_cascade.py",
            "tests/test_persist.py",
        ],
    ),
    ("eoc/cli/", ["tests/test_cli.py", "tests/native/test_receipt_signing.py"]),
    ("web/serve.py", ["tests/web/test_serve.py"]),
    ("native/eoc_native/receipts.py", ["tests/native/test_receipt_signing.py"]),
    (
        "native/eoc_native/autotune/",
        [
            "tests/native/test_autotune.py",
            "tests/native/test_cli_autotune.py",
            "tests/native/test_llm_weights.py",
        ],
    ),
    (
        "native/eoc_native/counters/",
        [
            "tests/native/test_rapl.py",
            "tests/native/test_perf.py",
            "tests/native/test_ioreport_nvml.py",
            "tests/test_detect.py",
        ],
    ),
    (
        "native/eoc_native/semantic/index.py",
        ["tests/native/test_ann_index.py", "tests/native/test_semantic.py"],
    ),
    (
        "native/eoc_native/semantic/minilm.py",
        ["tests/native/test_encoder_i8.py", "tests/native/test_semantic.py"],
    ),
    ("native/eoc_native/semantic/", ["tests/native/test_semantic.py", "tests/test_kv_bounds.py"]),
    (
        "native/eoc_native/llm/tokenizer.py",
        ["tests/native/test_llm_vocab.py", "tests/native/test_llm_tiny.py"],
    ),
    ("native/eoc_native/llm/threads.py", ["tests/native/test_decode_layer.py"]),
    ("native/eoc_native/llm/parts.py", ["tests/native/test_parts.py"]),
    (
        "native/eoc_native/quant/kquants.py",
        ["tests/native/test_kquants.py", "tests/native/test_llm_gguf.py"],
    ),
    (
        "native/eoc_native/llm/",
        [
            "tests/native/test_llm_weights.py",
            "tests/native/test_model_backend.py",
            "tests/native/test_llm_tiny.py",
        ],
    ),
    (
        "native/eoc_native/backends/",
        [
            "tests/native/test_llm_weights.py",
            "tests/native/test_llm_tiny.py",
            "tests/native/test_backends.py",
        ],
    ),
    ("native/eoc_native/quant/encoder", ["tests/native/test_encoder_i8.py"]),
    (
        "native/eoc_native/quant/",
        [
            "tests/native/test_ckernels.py",
            "tests/native/test_decode_layer.py",
            "tests/native/test_llm_weights.py",
            "tests/native/test_llm_tiny.py",
            "tests/native/test_llm_gguf.py",
            "tests/native/test_backends.py",
        ],
    ),
    ("native/eoc_native/memory.py", ["tests/native/test_memory.py"]),
    ("native/eoc_native/remote.py", ["tests/native/test_remote.py"]),
    ("native/eoc_native/keepalive.py", ["tests/native/test_remote.py"]),
    ("eoc/chat/request.py", ["tests/test_chat.py"]),
    ("native/eoc_native/serve/", ["tests/native/test_serve.py"]),
    ("native/eoc_native/store/pgvector.py", ["tests/native/test_store_pgvector.py"]),
    ("native/eoc_native/store/pgvector_fp.py", ["tests/native/test_store_pgvector_fp.py"]),
    ("native/eoc_native/store/pg_forgets.py", ["tests/native/test_store_pg_forgets.py"]),
    (
        "native/eoc_native/store/",
        ["tests/native/test_store_postgres.py", "tests/native/test_store_contract.py"],
    ),
    ("eoc/stages/judging.py", ["tests/test_judging.py"]),
    ("scripts/figures.py", ["tests/test_figures_rendered.py"]),
    ("native/eoc_native/judge/", ["tests/native/test_judge.py"]),
]

BREAKS: list[tuple[str, str, str, str]] = [
    *figures.BREAKS,
    *docfigures.BREAKS,
    *factwords.BREAKS,
    *guard.BREAKS,
    *wordgate.BREAKS,
    *ledger.BREAKS,
    *stages.BREAKS,
    *stores.BREAKS,
    *counters.BREAKS,
    *model.BREAKS,
    *native_data.BREAKS,
    *startup.BREAKS,
    *serve.BREAKS,
    *gateway.BREAKS,
    *memo.BREAKS,
    *page.BREAKS,
    *partition.BREAKS,
    *repeat.BREAKS,
    *tools.BREAKS,
    *userstore.BREAKS,
    *incontext.BREAKS,
    *hostile.BREAKS,
    *gguf_mutations.BREAKS,
    *planted.BREAKS,
    *templates.BREAKS,
    *qwen2.BREAKS,
    *judge.BREAKS,
    *encoder.BREAKS,
]

FOCUS: dict[str, list[str]] = {
    **model.FOCUS,
    **encoder.FOCUS,
    **startup.FOCUS,
    "a first run compiles the kernels without saying so": [
        "tests/native/test_model_cli.py::"
        "test_a_first_run_says_it_compiles_the_kernels_and_a_later_one_does_not"
    ],
    "a step that starts is shown at 0 %": [
        "tests/test_cli.py::test_model_progress_lines_on_a_pipe_and_on_a_terminal"
    ],
    **guard.FOCUS,
    **wordgate.FOCUS,
    **docfigures.FOCUS,
    **serve.FOCUS,
    **gateway.FOCUS,
    **incontext.FOCUS,
    **hostile.FOCUS,
    **gguf_mutations.FOCUS,
    **planted.FOCUS,
    **templates.FOCUS,
    **qwen2.FOCUS,
    **judge.FOCUS,
    **page.FOCUS,
    **partition.FOCUS,
    **repeat.FOCUS,
    "kv and graph answer a question inside a conversation": [
        "tests/test_partitions.py",
        "tests/test_cascade.py",
    ],
    "a replay forgets what this process recorded it cost when made": ["tests/test_made_cost.py"],
    "what a model answer cost is never recorded": ["tests/test_made_cost.py"],
    "no model configured still gets an avoided estimate": ["tests/test_ledger.py"],
    "the avoided header says 0 when there is no figure": ["tests/test_ledger.py"],
    "eoc verify takes avoided work said to be measured": ["tests/test_ledger.py"],
    "eoc verify takes a neural answer that avoided the model": ["tests/test_ledger.py"],
    "eoc query prints 0 for no avoided figure": ["tests/test_cli.py"],
    "a replay ignores the cost recorded with its entry": ["tests/test_made_cost.py"],
    "what a model answer cost is not stored with its entry": [
        "tests/test_made_cost.py",
        "tests/native/test_serve_memo.py",
    ],
    "a per-user store that cannot be opened is an error, not memory": ["tests/test_userstore.py"],
    "a named store that cannot be opened falls back to memory": ["tests/test_userstore.py"],
    "a damaged per-user store is skipped for memory": ["tests/test_userstore.py"],
    "answers kept in memory only are not said to be": ["tests/test_userstore.py"],
    "eoc store forget makes a per-user store": ["tests/test_userstore.py"],
    "the per-user store holds the pack and hides the graph eoc graph load made": [
        "tests/test_userstore.py",
        "tests/native/test_oxigraph.py",
        "tests/native/test_semantic.py",
    ],
    "eoc bench run totals no avoided figure as 0 J": ["tests/test_benchrun.py"],
    "a request's tail is left on a computation": [
        "tests/test_compute.py",
        "tests/test_wordings.py",
    ],
    "an instruction such as add 38 and 47 is not read": [
        "tests/test_compute.py",
        "tests/test_wordings.py",
    ],
    "an ordinal exponent in words is not read": [
        "tests/test_compute.py",
        "tests/test_wordings.py",
    ],
    "the square of a sum is guessed": ["tests/test_compute.py", "tests/test_wordings.py"],
    "a constant is converted into a unit of another dimension": [
        "tests/test_compute.py",
        "tests/test_wordings.py",
    ],
    "a relation the pack lists in part is counted": [
        "tests/test_questions.py",
        "tests/test_wordings.py",
    ],
    "a kind is counted in any place": ["tests/test_questions.py", "tests/test_wordings.py"],
    "a short name that ends several values is read": [
        "tests/test_questions.py",
        "tests/test_wordings.py",
    ],
    "a relation's verb is read in reverse where the relation is not": [
        "tests/test_questions.py",
        "tests/test_wordings.py",
    ],
    "an ordinal in a reverse question is read as a word": [
        "tests/test_questions.py",
        "tests/test_wordings.py",
    ],
    "an answer nothing remembered says it was stored": ["tests/test_origin.py"],
    "a write that meets a stopped database is dropped": ["tests/native/test_store_postgres.py"],
    "held writes are never made": ["tests/native/test_store_postgres.py"],
    "a pending write is reported as stored": ["tests/native/test_store_postgres.py"],
    "the answer does not say whether it was stored": ["tests/native/test_serve.py"],
    "a miss asks the cache twice": ["tests/native/test_serve_once.py"],
    "the quantization layer imports the model runner above it": ["tests/test_layering.py"],
    "the pack's kv pairs are embedded at start": ["tests/native/test_semantic.py"],
    "the pack's kv pairs are embedded at start beside the per-user store": [
        "tests/native/test_semantic.py::"
        "test_an_exact_hit_on_a_first_run_loads_neither_numpy_nor_the_model"
    ],
    "MiniLM leaves rewordings to its cosine": [
        "tests/native/test_semantic.py::test_minilm_leaves_no_rewording_in_other_words_to_its_cosine"
    ],
    "a repetition loop is remembered": ["tests/test_degenerate.py"],
    "a follow-up that points back may be answered by a fact": ["tests/test_followups.py"],
    "a fact is served under any system prompt": ["tests/test_followups.py"],
    "a model's remembered answer is served to another conversation": ["tests/test_followups.py"],
    "a fact longer than max_tokens is served": ["tests/test_followups.py"],
    "stop strings do not keep a fact out": ["tests/test_followups.py"],
    "a broken answer's basis does not say why it is not remembered": ["tests/test_degenerate.py"],
    "a loop of one word is no loop": ["tests/test_degenerate.py"],
    "generation runs on in a repetition loop": [
        "tests/native/test_model_backend.py::"
        "test_the_runner_stops_its_model_in_a_loop_unless_told_not_to"
    ],
    "the loop rule never finds a loop": [
        "tests/native/test_model_backend.py",
        "tests/test_degenerate.py",
        "tests/web/test_loop_rule.py",
    ],
    "a plain question's pieces never reach a streamed answer": ["tests/native/test_serve_once.py"],
    "a store's graph loses the pack's vocabulary": [
        "tests/test_assemble.py",
        "tests/native/test_assemble_stores.py",
    ],
    "a miss asks the model without reserving its worst case": ["tests/native/test_budget.py"],
    "a reservation ignores what is held": ["tests/native/test_budget.py"],
    "the worst case counts no generated tokens": ["tests/native/test_budget.py"],
    "a request body's duplicate keys are merged": ["tests/native/test_serve.py"],
    "the local model drops message names": ["tests/native/test_serve.py"],
    "request headers have no deadline": ["tests/native/test_serve_abuse.py"],
    "open connections are not capped": ["tests/native/test_serve_abuse.py"],
    "a full server refuses instead of shedding a slow client": ["tests/native/test_serve_abuse.py"],
    "one connection is kept alive without bound": ["tests/native/test_serve_abuse.py"],
    "any Host header is accepted": ["tests/native/test_serve_abuse.py"],
    "eoc serve runs without the connection guards": ["tests/native/test_serve_abuse.py"],
    "a remembered answer another model made is served": ["tests/test_origin.py"],
    "a model's answer is cached under the question alone": ["tests/test_origin.py"],
    "a memo stage that cannot record origins gets model answers": ["tests/test_origin.py"],
    "a local model's origin ignores max_tokens": ["tests/native/test_model_backend.py"],
    "the breaker hides the model's origin": ["tests/native/test_model_backend.py"],
    "a migrated SQLite row gets no origin": ["tests/test_origin.py"],
    "eoc store reads an old row as no model's": ["tests/test_origin.py"],
    "a migrated PostgreSQL row is served as no model's": ["tests/native/test_store_postgres.py"],
    "an unverified counter shows as hardware": ["tests/native/test_rapl.py"],
    "the exact-words guard matches a computation": [
        "tests/test_kv_bounds.py",
        "tests/test_stages.py",
    ],
    "the fingerprint ignores operators": ["tests/test_kv_bounds.py"],
    "an empty trusted key list switches checking off": ["tests/native/test_receipt_signing.py"],
    "a question with two readings and two answers is served": [
        "tests/test_questions.py::test_two_readings_with_two_answers_pass_on"
    ],
    "things of several kinds served as one answer": ["tests/test_questions.py"],
    "the kind a reverse question asks for is ignored": ["tests/test_questions.py"],
    "answers in the store's order": ["tests/test_questions.py"],
    "guard ignores numbers": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard ignores answer-type words": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard ignores content coverage": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard ignores negation": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard ignores opposites": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard ignores ranks": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard ignores the sides of a transfer": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard allows words that narrow a noun": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard allows different actions": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard allows an action said by one side only": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard refuses a self-correction's taken-back words": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "guard keeps possessive endings": ["tests/test_guard_rules.py::test_a_rewording_is_allowed"],
    "guard ignores synonyms": ["tests/test_guard_rules.py::test_a_rewording_is_allowed"],
    "guard checks name order across a possessive": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "guard counts rewording words": ["tests/test_guard_rules.py::test_a_rewording_is_allowed"],
    "guard drops naming words wherever they stand": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard keeps naming words next to what they name": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "guard keeps framing verbs that open a text": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "guard counts a leading statement's words as scope": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "guard ignores everything past a leading statement": [
        "tests/test_guard_rules.py::test_a_pair_that_asks_something_else_is_refused_with_its_reason"
    ],
    "guard reads apostrophes inside words as quotes": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "guard checks name order across an of": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "guard reads I'm as a name": ["tests/test_guard_rules.py::test_a_rewording_is_allowed"],
    "guard reads question words before synonyms": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "hashed embedder reads the raw words": [
        "tests/test_stages.py::test_the_hashed_embedder_reads_a_text_as_the_guard_does"
    ],
    "guard stems plurals in -ies to -ie": [
        "tests/test_guard_rules.py::test_a_rewording_is_allowed"
    ],
    "kv explain hides the guard's reason": [
        "tests/test_guard_rules.py::test_kv_explain_lists_the_nearest_stored_questions_with_each_reason"
    ],
    "kv term check uncapped": [
        "tests/test_kv_bounds.py::test_the_term_check_reads_at_most_max_term_checks_stored_prompts"
    ],
    "kv term check off: every miss embedded": [
        "tests/test_kv_bounds.py::test_a_question_no_stored_prompt_could_pass_for_is_a_miss_without_an_embedding"
    ],
    "kv term check ignores stored prompts without terms": [
        "tests/test_kv_bounds.py::test_a_stored_prompt_without_terms_makes_every_lookup_embed"
    ],
    "kv term check refuses every stored prompt": [
        "tests/test_kv_bounds.py::test_the_term_check_never_loses_a_hit_the_guard_would_serve"
    ],
    "SentencePiece merges ranked against their scores": [
        "tests/native/test_llm_vocab.py::test_the_tokenizer_gives_the_reference_ids[llama-spm]"
    ],
    "Llama 3 pre-tokens merged when whole in the vocabulary": [
        "tests/native/test_llm_vocab.py::test_the_tokenizer_gives_the_reference_ids[llama-bpe]"
    ],
    "4-bit kernel drops the high nibble": [
        "tests/native/test_llm_weights.py::test_the_kernels_multiply_by_the_dequantized_matrix"
    ],
    "8-bit kernel forgets the block scale": [
        "tests/native/test_llm_weights.py::test_the_kernels_multiply_by_the_dequantized_matrix"
    ],
    "a local model's estimate stands in for a measured span": [
        "tests/native/test_model_backend.py::test_with_a_live_counter_the_generation_is_measured"
    ],
    "a miss answered while the store is down": [
        "tests/native/test_serve.py::test_while_the_store_is_down_a_miss_is_refused_and_hits_are_served"
    ],
    "a request for another model answered by this one": [
        "tests/native/test_serve.py::test_bad_requests_get_typed_json_errors"
    ],
    "a spent joule budget lets requests through": [
        "tests/native/test_serve.py::test_a_spent_joule_budget_refuses_with_429_and_says_what_it_counted"
    ],
    "a stream stopped early keeps its connection": [
        "tests/native/test_remote.py::test_an_error_body_read_in_part_never_poisons_the_next_request"
    ],
    "an error body read in part leaves its connection in the pool": [
        "tests/native/test_remote.py::test_an_error_body_read_in_part_never_poisons_the_next_request"
    ],
    "an open breaker asks the backend anyway": [
        "tests/native/test_serve.py::test_the_breaker_fails_fast_while_cheap_stages_keep_answering"
    ],
    "any API key admitted": [
        "tests/native/test_serve.py::test_api_keys_are_stored_hashed_and_required"
    ],
    "backend reply not validated": [
        "tests/test_cascade.py::test_a_backend_reply_that_is_not_clean_text_is_a_backend_error_and_nothing_is_kept"
    ],
    "browser accepts a live counter": [
        "tests/test_browser_honesty.py::test_a_live_fake_counter_is_refused_with_a_clear_error"
    ],
    "cache estimate ignores bytes hashed": [
        "tests/test_cascade.py::test_estimates_scale_with_the_work_done"
    ],
    "calibration ignores budget": [
        "tests/test_cascade.py::test_calibration_stops_after_the_time_budget"
    ],
    "connections never kept alive": [
        "tests/native/test_remote.py::test_connections_are_kept_alive_and_replaced_when_the_server_closed_them"
    ],
    "dense exact index hands accept every candidate": [
        "tests/test_kv_bounds.py::test_the_dense_exact_index_hands_accept_at_most_max_scored_candidates"
    ],
    "dispatcher does not count a model's matmuls": [
        "tests/native/test_llm_weights.py::test_a_weight_is_prepared_once_per_backend"
    ],
    "dispatcher prepares a weight on every call": [
        "tests/native/test_llm_weights.py::test_a_weight_is_prepared_once_per_backend"
    ],
    "embedding cache keeps non-finite vectors": [
        "tests/native/test_semantic.py::test_an_embedding_cache_that_is_not_sane_is_ignored_never_read_whole"
    ],
    "embedding cache unpacks a zip bomb": [
        "tests/native/test_semantic.py::test_an_embedding_cache_that_is_not_sane_is_ignored_never_read_whole"
    ],
    "entities: leading newline not a sentence start": [
        "tests/test_kv_bounds.py::test_entities_match_the_reference_on_text_with_sentence_breaks"
    ],
    "entity fingerprint ignores self-corrections": [
        "tests/test_kv_bounds.py::test_texts_with_different_fingerprints_are_never_allowed"
    ],
    "fused decode attention reads the wrong key/value head": [
        "tests/native/test_llm_tiny.py::test_kv_cache_matches_full_recompute"
    ],
    "fused decode attention skips the newest key": [
        "tests/native/test_llm_tiny.py::test_kv_cache_matches_full_recompute"
    ],
    "index ignores the prefilter": [
        "tests/test_kv_bounds.py::test_prefilter_refusals_never_reach_accept_and_are_not_served"
    ],
    "index scores every candidate": [
        "tests/test_kv_bounds.py::test_at_most_max_scored_candidates_reach_accept"
    ],
    "index walks a feature past the posting cap": [
        "tests/test_kv_bounds.py::test_a_feature_held_by_more_than_max_posting_vectors_finds_no_candidates"
    ],
    "kept-alive connection closed by the server not replaced": [
        "tests/native/test_remote.py::test_connections_are_kept_alive_and_replaced_when_the_server_closed_them"
    ],
    "kv accept skips the fingerprint check": [
        "tests/test_kv_bounds.py::test_without_an_index_prefilter_fingerprint_mismatches_still_skip_the_guard"
    ],
    "kv answers carry no work estimate": [
        "tests/test_kv_bounds.py::test_an_exact_hit_costs_the_estimate_for_its_bytes_and_no_candidates"
    ],
    "kv entries stored without put not fingerprinted": [
        "tests/test_kv_bounds.py::test_an_entry_stored_without_put_is_fingerprinted_and_served"
    ],
    "kv entries stored without put not indexed by terms": [
        "tests/test_kv_bounds.py::test_an_entry_stored_without_put_is_fingerprinted_and_served"
    ],
    "kv flat figure ignored": [
        "tests/test_kv_bounds.py::test_a_flat_figure_leaves_kv_answers_without_a_cost_of_their_own"
    ],
    "kv guard checks uncapped": [
        "tests/test_kv_bounds.py::test_a_lookup_runs_the_guard_at_most_max_guard_checks_times"
    ],
    "kv has no fingerprint prefilter": [
        "tests/test_kv_bounds.py::test_a_miss_that_differs_only_by_a_number_never_runs_the_guard"
    ],
    "kv similarity hit charged as no candidates": [
        "tests/test_kv_bounds.py::test_a_similarity_hit_costs_more_than_an_exact_hit_of_the_same_size"
    ],
    "misspelt trusted key accepted": [
        "tests/native/test_autotune.py::test_a_stripped_signature_is_refused_by_a_trusted_key"
    ],
    "neural estimate ignores tokens out": [
        "tests/test_cascade.py::test_estimates_scale_with_the_work_done"
    ],
    "one-token RMSNorm forgets the mean": [
        "tests/native/test_llm_tiny.py::test_kv_cache_matches_full_recompute"
    ],
    "one-token SwiGLU multiplies by the gate, not up": [
        "tests/native/test_llm_tiny.py::test_kv_cache_matches_full_recompute"
    ],
    "prefetch started twice": [
        "tests/native/test_semantic.py::test_a_prefetched_embedding_is_computed_once_off_the_callers_thread"
    ],
    "prefetched embedding not used": [
        "tests/native/test_semantic.py::test_a_prefetched_embedding_is_computed_once_off_the_callers_thread"
    ],
    "remote errors leak the API key": [
        "tests/native/test_remote.py::test_the_api_key_never_appears_in_an_error"
    ],
    "remote reply read without a bound": [
        "tests/native/test_remote.py::test_an_oversized_or_endless_body_is_refused"
    ],
    "serve NUL not refused": ["tests/web/test_serve.py::test_an_encoded_nul_is_a_400_with_a_body"],
    "serve drops the connection on a bad path": [
        "tests/web/test_serve.py::test_a_path_no_file_can_have_is_a_404_not_a_dropped_connection"
    ],
    "serve index symlink out followed": [
        "tests/web/test_serve.py::test_a_symlink_out_of_the_folder_is_not_followed"
    ],
    "short tensor bytes accepted": [
        "tests/native/test_llm_weights.py::test_damaged_blocks_are_refused"
    ],
    "telemetry handed to the cascade": [
        "tests/native/test_ioreport_nvml.py::test_a_live_gpu_counter_is_telemetry_only_and_never_the_cascade_meter"
    ],
    **memo.FOCUS,
    **stores.FOCUS,
}
