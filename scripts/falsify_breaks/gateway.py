"""Falsify breaks: eoc serve as a gateway (issue 37): forwarded requests and their caching
rules (eoc/chat.py, the OpenAI backend), the native embeddings, the access log, aliases."""

_FWD = "tests/test_chat_forward.py::"
_REMOTE = "tests/native/test_remote.py::"
_SERVE = "tests/native/test_serve.py::"

BREAKS: list[tuple[str, str, str, str]] = [
    (
        "a forwarded request's key leaves out its tools",
        "eoc/chat/request.py",
        '    return _canonical_json({k: v for k, v in doc.items() if k != "user"})',
        '    return _canonical_json({k: v for k, v in doc.items() if k not in ("user", "tools")})',
    ),
    (
        "a forwarded request's key leaves out its response format",
        "eoc/chat/request.py",
        '    return _canonical_json({k: v for k, v in doc.items() if k != "user"})',
        '    return _canonical_json({k: v for k, v in doc.items() if k not in ("user", "response_format")})',
    ),
    (
        "a forwarded request is in a kv partition",
        "eoc/chat/request.py",
        "            or self.forward is not None\n        ):\n            return None",
        "        ):\n            return None",
    ),
    (
        "a fact may answer a forwarded request",
        "eoc/chat/request.py",
        "            return False  # the reply must be a tool call, JSON or what the upstream makes",
        "            pass",
    ),
    (
        "a forwarded request keyed as a plain question",
        "eoc/chat/request.py",
        '            self.forward is None\n            and self.kind == "chat"',
        '            self.kind == "chat"',
    ),
    (
        "a forwarded request without a temperature is taken as greedy",
        "eoc/chat/request.py",
        '    temperature = _number(doc, "temperature", 0.0 if kind == "embedding" else 1.0)',
        '    temperature = _number(doc, "temperature", 0.0)',
    ),
    (
        "without an upstream, tools and JSON mode are dropped, not refused",
        "eoc/chat/request.py",
        '    if feature:\n        raise BadRequest(\n            f"a request with {feature}',
        '    if False:\n        raise BadRequest(\n            f"a request with {feature}',
    ),
    (
        "a forwarded reply is judged for loops by its whole body",
        "eoc/stages/neural.py",
        "            wrote = reply.content if reply.content is not None else reply.text",
        "            wrote = reply.text",
    ),
    (
        "the upstream's refusal of a forwarded request is eoc's failure",
        "native/eoc_native/remote.py",
        "            if relay and status in (400, 413, 422):",
        "            if False:",
    ),
    (
        "an alias is sent upstream as the served model",
        "native/eoc_native/remote.py",
        "        return self.aliases.get(request.model, self.model)",
        "        return self.model",
    ),
    (
        "a forwarded stream is not relayed as it comes",
        "native/eoc_native/remote.py",
        "                        if on_piece is not None:",
        "                        if False:",
    ),
    (
        "a forwarded stream cut short is a reply",
        "native/eoc_native/remote.py",
        '        if not (done or finished):\n            raise self._fail("the stream ended before the reply did',
        '        if False:\n            raise self._fail("the stream ended before the reply did',
    ),
    (
        "embeddings of another size than MiniLM's are promised",
        "native/eoc_native/serve/embeddings.py",
        "        if dims is not None and (isinstance(dims, bool) or dims != 384):",
        "        if False:",
    ),
    (
        "a native embedding is never remembered",
        "native/eoc_native/serve/embeddings.py",
        '            finish_reason="stop",\n        )',
        '            finish_reason="stop",\n            memoize=False,\n        )',
    ),
    (
        "a request's access-log line is never written",
        "native/eoc_native/serve/app.py",
        "            self._access.end(line)  # type: ignore[union-attr]",
        "            pass",
    ),
    (
        "a newline in a path breaks the access log's line",
        "native/eoc_native/serve/access.py",
        "        if not path.isprintable() or '\"' in path:",
        "        if False:",
    ),
    (
        "model aliases are not listed",
        "native/eoc_native/serve/app.py",
        "                    for name in (config.model_id, *config.aliases)",
        "                    for name in (config.model_id,)",
    ),
]

FOCUS: dict[str, list[str]] = {
    "a forwarded request's key leaves out its tools": [
        _FWD + "test_the_tools_the_schema_and_every_parameter_are_part_of_the_key"
    ],
    "a forwarded request's key leaves out its response format": [
        _FWD + "test_the_tools_the_schema_and_every_parameter_are_part_of_the_key"
    ],
    "a forwarded request is in a kv partition": [
        _FWD + "test_with_an_upstream_each_feature_is_forwarded_as_sent"
    ],
    "a fact may answer a forwarded request": [
        _FWD + "test_kv_and_graph_never_answer_a_forwarded_request_nor_a_plain_answer"
    ],
    "a forwarded request keyed as a plain question": [
        _FWD + "test_a_forwarded_key_is_never_a_plain_questions"
    ],
    "a forwarded request without a temperature is taken as greedy": [
        _FWD + "test_only_a_repeatable_forwarded_request_is_remembered"
    ],
    "without an upstream, tools and JSON mode are dropped, not refused": [
        _FWD + "test_without_an_upstream_each_feature_is_refused_naming_the_way"
    ],
    "a forwarded reply is judged for loops by its whole body": [
        _FWD + "test_a_forwarded_reply_is_judged_for_loops_by_what_the_model_wrote"
    ],
    "the upstream's refusal of a forwarded request is eoc's failure": [
        _REMOTE + "test_what_the_upstream_refuses_is_the_clients_to_hear"
    ],
    "an alias is sent upstream as the served model": [
        _REMOTE + "test_a_forwarded_request_goes_as_sent_and_its_reply_comes_back_whole"
    ],
    "a forwarded stream is not relayed as it comes": [
        _REMOTE + "test_a_forwarded_stream_is_relayed_as_it_comes"
    ],
    "a forwarded stream cut short is a reply": [
        _REMOTE + "test_a_forwarded_stream_is_relayed_as_it_comes"
    ],
    "embeddings of another size than MiniLM's are promised": [
        _SERVE + "test_native_embeddings_in_openais_shape_remembered_with_receipts"
    ],
    "a native embedding is never remembered": [
        _SERVE + "test_native_embeddings_in_openais_shape_remembered_with_receipts"
    ],
    "a request's access-log line is never written": [
        _SERVE + "test_each_request_gets_one_access_log_line"
    ],
    "a newline in a path breaks the access log's line": [
        _SERVE + "test_each_request_gets_one_access_log_line"
    ],
    "model aliases are not listed": [_SERVE + "test_model_aliases_are_listed_and_taken"],
}
