"""Text helpers every floor above reads: the folded and normalised forms of a question
(:mod:`eoc.text.forms`). Standard library only; nothing here imports the stages or the stores."""
