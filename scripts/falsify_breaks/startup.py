"""Falsify breaks: what a process skips on its way to a first answer (issue 26), each with the
test that catches it (``FOCUS``)."""

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a MiniLM tensor's bytes are not checked against its shape",
        "native/eoc_native/semantic/minilm.py",
        "        if not 0 <= lo <= hi or hi - lo != count * width:",
        "        if not 0 <= lo <= hi:",
    ),
    (
        "the gguf package is imported for a type eoc's table holds",
        "native/eoc_native/llm/gguf.py",
        "    fmt = BY_CODE.get(code)",
        "    fmt = None",
    ),
    (
        "plain float tensors are widened by the gguf package",
        "native/eoc_native/quant/formats.py",
        '    if type_name in ("F32", "F16"):',
        "    if False:",
    ),
    (
        "the question patterns are compiled for every question",
        "eoc/stages/questions.py",
        "        if not said and not self._fits_template(text):\n",
        "        if False:\n",
    ),
    (
        "the graph gate leaves out the relations' verbs",
        "eoc/stages/questions.py",
        "(*self._by_label, *self._by_adjective, *verbs, *_COUNT_WORDS)",
        "(*self._by_label, *self._by_adjective, *_COUNT_WORDS)",
    ),
    (
        "the graph gate leaves out the count words",
        "eoc/stages/questions.py",
        "(*self._by_label, *self._by_adjective, *verbs, *_COUNT_WORDS)",
        "(*self._by_label, *self._by_adjective, *verbs)",
    ),
    (
        "the graph gate leaves out the templates",
        "eoc/stages/questions.py",
        "            text.endswith(tail) and text.startswith(heads)\n",
        "            False\n",
    ),
    (
        "the graph gate reads a template by its opening alone",
        "eoc/stages/questions.py",
        "            text.endswith(tail) and text.startswith(heads)\n",
        "            text.startswith(heads)\n",
    ),
    (
        "the graph gate's scan misses a word at the text's end",
        "eoc/stages/questions.py",
        '        padded = f" {text} "\n        return {',
        '        padded = f" {text}"\n        return {',
    ),
    (
        "the pack graph is indexed for a question no pattern reads",
        "eoc/knowledge/__init__.py",
        "        if not self._loaded:\n            return list(_pack_predicates())",
        "        if False:\n            return list(_pack_predicates())",
    ),
    (
        "large arrays take numpy's huge-page advice",
        "native/eoc_native/memory.py",
        "    buf = mmap.mmap(-1, count * kind.itemsize, flags=mmap.MAP_PRIVATE)  # -1: anonymous\n"
        "    return np.frombuffer(buf, kind, count).reshape(dims)",
        "    return np.zeros(dims, kind)",
    ),
    (
        "the KV cache is numpy's memory",
        "native/eoc_native/llm/llama.py",
        "        self.cache_k = zeroed(cache, np.float32)",
        "        self.cache_k = np.zeros(cache, np.float32)",
    ),
    (
        "the tiled weights are numpy's memory",
        "native/eoc_native/quant/blocks.py",
        "    raw: npt.NDArray[Any], type_name: str, n_out: int, n_in: int, *, alloc: Alloc = zeroed",
        "    raw: npt.NDArray[Any], type_name: str, n_out: int, n_in: int, *, alloc: Alloc = np.zeros",
    ),
    (
        "the entry-point scan keeps a second copy of a distribution",
        "eoc/plugins.py",
        "            if name in seen:\n                continue",
        "            if False:\n                continue",
    ),
    (
        "the entry-point scan reads past a zip on the path",
        "eoc/plugins.py",
        "        if not isinstance(root, str) or os.path.isfile(root):\n            return None",
        "        if not isinstance(root, str):\n            return None",
    ),
    (
        "the entry-point scan leaves egg-info folders out",
        "eoc/plugins.py",
        '            if ext in (".dist-info", ".egg-info"):',
        '            if ext == ".dist-info":',
    ),
    (
        "the entry-point scan ignores a finder of its own",
        "eoc/plugins.py",
        '        and getattr(finder, "__name__", "") != "PathFinder"',
        "        and False",
    ),
    (
        "a quick exit skips the exit handlers",
        "eoc/cli/main.py",
        "        atexit._run_exitfuncs()  # what a usual exit runs before it tears the objects down",
        "        pass",
    ),
    (
        "a quick exit cuts a working thread off",
        "eoc/cli/main.py",
        "    if any(t is not main_thread and not t.daemon for t in threading.enumerate()):",
        "    if False:",
    ),
    (
        "a quick exit drops what a pipe holds",
        "eoc/cli/main.py",
        "        sys.stdout.flush()  # a pipe's buffer, which the teardown would have written",
        "        pass",
    ),
    (
        "a layout file given up midway keeps the offsets of its arrays",
        "native/eoc_native/llm/layout_cache.py",
        "            self._placed.clear()",
        "            pass",
    ),
    (
        "a refused model file leaves the kernel build half made",
        "native/eoc_native/llm/generate.py",
        "            build.join()  # a compile is never left half done, even for a file refused",
        "            pass",
    ),
]

_QUICK = "tests/test_quick_exit.py::"
_PLUGINS = "tests/native/test_plugins.py::"
_MEMORY = "tests/native/test_memory.py::"
_SEMANTIC = "tests/native/test_semantic.py::"
_GGUF = "tests/native/test_llm_gguf.py::"
_GATE = "tests/test_questions.py::test_the_matcher_passes_over_only_what_no_pattern_reads"
_PLAIN = "tests/test_questions.py::test_the_gate_says_what_its_plain_definition_says"
_PACK = (
    "tests/test_knowledge.py::"
    "test_a_question_no_pattern_reads_passes_the_pack_graph_without_reading_it"
)
_LAYOUT = "tests/native/test_layout_cache.py::"
FOCUS: dict[str, list[str]] = {
    "a quick exit skips the exit handlers": [
        _QUICK + "test_the_answer_the_exit_handlers_and_the_code_all_come_through"
    ],
    "a quick exit cuts a working thread off": [
        _QUICK + "test_a_thread_still_working_is_waited_for"
    ],
    "a quick exit drops what a pipe holds": [
        _QUICK + "test_the_answer_the_exit_handlers_and_the_code_all_come_through"
    ],
    # the layout cache's breaks (model.py), each the test that catches it
    "a damaged layout file stops the model loading": [
        _LAYOUT + "test_a_damaged_file_is_tiled_again_and_written_again"
    ],
    "a damaged layout index stops the model loading": [
        _LAYOUT + "test_a_damaged_file_is_tiled_again_and_written_again"
    ],
    "a layout array whose bytes do not check is taken": [
        _LAYOUT + "test_a_damaged_file_is_tiled_again_and_written_again[bytes]"
    ],
    "a load maps nothing from the layout file": [
        _LAYOUT + "test_a_second_load_maps_the_kept_layout_and_says_the_same"
    ],
    "the layout cache ignores a changed model file": [
        _LAYOUT + "test_a_changed_model_file_gets_another_file"
    ],
    "a layout cache that cannot be written stops the model loading": [
        _LAYOUT + "test_a_cache_that_cannot_be_written_only_costs_time"
    ],
    "a layout cache of float32 scales is read": [
        _LAYOUT + "test_scales_of_another_type_are_not_read"
    ],
    "a disk that refuses the layout file stops the model loading": [
        _LAYOUT + "test_a_disk_that_refuses_the_file_leaves_the_arrays_in_memory"
    ],
    "a layout file given up midway keeps the offsets of its arrays": [
        _LAYOUT + "test_a_file_given_up_midway_is_written_whole_by_the_save"
    ],
    "a refused model file leaves the kernel build half made": [
        "tests/native/test_ckernels.py::"
        "test_a_first_load_compiles_while_it_reads_and_finishes_even_for_a_refused_file"
    ],
    "a failed load leaves its part file": [_LAYOUT + "test_a_load_that_fails_leaves_no_part_file"],
    "the first load tiles into memory and copies": [
        _LAYOUT + "test_a_first_load_tiles_into_the_file_it_writes"
    ],
    "the entry-point scan keeps a second copy of a distribution": [
        _PLUGINS + "test_the_fast_scan_reads_what_importlib_metadata_reads"
    ],
    "the entry-point scan reads past a zip on the path": [
        _PLUGINS + "test_what_the_fast_scan_cannot_read_goes_to_importlib_metadata"
    ],
    "the entry-point scan leaves egg-info folders out": [
        _PLUGINS + "test_the_fast_scan_reads_what_importlib_metadata_reads"
    ],
    "the entry-point scan ignores a finder of its own": [
        _PLUGINS + "test_a_finder_of_its_own_on_meta_path_sends_the_scan_to_importlib_metadata"
    ],
    "large arrays take numpy's huge-page advice": ["tests/native/test_memory.py"],
    "the KV cache is numpy's memory": [
        _MEMORY + "test_the_kv_cache_and_the_tiled_weights_are_on_plain_pages"
    ],
    "the tiled weights are numpy's memory": [
        _MEMORY + "test_the_kv_cache_and_the_tiled_weights_are_on_plain_pages"
    ],
    "a MiniLM tensor's bytes are not checked against its shape": [
        _SEMANTIC + "test_a_header_that_misstates_a_tensor_s_bytes_is_an_input_error"
    ],
    "the gguf package is imported for a type eoc's table holds": [
        _GGUF + "test_reading_the_table_s_types_leaves_the_gguf_package_unimported"
    ],
    "plain float tensors are widened by the gguf package": [
        _GGUF + "test_reading_the_table_s_types_leaves_the_gguf_package_unimported"
    ],
    "the question patterns are compiled for every question": [_PACK],
    "the graph gate leaves out the relations' verbs": [_GATE],
    "the graph gate leaves out the count words": [_GATE],
    "the graph gate leaves out the templates": [_GATE],
    "the graph gate reads a template by its opening alone": [_PLAIN],
    "the graph gate's scan misses a word at the text's end": [_GATE, _PLAIN],
    "the pack graph is indexed for a question no pattern reads": [_PACK],
    "damaged MiniLM weights are no input error": [
        _SEMANTIC + "test_damaged_weights_are_an_input_error_naming_the_fix",
        _SEMANTIC
        + "test_weights_damaged_after_the_check_are_an_input_error_at_the_first_embedding",
        _SEMANTIC + "test_a_header_that_misstates_a_tensor_s_bytes_is_an_input_error",
    ],
}
