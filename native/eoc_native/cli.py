"""``eoc autotune``: tune a decode and a prefill shape and write a measured tuning profile.

It refuses — exit 1, printing the file, the reason and the counter's status, and creating no
file — when there is no live counter or when anything was not measured. Liveness is what eoc's
own probe saw (detection's probe, or the tuner's), never the counter's word; the counter's kind
is its effective kind (``fake`` for test counters, ``unverified`` for uninstalled classes).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, TextIO

from eoc.errors import BadReceipt, ConfigError
from eoc.meter.detection import detect_all
from eoc.meter.marginal import refusal
from eoc.meter.trust import effective_kind
from eoc_native.autotune.profile import TuningProfile, profile_path
from eoc_native.autotune.tune import TuneResult, tune_shape_live
from eoc_native.backends import usable_backends
from eoc_native.backends.base import Shape
from eoc_native.progress import ProgressBar

FULL = (Shape(1, 4096, 4096), Shape(256, 4096, 4096))  # decode, prefill
SMALL = (Shape(1, 1024, 1024), Shape(64, 1024, 1024))


def _refuse(
    out: TextIO, as_json: bool, target: Path, reason: str, counter: str, status: str
) -> int:
    if as_json:
        doc = {
            "refused": True,
            "file": str(target),
            "reason": reason,
            "counter": counter,
            "status": status,
        }
        out.write(json.dumps(doc, indent=2) + "\n")
    else:
        out.write(
            refusal(f"writing the tuning profile {target}", reason, counter=counter, status=status)
            + "\n"
        )
    return 1


def _row(r: TuneResult) -> dict[str, Any]:
    return {
        "shape": r.shape.key,
        "winner": r.winner,
        "margin": r.margin,
        "skipped": r.skipped,
        "measurements": [
            {
                "backend": m.backend,
                "ops": m.ops,
                "uj_per_op": m.uj_per_op,
                "ns_per_op": m.ns_per_op,
                "gflops": (r.shape.flops / m.ns_per_op) if m.ns_per_op else None,
                "reason": m.reason,
            }
            for m in r.measurements
        ],
    }


def cmd_autotune(args: argparse.Namespace, out: TextIO) -> int:
    if not 0.05 <= args.seconds <= 60:
        raise ConfigError("--seconds must be between 0.05 and 60")
    started = time.perf_counter()
    target = Path(args.out).expanduser() if args.out else profile_path()
    key: bytes | None = None
    signer: str | None = None
    if args.sign_key:
        try:
            key = Path(args.sign_key).expanduser().read_bytes()
        except OSError as exc:
            raise BadReceipt(f"cannot read the signing key {args.sign_key}: {exc}") from None
        from eoc_native.autotune.signing import public_key_hex

        signer = public_key_hex(key)  # a bad key is a usage error now, not after minutes of tuning
    found = detect_all()
    counter = found.counter
    seen = found.probe_of(counter)  # eoc's probe during detection; the tuner probes if None
    if not found.live:
        status = str(seen.status if seen is not None else counter.status())
        return _refuse(out, args.json, target, found.reason or status, counter.name, status)
    shapes = SMALL if args.small else FULL
    backends, _ = usable_backends()
    bar = ProgressBar(len(shapes))
    results = [
        tune_shape_live(s, backends, counter, args.seconds, progress=bar.update, liveness=seen)
        for s in shapes
    ]
    failed = [r for r in results if r.winner is None]
    if failed:
        reason = "; ".join(f"{r.shape.key}: {r.reason}" for r in failed)
        return _refuse(out, args.json, target, reason, counter.name, failed[0].liveness)
    profile = TuningProfile()
    for r in results:
        profile.add(r)
    profile.save(target, sign_key=key)
    elapsed = time.perf_counter() - started
    kind = effective_kind(counter)[0].value
    if args.json:
        doc = {
            "file": str(target),
            "counter": counter.name,
            "counter_kind": kind,
            "liveness": results[0].liveness,
            "signer": signer,
            "seconds": elapsed,
            "shapes": [_row(r) for r in results],
        }
        out.write(json.dumps(doc, indent=2) + "\n")
        return 0
    lines = [f"tuned on {counter.name} ({kind}) in {elapsed:.1f} s; wrote {target}"]
    if signer is not None:
        lines.append(f"signed by key {signer}")
    for r in results:
        lines.append(
            f"{r.shape.key}: winner {r.winner}"
            + (f" ({r.margin:.2f}x fewer µJ than the next)" if r.margin else "")
        )
        for m in r.measurements:
            gflops = r.shape.flops / m.ns_per_op if m.ns_per_op else 0.0
            lines.append(
                f"  {m.backend:<24} {m.uj_per_op:>12,.1f} µJ/op {m.ns_per_op:>14,.0f} ns/op {gflops:>8.1f} GFLOP/s"
            )
        for name, why in r.skipped.items():
            lines.append(f"  {name:<24} not run: {why}")
    out.write("\n".join(lines) + "\n")
    return 0


def register(sub: object, add: Any) -> None:
    """Add ``autotune`` to the eoc command line (the ``eoc.commands`` entry point)."""
    tune = add(
        "autotune",
        "meter each compute backend on a decode and a prefill shape and write a tuning profile (native)",
        cmd_autotune,
    )
    tune.add_argument("--small", action="store_true", help="n=k=1024 instead of 4096")
    tune.add_argument("--seconds", type=float, default=1.0, help="busy and idle window per backend")
    tune.add_argument(
        "--out",
        help="profile file (default $EOC_TUNING_PROFILE or ~/.cache/eoc/tuning-profile.json)",
    )
    tune.add_argument("--sign-key", help="Ed25519 private key (PEM) to seal the profile with")


__all__ = ["FULL", "SMALL", "cmd_autotune", "register"]
