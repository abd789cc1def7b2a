"""The entity guard's one table of rules, in the order they are asked, and the loop that asks
them (:func:`refusal`).

A rule (:class:`~eoc.stages.guard.case.Rule`) reads the pair and says nothing (``None``),
lets it through (``""``) or refuses, saying why. A decisive refusal ends the loop. A refusal
for want of evidence (:class:`~eoc.stages.guard.case.Wording`) ends it too, unless the rule
*notes* it: then the loop goes on, so that a decisive difference later in the table still
decides, and the first note is the reason when nothing decisive follows. To add a rule: write it
in the module of its kind (``decisive``, ``roles``, ``wording``), put its row here where it
belongs in the order, and add a falsify break and traps written apart from it.
"""

from __future__ import annotations

from eoc.stages.guard import decisive, roles, wording
from eoc.stages.guard.case import Case, Rule, judgeable

RULES: tuple[Rule, ...] = (
    # what always decides: a computation, numbers, operators, names, capitals, ranks, opposite
    # poles, the sides of a transfer, the time, who does what to whom
    Rule("computation", decisive.computation),
    Rule("numbers", decisive.numbers),
    Rule("question words taken back", decisive.taken_back_question_words),
    Rule("operators and symbols", decisive.symbols),
    Rule("names", decisive.names, notes=True),
    Rule("capitals", decisive.capitals),
    Rule("order of names", decisive.order_of_names),
    Rule("negation taken back", decisive.taken_back_negation),
    Rule("ranks", decisive.ranks),
    Rule("opposites", decisive.opposites, notes=True),
    Rule("sides of a transfer", decisive.transfer_sides),
    Rule("swapped sides", decisive.swapped_sides),
    Rule("time", decisive.time, notes=True),
    Rule("who does what to whom", roles.who_does_what),
    # what the question frame tells
    Rule("kind of answer", wording.kind_of_answer),
    Rule("another wording", wording.another_wording),
    Rule("question words", wording.question_words),
    Rule("tense", wording.tense),
    Rule("negation", wording.negation),
    Rule("actions", wording.actions),
    Rule("an action said by one side alone", wording.action_said_alone),
    Rule("fewer words", wording.fewer_words),
    Rule("changed words", wording.changed_words),
)
"""Every rule of :class:`~eoc.stages.guard.entity.EntityGuard`, in the order asked."""


def decide(case: Case, rules: tuple[Rule, ...] = RULES) -> tuple[str, str]:
    """Why the stored question may not answer the query ("" when it may), and the name of the
    rule that said so ("" when no rule had a say): the first decisive refusal of ``rules``; else
    the first wording noted, or what the rule that ended the loop said."""
    noted: list[tuple[str, str]] = []
    for rule in rules:
        reason = rule.check(case.q, case.s, case)
        if reason is None:
            continue
        if rule.notes and judgeable(reason):
            noted.append((reason, rule.name))
            continue
        if reason and not judgeable(reason):
            return reason, rule.name
        return noted[0] if noted else (reason, rule.name)
    return noted[0] if noted else ("", "")


def refusal(case: Case, rules: tuple[Rule, ...] = RULES) -> str:
    """Why the stored question may not answer the query ("" when it may): :func:`decide`'s
    reason."""
    return decide(case, rules)[0]
