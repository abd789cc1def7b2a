"""Regenerate the generated files of the knowledge pack: countries.tsv and elements.tsv.

Run by hand (not at install or test time), with the sources pinned:

    pip install countryinfo==1.0.1 babel==2.19.0 phonenumbers==9.0.43 periodictable==2.1.0
    python scripts/build_pack.py

Sources and licences (recorded again in eoc/knowledge/data/README.md):
- countryinfo 1.0.1 (MIT): country names, capitals, ISO 3166-1 codes, currencies (ISO 4217
  codes), languages (ISO 639-1 codes), borders, population, area, UN region and subregion,
  top-level domains, demonyms. The corrections below fix entries that are out of date there;
  entities whose capital is disputed, defunct or not a single city are left out.
- Babel (BSD-3-Clause; its data is the Unicode CLDR, Unicode licence): English names of
  currencies and languages.
- phonenumbers (Apache-2.0; Google's libphonenumber metadata): country calling codes.
- periodictable (public domain; IUPAC standard atomic weights): element names, symbols,
  atomic numbers and masses. Group and period follow from the atomic number and the IUPAC
  table's layout; the lanthanoids and actinoids (57-71, 89-103) have no group number there and
  get none here.
"""

from __future__ import annotations

import json
from pathlib import Path

import countryinfo  # type: ignore[import-not-found]
import periodictable  # type: ignore[import-not-found]
import phonenumbers  # type: ignore[import-not-found]
from babel import Locale  # type: ignore[import-not-found]
from babel.numbers import get_currency_name  # type: ignore[import-not-found]

DATA = Path(__file__).resolve().parents[1] / "eoc" / "knowledge" / "data"
RENAME = {
    "The Bahamas": "Bahamas",
    "The Gambia": "Gambia",
    "Republic of Macedonia": "North Macedonia",
    "Swaziland": "Eswatini",
    "Vatican City State": "Vatican City",
    "Virgin Islands, British": "British Virgin Islands",
    "Virgin Islands, U.S.": "United States Virgin Islands",
}
CAPITAL_FIX = {
    "Kazakhstan": "Astana",  # renamed back from Nur-Sultan in 2022
    "Eswatini": "Mbabane",  # administrative capital (Lobamba is the royal and legislative one)
    "Sri Lanka": "Sri Jayawardenepura Kotte",  # official capital; Colombo is the commercial one
    "Vatican City": "Vatican City",
}
SKIP = {
    "Antarctica",
    "Bouvet Island",
    "Heard Island and McDonald Islands",
    "United States Minor Outlying Islands",
    "Holy See (Vatican City State)",
    "Israel",
    "Palestine",
    "Palestine, State of",
    "Serbia and Montenegro",
    "Antilles néerlandaises",
    "Western Sahara",
    "Bonaire, Sint Eustatius and Saba",
    "Hong Kong",
    "Macau",
    "Tokelau",
    "Nauru",
    "Montserrat",
    "South Georgia",
    "French Southern and Antarctic Lands",
    "British Indian Ocean Territory",
}
ALIASES = {
    # common English names a question uses for a country that the data names otherwise
    "United States": ["USA", "US", "United States of America", "America"],
    "United Kingdom": ["UK", "Britain", "Great Britain"],
    "Czech Republic": ["Czechia"],
    "Ivory Coast": ["Côte d'Ivoire", "Cote d'Ivoire"],
    "Myanmar": ["Burma"],
    "Eswatini": ["Swaziland"],
    "North Macedonia": ["Macedonia"],
    "East Timor": ["Timor-Leste"],
    "Cape Verde": ["Cabo Verde"],
    "Vatican City": ["Holy See", "the Vatican"],
    "Turkey": ["Türkiye"],
}
CONTINENT = {
    "Africa": "Africa",
    "Europe": "Europe",
    "Asia": "Asia",
    "Oceania": "Oceania",
    "Antarctic": "Antarctica",
}
NORTH_AMERICA = {"Northern America", "Central America", "Caribbean"}
FUNDS = {"BOV", "CHE", "CHW", "CLF", "COU", "MXV", "USN", "USS", "UYI", "UYW", "XDR", "XSU", "XUA"}
"""ISO 4217 fund and settlement codes: units of account, not a country's currency."""
LANGUAGE_FIX = {"Kirghiz": "Kyrgyz"}
ELEMENT_NAME_FIX = {"aluminum": "Aluminium", "cesium": "Caesium", "sulfur": "Sulfur"}
ELEMENT_ALIASES = {"Aluminium": ["aluminum"], "Caesium": ["cesium"], "Sulfur": ["sulphur"]}


def _continent(region: str, subregion: str, intermediate: str) -> str | None:
    if region == "Americas":
        part = intermediate or subregion
        if part == "South America":
            return "South America"
        if part in NORTH_AMERICA:
            return "North America"
        return None
    return CONTINENT.get(region)


def countries() -> list[tuple[str, str, str]]:
    root = Path(countryinfo.__file__).parent / "data"
    en = Locale("en")
    records = {}
    for f in sorted(root.glob("*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        name = d.get("name")
        if not name or name in SKIP:
            continue
        records[RENAME.get(name, name)] = d
    by_alpha3 = {(d.get("ISO") or {}).get("alpha3"): n for n, d in records.items() if d.get("ISO")}
    out: list[tuple[str, str, str]] = []
    for name, d in sorted(records.items()):
        add = [(name, "is a", "country")]
        cap = d.get("capital")
        if isinstance(cap, list):
            cap = cap[0] if cap else None
        cap = CAPITAL_FIX.get(name, cap)
        if isinstance(cap, str) and cap.strip() and "/" not in cap:
            add.append((name, "capital", cap.strip()))
        iso = d.get("ISO") or {}
        if iso.get("alpha2"):
            add.append((name, "iso alpha-2 code", iso["alpha2"]))
            region = phonenumbers.country_code_for_region(iso["alpha2"])
            if region:
                add.append((name, "calling code", f"+{region}"))
        if iso.get("alpha3"):
            add.append((name, "iso alpha-3 code", iso["alpha3"]))
        for code in d.get("currencies") or []:
            if code in FUNDS:
                continue
            cname = get_currency_name(code, locale="en")
            if cname and cname != code:
                add.append((name, "currency", cname))
                add.append((name, "currency code", code))
        for code in d.get("languages") or []:
            lang = en.languages.get(code)
            if lang:
                add.append((name, "language", LANGUAGE_FIX.get(lang, lang)))
        if isinstance(d.get("population"), int) and d["population"] > 0:
            add.append((name, "population", str(d["population"])))
        area = d.get("area")
        if isinstance(area, (int, float)) and area > 0:
            add.append((name, "area", str(int(area)) if area == int(area) else str(area)))
        region, sub = d.get("region") or "", d.get("subregion") or ""
        if region:
            add.append((name, "region", region))
        if sub:
            add.append((name, "subregion", sub))
        cont = _continent(region, sub, d.get("intermediateregion") or "")
        if cont:
            add.append((name, "continent", cont))
        for tld in d.get("tld") or []:
            if tld.startswith(".") and tld.isascii():
                add.append((name, "top-level domain", tld))
        if d.get("demonym"):
            add.append((name, "demonym", d["demonym"]))
        for b in d.get("borders") or []:
            if b in by_alpha3:
                add.append((name, "borders", by_alpha3[b]))
        for alias in ALIASES.get(name, []):
            add.append((name, "also called", alias))
        out.extend(add)
    return out


def _period(z: int) -> int:
    for period, last in enumerate((2, 10, 18, 36, 54, 86, 118), 1):
        if z <= last:
            return period
    raise ValueError(z)


def _group(z: int) -> int | None:
    if z == 1:
        return 1
    if z == 2:
        return 18
    if 57 <= z <= 71 or 89 <= z <= 103:
        return None  # lanthanoids and actinoids: no group number in the IUPAC table
    starts = {2: 3, 3: 11, 4: 19, 5: 37, 6: 55, 7: 87}
    period = _period(z)
    pos = z - starts[period]  # 0-based position in its period
    if period in (2, 3):
        return pos + 1 if pos < 2 else pos + 11
    if period in (4, 5):
        return pos + 1
    return pos + 1 if pos < 2 else pos - 13  # after the 15 f-block places (57-71 / 89-103)


def elements() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for z in range(1, 119):
        e = periodictable.elements[z]
        name = ELEMENT_NAME_FIX.get(e.name, e.name.capitalize())
        out.append((name, "is a", "element"))
        out.append((name, "symbol", e.symbol))
        out.append((name, "atomic number", str(z)))
        mass = float(e.mass)
        out.append((name, "atomic mass", f"{mass:g}"))
        out.append((name, "period", str(_period(z))))
        g = _group(z)
        if g is not None:
            out.append((name, "group", str(g)))
        for alias in ELEMENT_ALIASES.get(name, []):
            out.append((name, "also called", alias))
    return out


def _write(name: str, head: str, triples: list[tuple[str, str, str]]) -> None:
    body = "".join(f"{s}\t{p}\t{o}\n" for s, p, o in triples)
    (DATA / name).write_text(head + body, encoding="utf-8")
    print(f"{name}: {len(triples)} triples")


def main() -> None:
    _write(
        "countries.tsv",
        "# generated by scripts/build_pack.py from countryinfo 1.0.1 (MIT), Babel (BSD-3-Clause,\n"
        "# Unicode CLDR data) and phonenumbers (Apache-2.0); see README.md\n",
        countries(),
    )
    _write(
        "elements.tsv",
        "# generated by scripts/build_pack.py from periodictable (public domain; IUPAC standard\n"
        "# atomic weights); group and period from the IUPAC table's layout; see README.md\n",
        elements(),
    )


if __name__ == "__main__":
    main()
