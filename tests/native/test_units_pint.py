"""The core's unit table agrees with pint on every unit and prefix it knows."""

from __future__ import annotations

from fractions import Fraction

import pytest

pint = pytest.importorskip("pint")

from eoc.compute import compute  # noqa: E402
from eoc.compute.units import (  # noqa: E402
    BINARY_PREFIXES,
    SI_PREFIXES,
    _rows,
    find_unit,
)

UREG = pint.UnitRegistry()

PINT_NAME = {
    "m": "meter",
    "in": "inch",
    "ft": "foot",
    "yd": "yard",
    "mi": "mile",
    "nmi": "nautical_mile",
    "au": "astronomical_unit",
    "ly": "light_year",
    "Å": "angstrom",
    "g": "gram",
    "t": "metric_ton",
    "lb": "pound",
    "oz": "ounce",
    "st": "stone",
    "short ton": "short_ton",
    "long ton": "long_ton",
    "ct": "carat",
    "L": "liter",
    "m³": "meter ** 3",
    "cm³": "centimeter ** 3",
    "ft³": "foot ** 3",
    "in³": "inch ** 3",
    "US gal": "gallon",
    "imp gal": "imperial_gallon",
    "US qt": "quart",
    "US pt": "pint",
    "imp pt": "imperial_pint",
    "US cup": "cup",
    "US fl oz": "fluid_ounce",
    "US tbsp": "tablespoon",
    "US tsp": "teaspoon",
    "K": "kelvin",
    "°C": "degree_Celsius",
    "°F": "degree_Fahrenheit",
    "°R": "degree_Rankine",
    "s": "second",
    "min": "minute",
    "h": "hour",
    "d": "day",
    "wk": "week",
    "Julian yr": "julian_year",
    "km/h": "kilometer / hour",
    "mph": "mile / hour",
    "kn": "knot",
    "B": "byte",
    "bit": "bit",
    "J": "joule",
    "Wh": "watt_hour",
    "cal (thermochemical)": "thermochemical_calorie",
    "eV": "electron_volt",
    "BTU (IT)": "international_british_thermal_unit",
    "erg": "erg",
    "W": "watt",
    "hp (mechanical)": "horsepower",
    "Pa": "pascal",
    "bar": "bar",
    "atm": "standard_atmosphere",
    "psi": "psi",
    "mmHg": "millimeter_Hg",
    "Torr": "torr",
    "Hz": "hertz",
}

PINT_BASE = {
    "length": "meter",
    "mass": "kilogram",
    "volume": "meter ** 3",
    "temperature": "kelvin",
    "time": "second",
    "speed": "meter / second",
    "data": "byte",
    "energy": "joule",
    "power": "watt",
    "pressure": "pascal",
    "frequency": "hertz",
}


def _every_unit() -> list[tuple[str, str, str, Fraction, Fraction]]:
    """(shown, pint name, dimension, factor, offset) for each row and each prefix it takes."""
    out = []
    for shown, dim, factor, offset, prefixes, _, _ in _rows():
        out.append((shown, PINT_NAME[shown], dim, Fraction(factor), Fraction(offset)))
        if prefixes == "-":
            continue
        chosen = SI_PREFIXES if prefixes == "si" else SI_PREFIXES[14:] + BINARY_PREFIXES
        for pname, psym, pfactor in chosen:
            out.append(
                (
                    psym + shown,
                    pname + PINT_NAME[shown],
                    dim,
                    Fraction(factor) * Fraction(pfactor),
                    Fraction(0),
                )
            )
    return out


UNITS = _every_unit()


def test_every_row_has_a_pint_name() -> None:
    assert {r[0] for r in _rows()} == set(PINT_NAME)
    assert len(UNITS) > 300


@pytest.mark.parametrize(
    ("shown", "name", "dim", "factor", "offset"), UNITS, ids=[u[0] for u in UNITS]
)
def test_the_factor_agrees_with_pint(
    shown: str, name: str, dim: str, factor: Fraction, offset: Fraction
) -> None:
    for amount in (1, 37, -40):
        ours = (Fraction(amount) + offset) * factor
        theirs = UREG.Quantity(amount, name).to(PINT_BASE[dim]).magnitude
        assert float(ours) == pytest.approx(theirs, rel=1e-12, abs=1e-300), (shown, amount)


def test_pint_agrees_with_a_computed_temperature() -> None:
    done = compute("100 F in C")
    assert done is not None
    theirs = UREG.Quantity(100, "degF").to("degC").magnitude
    assert done.answer.startswith(f"100 °F ≈ {theirs:.9f}"[:20])


def test_names_resolve_to_the_table_units() -> None:
    assert find_unit("kilowatt hours") == find_unit("kWh")
    assert find_unit("gibibytes") == find_unit("GiB")
    assert find_unit("millilitres") == find_unit("mL") == find_unit("ml")
