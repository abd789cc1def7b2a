"""A numpy runner for Llama-family GGUF models (the ``llm`` part of the native extra).

One module per concern: :mod:`eoc_native.llm.locate` finds the model file,
:mod:`eoc_native.llm.gguf` reads it (the tensor types and their blocks are
:mod:`eoc_native.quant`'s), :mod:`eoc_native.llm.weights` keeps each layer's matrix as stored,
:mod:`eoc_native.llm.tokenizer` builds its tokenizer and chat template, :mod:`eoc_native.llm.llama`
is the model, :mod:`eoc_native.llm.generate` the prefill/decode loop. Needs ``gguf``, ``tokenizers``
and ``jinja2`` besides numpy; a missing one raises :class:`eoc.errors.MissingExtra`.
"""
