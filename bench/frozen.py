#!/usr/bin/env python3
"""The frozen part of every labelled set, and its SHA-256.

    python3 bench/frozen.py          # a markdown table, as in bench/README.md § Frozen parts

A frozen part is fixed by a rule written before measuring and is never
tuned on: for the ticket sets (`bench/sets/*-tickets.tsv`) the rows whose
split column says `frozen` (the newer third of each set's commits); for the
value/quote pairs (`tests/calibration/value_quote_fresh.tsv`) the reporting
half (groups 5-8, 13-16, ...; `rank::value_check`). The digest is taken over
those rows as they are in the file (LF-terminated lines, file order), so a
changed, added or removed frozen row changes it; `tests/e2e/test_bench_sets.py`
fails when bench/README.md's table differs from what this prints.
"""

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rows(path: Path):
    return [l for l in path.read_text(encoding="utf-8").splitlines() if l.strip() and not l.startswith("#")]


def ticket_frozen(path: Path):
    return [l for l in rows(path) if l.split("\t")[1] == "frozen"]


def value_quote_reporting(path: Path):
    return [l for l in rows(path) if (int(l.split("\t")[5]) - 1) // 4 % 2 == 1]


def parts():
    """(set file relative to the repository, rule, frozen rows)."""
    out = []
    for p in sorted((ROOT / "bench" / "sets").glob("*-tickets.tsv")):
        out.append((p.relative_to(ROOT).as_posix(), "split column `frozen`", ticket_frozen(p)))
    p = ROOT / "tests" / "calibration" / "value_quote_fresh.tsv"
    out.append((p.relative_to(ROOT).as_posix(), "reporting half (groups 5-8, 13-16, ...)", value_quote_reporting(p)))
    return out


def digest(lines):
    return hashlib.sha256("".join(l + "\n" for l in lines).encode("utf-8")).hexdigest()


def table():
    lines = ["| set | frozen part | rows | SHA-256 |", "|---|---|---|---|"]
    for name, rule, frozen in parts():
        lines.append(f"| `{name}` | {rule} | {len(frozen)} | `{digest(frozen)}` |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
