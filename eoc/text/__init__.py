"""Text helpers every floor above reads: the folded and normalised forms of a question
(:mod:`eoc.text.forms`) and the fact file readers (:mod:`eoc.text.facts`). Nothing here imports
the stages or the stores."""
