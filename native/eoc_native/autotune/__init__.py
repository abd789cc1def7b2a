"""The energy autotuner: metered windows per backend, tuning profiles, dispatch."""

from eoc_native.autotune.dispatch import Dispatcher
from eoc_native.autotune.profile import (
    ProfileEntry,
    ProfileProvenance,
    TuningProfile,
    global_profile,
    load_profile,
    set_global_profile,
)
from eoc_native.autotune.seal import describe_profile
from eoc_native.autotune.signing import SignatureCheck, check_signature
from eoc_native.autotune.tune import Measurement, TuneResult, measured_here, tune_shape_live

__all__ = [
    "Dispatcher",
    "Measurement",
    "ProfileEntry",
    "ProfileProvenance",
    "SignatureCheck",
    "TuneResult",
    "TuningProfile",
    "check_signature",
    "describe_profile",
    "global_profile",
    "load_profile",
    "measured_here",
    "set_global_profile",
    "tune_shape_live",
]
