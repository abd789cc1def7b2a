"""The OpenAI wire format as eoc reads it: what a server's reply says (:mod:`eoc.openai.replies`)."""
