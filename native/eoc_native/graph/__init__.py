"""Graph stores beyond the core's in-memory one: Oxigraph on disk (:mod:`eoc_native.graph.oxigraph`)."""
