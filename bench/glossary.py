#!/usr/bin/env python3
"""The provenance column of the seed glossary (`assets/glossary/ja-en.tsv`).

The glossary was edited beside five Japanese sets, and a line may have been
written because one of their requests needed it. The rule, mechanical and
pessimistic: a line's source is every one of those sets whose Japanese
requests contain its term (NFKC, as a substring); `general` when none does.
A general word that a request also happens to use is therefore counted as
set-derived, so figures "without set-derived lines" are a lower bound.

    python3 bench/glossary.py            # lines whose column differs from the rule
    python3 bench/glossary.py --write    # rewrite the column by the rule

The task-style ticket sets (`bench/sets/*-tickets.tsv`) were written after the
glossary's last line (2026-11-27 against 2026-11-26), so they are not in the
rule; a line added later for one of them names that set by hand
(`koel-tickets`, …), which the check accepts. `CODE_INTEL_GLOSSARY=general`
makes the server load the `general` lines only (src/rank/plan.rs), for the
bench's "without set-derived lines" figures.
"""

import json
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "assets" / "glossary" / "ja-en.tsv"
SETS = ROOT / "bench" / "sets"


def _tsv_requests(name):
    lines = (SETS / name).read_text(encoding="utf-8").splitlines()
    return [l.split("\t")[-1] for l in lines if l.strip() and not l.startswith("#")]


def older_sets():
    """The five sets the glossary was edited beside: name → their Japanese
    requests joined (NFKC)."""
    agent = json.loads((SETS / "agent_tasks.json").read_text(encoding="utf-8"))
    sets = {
        "laravel-ja": _tsv_requests("laravel-ja.tsv"),
        "koel-ja": _tsv_requests("koel-ja.tsv"),
        "koel-ja-translations": _tsv_requests("koel-ja-translations.tsv"),
        "bookstack-ja-translations": _tsv_requests("bookstack-ja-translations.tsv"),
        "agent-tasks": [t["query"] for t in agent["tasks"] if t["lang"] == "ja"],
    }
    return {k: unicodedata.normalize("NFKC", "\n".join(v)) for k, v in sets.items()}


def ticket_sets():
    return {p.name.removesuffix(".tsv") for p in SETS.glob("*-tickets.tsv")}


def sources(term, sets):
    """The sets whose requests contain `term` (empty: a `general` line)."""
    t = unicodedata.normalize("NFKC", term)
    return [k for k, text in sets.items() if t in text]


def mismatches(lines=None):
    """(line number, term, column, what the rule gives) of every entry whose
    column is not the rule's (plus hand-named ticket sets)."""
    sets, tickets = older_sets(), ticket_sets()
    out = []
    lines = lines if lines is not None else GLOSSARY.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        if line.startswith("#") or not line.strip():
            continue
        cols = line.split("\t")
        have = cols[2].split(",") if len(cols) > 2 else []
        older = [s for s in have if s not in tickets and s != "general"]
        named = [s for s in have if s in tickets]
        want = sources(cols[0].strip(), sets)
        if older != want or ("general" in have) != (not older and not named):
            out.append((n, cols[0], ",".join(have), ",".join(want) or "general"))
    return out


def write():
    sets = older_sets()
    lines = GLOSSARY.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        if line.startswith("#") or not line.strip():
            out.append(line)
            continue
        cols = line.split("\t")
        out.append("\t".join([cols[0], cols[1], ",".join(sources(cols[0].strip(), sets) or ["general"])]))
    GLOSSARY.write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write()
    bad = mismatches()
    for n, term, have, want in bad:
        print(f"ja-en.tsv:{n}: {term}: column {have or '(none)'}, rule {want}")
    sys.exit(1 if bad else 0)
