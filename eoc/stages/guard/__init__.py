"""Hit guards: before a similarity hit is served, the query and the stored prompt must agree on
what cosine similarity cannot see.

Similarity alone is unsafe for a cache: "convert 10 miles to km" and "convert 10 km to miles"
score 0.99 on MiniLM, "capital of France" and "capital of Germany" 0.97 on a static model.

* :class:`ExactWordsGuard` (strict): the content words and numbers must be the same, in the
  same order; only wording differences (stopwords, case, punctuation, plurals) pass.
* :class:`EntityGuard` (the default, with either embedder) compares what decides the answer
  and lets what only rewords differ. It refuses, saying why (:meth:`EntityGuard.refusal`):
  numbers that differ; named entities (a capitalized word not opening the sentence, an acronym,
  a quoted phrase) missing from either side or in another order (unless a possessive or "of" moved
  them); question words that fix the kind of answer and differ (when both have some); a
  negation on one side only; opposite poles of an axis ("turn on" / "disable", "within" /
  "after", "largest" / "smallest") or different actions; ranks that differ ("second largest");
  the sides of a transfer ("from savings to current") that differ or swap; the time asked about
  (``data/when.tsv``; a time or a name one side adds and the other leaves out is refused as
  :class:`Wording`, which a judge of meaning may decide); and, when the two are one question
  frame (:class:`Frame`), any content word one side has and the other lacks (a word that
  narrows a noun: "gift" / "gift card"), unless the query is the stored question in fewer words
  (:meth:`Frame.fewer`: "overdraft cost?" / "How much does an arranged overdraft cost?"). A
  rewording in other words is refused by default; ``rewordings=True`` leaves it to similarity
  if the two share enough content words (opt-in: on Disfl-QA it served topic-sharing questions
  about the same paragraph, 8.1 % of hits wrong with MiniLM); greetings, slips of the keys,
  clipped words and acronyms are read as what they stand for (:mod:`eoc.stages.spelling`).
  Politeness, framing, filler and pronouns ("please", "I'd like to", "could you name") may
  differ; so may a word that names the kind of thing next to what it names ("the capital city",
  "the element Iron"; alone, as in "delete a table", it is what is asked). Synonyms and set
  phrases are compared as one word ("reserve" is "book", "how many people live in" is
  population), question words are read after them ("where do I go to" asks how), and a
  possessive ending is dropped ("Algeria's capital"). A statement the query opens with ("I forgot
  my password, how do I ...") is context: its words may be ones the stored question lacks. A
  query that corrects itself ("no sorry", "I mean", a bare "no" that does not follow "there is"
  or "I have") may carry words and numbers it took back, but not add a denial in what it says
  last, nor ask there with other question words than the stored question's ("when did, no
  sorry, how do I renew" asks how). A relation's technical names in the knowledge pack ("ISO 3166 code", "proton number")
  are one word, with the noun for the kind it is about allowed inside ("alpha-2 country code");
  "no." before "of" or a number is number. The word lists are data,
  next to this module: ``data/polarity.tsv`` (the axes), ``data/synonyms.tsv`` and
  ``data/rewording.tsv``.

Both are pure Python and work with any embedder. Besides ``allows``, a guard may offer

* ``fingerprint(text)``: a hashable value, or ``None`` for "no constraint", such that two texts
  whose fingerprints are both set and differ can never pass ``allows``. The kv stage keeps each
  stored prompt's fingerprint and skips mismatches without calling ``allows`` (a dict lookup
  instead of a text analysis), which is what keeps a store of prompts that differ only by a
  number cheap to miss in. A query whose fingerprint no stored prompt shares (and no stored
  prompt is unconstrained) is a miss before it is embedded: "what is 17*23" never loads an
  embedding model.
* ``refuses_every(text)``: true when ``allows(text, stored)`` is false for every ``stored``
  (the default guard: a computation, which is computed, never answered by similarity); the kv
  stage then misses without embedding the query.
* ``prepare(text)``: an analysis of ``text`` that ``allows`` takes in place of the text, so the
  kv stage analyses a query once per lookup and a stored prompt once, not once per check.
* ``terms(text)``: a set of hashable terms such that ``allows(query, stored)`` holds only if
  ``terms(stored) <= terms(query)``. The kv stage indexes each stored prompt by its terms and,
  when no stored prompt's terms are all in the query's, knows before embedding the query that
  the guard would refuse every candidate: a new question is a miss without an embedding
  (which, with a neural embedder, is most of what a miss costs).
* ``stored_keys(text)`` and ``asked_keys(text)``: keys of a stored question's words, and for
  each word a query asks the keys a stored question must share one of for ``allows`` to hold
  (``None``: no such constraint). The kv stage's word gate (:mod:`eoc.stages.kv_words`) indexes
  the first and, where no judge of meaning may serve a rewording, misses before embedding a query
  none of its stored questions meets (the entity guard's keys:
  :mod:`~eoc.stages.guard.wordkeys`).

The package, one module per kind of thing (``docs/layout.md`` draws it):

* :mod:`~eoc.stages.guard.rules`: the one table of rules, in the order asked, and the loop
  that asks them; the rules themselves in :mod:`~eoc.stages.guard.decisive` (what always
  decides), :mod:`~eoc.stages.guard.roles` (who does what to whom) and
  :mod:`~eoc.stages.guard.wording` (what the question frame tells);
* :mod:`~eoc.stages.guard.analysis` (what is read from one text, once),
  :mod:`~eoc.stages.guard.frame` (how two texts differ in their content words),
  :mod:`~eoc.stages.guard.case` (the pair a rule reads, a rule's row, :class:`Wording`);
* :mod:`~eoc.stages.guard.reading` (numbers, names, symbols, corrections, negation),
  :mod:`~eoc.stages.guard.when` (the time asked about), :mod:`~eoc.stages.guard.stems`
  (word forms), :mod:`~eoc.stages.guard.lists` (the word lists of ``data/``) and
  :mod:`~eoc.stages.guard.wordkeys` (the keys of the kv's word gate);
* :mod:`~eoc.stages.guard.entity` (:class:`EntityGuard`) and
  :mod:`~eoc.stages.guard.simple` (the protocol, :class:`ExactWordsGuard`, :class:`NoGuard`).
"""

from __future__ import annotations

from eoc.stages.guard.analysis import Analysis, lexical_words
from eoc.stages.guard.case import Case, Rule, Wording, judgeable
from eoc.stages.guard.decisive import COMPUTATION_REFUSAL
from eoc.stages.guard.entity import EntityGuard
from eoc.stages.guard.frame import Frame
from eoc.stages.guard.lists import polarity_axes, rewording_words, synonyms
from eoc.stages.guard.reading import (
    ANSWER_TYPE_WORDS,
    NEGATIONS,
    decisive_difference,
    entities,
    numbers,
    symbols,
)
from eoc.stages.guard.rules import RULES
from eoc.stages.guard.simple import ExactWordsGuard, HitGuard, NoGuard
from eoc.stages.guard.when import clock_times

__all__ = [
    "ANSWER_TYPE_WORDS",
    "COMPUTATION_REFUSAL",
    "NEGATIONS",
    "RULES",
    "Analysis",
    "Case",
    "EntityGuard",
    "ExactWordsGuard",
    "Frame",
    "HitGuard",
    "NoGuard",
    "Rule",
    "Wording",
    "clock_times",
    "decisive_difference",
    "entities",
    "judgeable",
    "lexical_words",
    "numbers",
    "polarity_axes",
    "rewording_words",
    "symbols",
    "synonyms",
]
