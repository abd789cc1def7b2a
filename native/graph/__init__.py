"""Graph stores beyond the core's in-memory one: Oxigraph on disk (:mod:`native.graph.oxigraph`)."""
