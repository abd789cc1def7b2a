"""A numpy runner for Llama-family GGUF models (the ``llm`` part of the native extra).

One module per concern: :mod:`eoc_native.llm.gguf` reads and dequantizes the file,
:mod:`eoc_native.llm.tokenizer` builds its tokenizer and chat template, :mod:`eoc_native.llm.llama` is
the model, :mod:`eoc_native.llm.generate` the prefill/decode loop. Needs ``gguf``, ``tokenizers``
and ``jinja2`` besides numpy; a missing one raises :class:`eoc.errors.MissingExtra`.
"""
