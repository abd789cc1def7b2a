"""A numpy runner for Llama-family GGUF models (the ``llm`` part of the native extra).

One module per concern: :mod:`native.llm.gguf` reads and dequantizes the file,
:mod:`native.llm.tokenizer` builds its tokenizer and chat template, :mod:`native.llm.llama` is
the model, :mod:`native.llm.generate` the prefill/decode loop. Needs ``gguf``, ``tokenizers``
and ``jinja2`` besides numpy; a missing one raises :class:`eoc.errors.MissingExtra`.
"""
