"""What ``eoc verify PROFILE`` checks: a tuning profile's consistency and who sealed it.

This module is the ``profile`` entry point of the core's ``eoc.verifiers`` group (see
:mod:`eoc.plugins`). It sits above the two halves it joins, the profile's strict parser
(:mod:`eoc_native.autotune.profile`) and the Ed25519 signatures
(:mod:`eoc_native.autotune.signing`); neither imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from eoc.errors import BadReceipt
from eoc_native.autotune.profile import TuningProfile
from eoc_native.autotune.signing import check_signature


def describe_profile(
    doc: Mapping[str, Any], trusted_keys: Sequence[str] | None = None
) -> tuple[list[str], dict[str, Any]]:
    """What ``eoc verify PROFILE`` prints: the lines and the JSON document.

    The profile must be well formed (strict types, every winner the joules-minimal backend of
    its shape) and its signature must pass :func:`check_signature`.

    Raises:
        InputError: the profile is malformed (a subclass: BadJson, BadReceipt, ConfigError...).
        ReceiptMismatch: altered, or refused by the trusted keys.
    """
    if not isinstance(doc, Mapping):
        raise BadReceipt("not an eoc tuning profile: the document is not a JSON object")
    check = check_signature(doc, trusted_keys)  # first: "altered" says more than "malformed"
    profile = TuningProfile.from_dict(doc)
    figures = sum(len(es) for es in profile.entries.values())
    prov = profile.provenance
    where = (
        "names no counter"
        if prov is None
        else f"measured on {prov.counter} ({prov.counter_kind}) at {prov.host}, {prov.date}"
    )
    lines = [
        f"tuning profile consistent : {len(profile.winners)} shapes, {figures} figures; {where}",
        f"  {check.describe()}",
    ]
    out = {
        "ok": True,
        "kind": "tuning-profile",
        "consistent": True,
        "signed": check.signer is not None,
        "signer": check.signer,
        "trusted": check.trusted,
        "provenance": None if prov is None else asdict(prov),
        "shapes": len(profile.winners),
        "figures": figures,
    }
    return lines, out


__all__ = ["describe_profile"]
