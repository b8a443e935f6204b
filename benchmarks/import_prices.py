"""Write catalog/prices/prices-2026-12.yaml from ../shared/data/prices-2026-12.csv (its README:
../shared/data/README-2026-12.md section 1), so that the price file can be made again from its document.

    .venv/bin/python benchmarks/import_prices.py            # writes catalog/prices/prices-2026-12.yaml
    .venv/bin/python benchmarks/import_prices.py --check    # exits 1 where the file differs from the CSV

Every row keeps its source (with the reference it gives), its date, its basis and its confidence:
- purchase rows become ``purchase_prices``; the loader chooses the one costs use by its rule
  (sizer.hardware.prices.costing_rank, docs/prices.md). The CSV's bases map to the catalog's:
  list (and a page's rounded "reference price") -> list; street, street (new retail) -> street;
  street (retail marketplace), which is a 90-day median of an Amazon price history -> price-history median;
  street (used) -> second-hand; analyst estimate -> analyst estimate. The basis as written is kept in the note.
- a row whose scope is a whole computer (Apple silicon, a Framework Desktop: the chip is not sold alone)
  names that computer (``system``) with one device in it.
- rent rows become ``cloud_prices`` with the provider and instance the listing names, priced per device-hour
  (an instance price over its GPUs).
- a date is the first date the CSV's date column gives (the last where it gives a window "A to B", the
  window's end); the column as written is kept in the note where it says more.
- confidence low -> verified false; medium or high -> verified true (the figure was read in the cited row).
Rows whose catalog_id the catalog lacks are kept under their id and listed in ``awaiting``; rows that name
no variant (catalog_id empty, with no id to expect) are kept under ``unassigned`` with the reason.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

from sizer.datafile import load_yaml

ROOT = Path(__file__).resolve().parent.parent
CSV = ROOT.parent / "shared" / "data" / "prices-2026-12.csv"
OUT = ROOT / "catalog" / "prices" / "prices-2026-12.yaml"

# catalog_id empty in the CSV: the id the row would have, where the hardware names one device
EXPECTED_IDS = {"AMD Instinct MI350X (288 GB; air-cooled sibling of the MI355X)": "mi350x"}
# catalog_id empty and no single device: why
UNASSIGNED = {"NVIDIA Tesla P100 16GB (form not stated: PCIe or SXM2)":
              "the listing does not say PCIe or SXM2 (the catalog has tesla-p100-pcie-16gb and tesla-p100-sxm2-16gb)"}
# catalog_id given in the CSV but naming another configuration than the catalog entry of that id: why
NOT_THIS_DEVICE = {"apple-m2-ultra-gpu": "the row prices the 60-core M2 Ultra (apple-m2-ultra-60c-gpu has the same row); "
                                         "the catalog's apple-m2-ultra-gpu is the 76-core variant, a build-to-order option"}

BASES = {"list": "list", "reference price": "list", "street": "street", "street (new retail)": "street",
         "street (retail marketplace)": "price-history median", "street (used)": "second-hand",
         "analyst estimate": "analyst estimate"}
DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")


def purchase_basis(written: str, offer: str) -> str:
    """The catalog's basis of a CSV purchase basis (its words before any bracket kept where they decide)."""
    key = written if written in BASES else written.split(" (")[0]
    if key not in BASES:
        raise SystemExit(f"unknown purchase basis {written!r}")
    basis = BASES[key]
    if basis == "price-history median" and "median" not in offer:
        raise SystemExit(f"a retail-marketplace row that is not a price-history median: {offer!r}")
    return basis


def date_of(written: str) -> str:
    """The date a price is of: the first date written, or a window's end."""
    found = DATE.findall(written)
    if not found:
        raise SystemExit(f"no date in {written!r}")
    return found[-1] if " to " in written else found[0]


def source_key(source: str, taken: set[str]) -> str:
    """A short readable key for a source: its first words, numbered where two sources share them."""
    words = re.findall(r"[a-z0-9]+", source.lower().replace("'", ""))
    base = "-".join(words[:3])
    key, n = base, 2
    while key in taken:
        key, n = f"{base}-{n}", n + 1
    taken.add(key)
    return key


def note_of(row: dict[str, str], date: str, extra: list[str]) -> str:
    parts = [*extra]
    if row["snippet"]:
        parts.append(f"source text: {row['snippet']}")
    if row["notes"]:
        parts.append(row["notes"])
    if row["date"] != date:
        parts.append(f"date as written: {row['date']}")
    return "; ".join(parts)


def purchase(row: dict[str, str], source: str) -> dict[str, object]:
    date = date_of(row["date"])
    basis = purchase_basis(row["basis"], row["offer_or_product"])
    whole = row["scope"].startswith("whole computer")
    extra = [f"basis as written: {row['basis']}"] if row["basis"] != basis else []
    if not whole:
        extra.insert(0, row["offer_or_product"])
    if row["term"] != "one-time purchase":
        extra.append(row["term"])
    price: dict[str, object] = {"value": f"{row['price']} {row['currency']}", "date": date, "source": source,
                                "basis": basis, "confidence": row["confidence"]}
    if whole:
        price.update(devices_in_system=int(row["gpus_per_unit"]), system=row["offer_or_product"])
    price.update(verified=row["confidence"] != "low", note=note_of(row, date, extra))
    return price


def offer(row: dict[str, str], source: str) -> dict[str, object]:
    date = date_of(row["date"])
    devices = int(row["gpus_per_unit"])
    per_instance = row["unit"].endswith("instance-hour")
    value = float(row["price"]) / devices if per_instance else float(row["price"])
    listing = row["offer_or_product"]
    provider, instance = listing.split(": ", 1) if ": " in listing else listing.split(" ", 1)
    if provider == "AWS":  # "AWS EC2 mac2-m2.metal (...)"
        instance = instance.removeprefix("EC2 ")
    extra = [f"basis as written: {row['basis']}"]
    if per_instance:
        extra.insert(0, f"{row['price']} {row['currency']} per instance-hour for {devices}")
    if row["term"] != "on-demand":
        extra.append(f"term as written: {row['term']}")
    if row["scope"] not in ("single GPU",):
        extra.append(f"scope: {row['scope']}")
    if not row["term"].startswith("on-demand"):
        raise SystemExit(f"a rent term the catalog has no word for: {row['term']!r}")
    return {"value": f"{value:.6g} USD/hour", "provider": provider, "instance": instance, "devices_in_instance": devices,
            "date": date, "source": source, "note": note_of(row, date, extra)}


def flow(mapping: dict[str, object]) -> str:
    """One price as a YAML flow mapping, every string double-quoted (JSON's quoting is YAML's)."""
    return "{" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in mapping.items()) + "}"


def catalog_ids() -> set[str]:
    """The ids of the built-in device files (read as YAML, not loaded: the price files play no part)."""
    files = sorted(path for path in (ROOT / "catalog").glob("*.yaml") if path.name != "models.yaml")
    return {entry["id"] for path in files for entry in load_yaml(path, "catalog")["devices"]}


def build(rows: list[dict[str, str]], known: set[str]) -> str:
    keys: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    devices: dict[str, dict[str, list[str]]] = {}
    unassigned: dict[str, dict[str, list[str]]] = {}
    reasons = dict(UNASSIGNED)
    for row in rows:
        ref = (row["source"], row["source_ref"])
        if ref not in keys:
            keys[ref] = source_key(row["source"], taken)
        price = flow(purchase(row, keys[ref]) if row["kind"] == "purchase" else offer(row, keys[ref]))
        field = "purchase_prices" if row["kind"] == "purchase" else "cloud_prices"
        device_id = row["catalog_id"] or EXPECTED_IDS.get(row["hardware"])
        if device_id in NOT_THIS_DEVICE:
            label = f"{row['hardware']} (catalog_id {device_id})"
            reasons[label] = NOT_THIS_DEVICE[device_id]
            unassigned.setdefault(label, {}).setdefault(field, []).append(price)
        elif device_id:
            devices.setdefault(device_id, {}).setdefault(field, []).append(price)
        elif row["hardware"] in UNASSIGNED:
            unassigned.setdefault(row["hardware"], {}).setdefault(field, []).append(price)
        else:
            raise SystemExit(f"a row with no catalog_id and no expected id: {row['hardware']!r}")
    awaiting = sorted(set(devices) - known)
    lines = [
        "# Generated by benchmarks/import_prices.py from ../shared/data/prices-2026-12.csv (README-2026-12.md",
        "# section 1); edit the script or the CSV, not this file. Purchase quotes go to purchase_prices: the loader",
        "# chooses the one costs use by its rule (docs/prices.md). A whole computer's price (a Mac) names the",
        "# computer as its system. Offers are per device-hour. Confidence low -> verified false.",
        "sources:",
        *(f"  {key}: {json.dumps(f'{source}, {ref}' if ref else source, ensure_ascii=False)}"
          for (source, ref), key in keys.items()),
        "",
        "# ids of devices other work adds (not in the catalog when this file was made): their prices wait for them",
        "awaiting: [" + ", ".join(awaiting) + "]",
        "",
        "devices:",
    ]
    for device_id, fields in devices.items():
        lines.append(f"  {device_id}:")
        for field, prices in fields.items():
            lines += [f"    {field}:", *(f"      - {p}" for p in prices)]
    lines += ["", "unassigned:"]
    for hardware, fields in unassigned.items():
        lines += [f"  - hardware: {json.dumps(hardware)}", f"    reason: {json.dumps(reasons[hardware])}"]
        for field, prices in fields.items():
            lines += [f"    {field}:", *(f"      - {p}" for p in prices)]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--csv", type=Path, default=CSV)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="exit 1 where the file differs from what the CSV gives")
    args = parser.parse_args()
    with args.csv.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    text = build(rows, catalog_ids())
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{args.out} differs from {args.csv}: run benchmarks/import_prices.py")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"{args.out}: {len(rows)} rows, {text.count(chr(10) + '      - ')} prices")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
