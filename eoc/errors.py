"""Every error eoc raises, one class per refusal or kind of bad input.

The hierarchy::

    EocError                       exit 1 unless a subclass says otherwise
    ├── InputError                 bad input from the caller (exit 2)
    │   ├── EmptyPrompt
    │   ├── PromptTooLong
    │   ├── InvalidText
    │   ├── BadEmbedding
    │   ├── FactFileError          malformed N-Triples / TSV, with a line number
    │   ├── BadReceipt             a receipt document that cannot be read
    │   ├── BadSuite               a bench suite that is not a list of cases (eoc.cli.benchrun)
    │   ├── BadJson                JSON that is malformed, too deep, or holds huge numbers
    │   ├── InputTooLarge          a file or stream larger than eoc reads for that purpose
    │   ├── InputUnreadable        a path that is missing, a folder, or a pipe that sends nothing
    │   ├── ModelFileError         a model file that is damaged, or holds values no model has
    │   │   ├── ChatTemplateError  its chat template does not parse, or passes a bound on size,
    │   │   │                      work or time (eoc_native.llm.template)
    │   │   └── ModelPartError     a part package of a model is not the pinned file (names the
    │   │                          part and the command that reinstalls it)
    │   └── ConfigError            a Cascade, stage or counter set up wrongly
    ├── Refusal                    eoc declined to give a figure (exit 1)
    │   ├── CounterUnavailable     no counter, no permission, browser
    │   ├── MissingExtra           a native package is not installed (names the pip command)
    │   ├── WrapAmbiguous          a RAPL window long enough to hide a second wrap
    │   ├── CounterFrozen          the counter did not advance over the work
    │   ├── CounterReadFailed      a read raised or returned garbage
    │   ├── WindowTooShort         the span is shorter than the counter can resolve
    │   ├── NotMetering            arithmetic refusals: idle at or above busy, a
    │   │                          per-op figure that rounds to 0, ...
    │   ├── Implausible            a span implying more power than the counter can draw
    │   ├── NotMeasured            a figure would be persisted that was not measured
    │   └── ReceiptMismatch        a receipt or signature that does not verify
    ├── UntrustedFile              a file or folder eoc would load code or mapped data from
    │                              that another user could have written (exit 1)
    ├── StoreError                 a persistent store cannot be used as it is (exit 1)
    │   ├── StoreUnusable          not a regular file, read-only, missing folder
    │   ├── StoreVersionError      a schema version this eoc does not know, or a foreign database
    │   └── StoreCorrupt           failed its integrity check, or holds rows of the wrong type
    └── BackendError               the neural backend failed to answer (exit 1)

Each error carries a one-line reason that says what to do next. The CLI maps
``exit_code`` straight to the process exit status.
"""

from __future__ import annotations


class EocError(Exception):
    """Base class of every error eoc raises on purpose."""

    exit_code: int = 1

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InputError(EocError, ValueError):
    """The caller gave eoc something it cannot use; nothing stored was touched."""

    exit_code = 2


class UpstreamRefused(InputError):
    """The model server behind eoc refused a request forwarded to it as the client sent it
    (``status``: its HTTP status, 400, 413 or 422): the request is at fault, not the server."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.status = status


class EmptyPrompt(InputError):
    """The prompt is empty or only whitespace."""


class PromptTooLong(InputError):
    """The prompt is larger than the cascade accepts."""


class InvalidText(InputError):
    """The prompt is not valid text (wrong type, lone surrogates, control characters)."""


class BadEmbedding(InputError):
    """An embedding is malformed: NaN or infinite values, wrong dimension, zero norm."""


class FactFileError(InputError):
    """A fact file (N-Triples or TSV) is malformed; the message names the line."""

    def __init__(self, reason: str, *, source: str = "<input>", line: int = 0) -> None:
        where = f"{source}:{line}: " if line else f"{source}: "
        super().__init__(where + reason)
        self.source = source
        self.line = line


class BadReceipt(InputError):
    """A receipt document is missing fields or has fields of the wrong type."""


class BadJson(InputError):
    """JSON that is malformed, nested too deeply, holds duplicate keys or numbers too large."""


class InputTooLarge(InputError):
    """A file or stream is larger than eoc reads for that purpose (reads are bounded)."""


class InputUnreadable(InputError):
    """A path that cannot be read as the file asked for: it does not exist, is a folder, may not
    be read, or is a pipe or device that sent nothing in time (the message says which)."""


class ModelFileError(InputError):
    """A model file (GGUF) that is cut short, damaged, or holds a value no model eoc runs has:
    a header value that disagrees with the tensors or implies more memory than the file could
    need, a tensor that does not fit the file. The message names the field; nothing was run."""


class ChatTemplateError(ModelFileError):
    """A model file's chat template does not parse, or passes a bound on the text it builds, its
    loop work, its nesting or its time, when the model loads or on one conversation (the reason
    names the bound and what to do)."""


class ModelPartError(ModelFileError):
    """A model shipped as part packages (:mod:`eoc_native.llm.parts`) whose installed part, or
    whose joined file, is not the pinned one (size or SHA-256): the reason names the part and
    the pip command that reinstalls it. Nothing was joined."""


class ConfigError(InputError):
    """A Cascade, stage or counter was configured with values it cannot use."""


class Refusal(EocError):
    """eoc declined to produce a figure rather than produce a wrong one."""

    exit_code = 1


class CounterUnavailable(Refusal):
    """No usable counter: absent, no permission, missing extra, or the browser."""


class MissingExtra(Refusal):
    """A package of the ``native`` extra is missing; the reason names the pip command."""


class WrapAmbiguous(Refusal):
    """A counter window was long enough that a second wraparound could hide in it."""


class Implausible(Refusal):
    """A reading implies more power than the counter's declared maximum: refused, never charged."""


class NotMeasured(Refusal):
    """Something would be written as measured that was not; nothing was written."""


class CounterFrozen(Refusal):
    """The counter did not advance over the work, so it recorded nothing."""


class CounterReadFailed(Refusal):
    """Reading the counter failed or returned a value that is not a count."""


class WindowTooShort(Refusal):
    """The span is shorter than the counter's minimum window."""


class NotMetering(Refusal):
    """The arithmetic of marginal energy refused: there is no honest figure."""


class ReceiptMismatch(Refusal):
    """A receipt's digest does not match its fields."""


class UntrustedFile(EocError):
    """A file eoc would load code or mapped data from (a compiled library, a cache, a key) is
    not owned by the running user or root, is writable by others, or sits in a folder others
    can write to (:mod:`eoc.files.trust`); the message names the path, why, and what to do."""

    exit_code = 1


class StoreError(EocError):
    """A persistent store (SQLite, PostgreSQL) cannot be used as it is; nothing was changed."""

    exit_code = 1


class StoreUnusable(StoreError):
    """The store's file cannot be used: not a regular file, read-only, or its folder is missing."""


class StoreVersionError(StoreError):
    """The store has a schema version this eoc does not know, or is another program's database."""


class StoreCorrupt(StoreError):
    """The store failed its integrity check or holds rows of the wrong type."""


class BackendError(EocError):
    """The neural backend failed to produce an answer."""

    exit_code = 1


__all__ = [
    "BackendError",
    "BadEmbedding",
    "BadJson",
    "BadReceipt",
    "ChatTemplateError",
    "ConfigError",
    "CounterFrozen",
    "CounterReadFailed",
    "CounterUnavailable",
    "EmptyPrompt",
    "EocError",
    "FactFileError",
    "Implausible",
    "InputError",
    "InputTooLarge",
    "InvalidText",
    "MissingExtra",
    "ModelFileError",
    "ModelPartError",
    "NotMeasured",
    "NotMetering",
    "PromptTooLong",
    "ReceiptMismatch",
    "Refusal",
    "StoreCorrupt",
    "StoreError",
    "StoreUnusable",
    "StoreVersionError",
    "UntrustedFile",
    "UpstreamRefused",
    "WindowTooShort",
    "WrapAmbiguous",
]
