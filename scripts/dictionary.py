"""Builds the general Japanese → English dictionary the query planner reads
(src/rank/dictionary.rs) from JMdict, the Electronic Dictionary Research and
Development Group's dictionary (CC BY-SA 3.0; README § License), as packaged
on PyPI by `jamdict-data` (a SQLite build of JMdict 1.08, 2021-04-17).

    python3 scripts/dictionary.py OUT.tsv [--db jamdict.db[.xz]]

Without `--db` the package is downloaded from PyPI (`pip download`, 54 MB;
what scripts/setup.sh does once per machine) and its licence file is written
beside OUT (JMdict-LICENSE.md). Writes a TSV, one term a line:

    term<TAB>english words, best first, space-separated

Which entries: every kanji spelling and every katakana spelling of an entry
that JMdict marks common (a priority tag: ichi, news, spec, gai) or that has
a computing sense, two chars or more. Which words: the glosses of its senses,
computing senses first, then JMdict's order; a gloss counts when it has one
or two words once its parentheses and a verb's "to " are gone; archaic,
obsolete and rare senses are left out; at most MAX_WORDS words. The query
planner then keeps only the words the repository's own identifiers use.
"""

import argparse
import lzma
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "jamdict-data==1.5"
MAX_WORDS = 8
# Function words a two-word gloss carries ("searching for", "look up").
STOP = {
    "a", "an", "the", "of", "to", "for", "in", "on", "at", "by", "up", "out", "off", "with", "as",
    "and", "or", "be", "one", "one's", "someone", "something", "etc", "e.g", "i.e", "oneself", "it",
}
SKIP_MISC = {"archaism", "obsolete term", "rare term", "obscure term"}
PRIORITY = re.compile(r"^(ichi|news|spec|gai)[12]$")


def katakana(s):
    return all("\u30a0" <= c <= "\u30ff" for c in s)


def words_of(gloss):
    g = re.sub(r"\([^)]*\)", " ", gloss).strip().lower()
    if g.startswith("to "):
        g = g[3:]
    parts = [w.strip(".,;:!?\"'") for w in g.split()]
    parts = [w for w in parts if w]
    if not 1 <= len(parts) <= 2:
        return []
    return [w for w in parts if w not in STOP and re.fullmatch(r"[a-z][a-z-]*[a-z]", w)]


def build(db, out):
    c = sqlite3.connect(db)
    senses = {}
    for sid, idseq in c.execute("SELECT ID, idseq FROM Sense"):
        senses.setdefault(idseq, []).append(sid)
    glosses = {}
    for sid, text in c.execute("SELECT sid, text FROM SenseGloss WHERE lang = 'eng' ORDER BY rowid"):
        glosses.setdefault(sid, []).append(text)
    computing = {sid for (sid,) in c.execute("SELECT sid FROM field WHERE text = 'computing'")}
    skipped = {sid for sid, text in c.execute("SELECT sid, text FROM misc") if text in SKIP_MISC}
    kanji_common = {kid for kid, text in c.execute("SELECT kid, text FROM KJP") if PRIORITY.match(text)}
    kana_common = {kid for kid, text in c.execute("SELECT kid, text FROM KNP") if PRIORITY.match(text)}

    def english(idseq):
        order = sorted(senses.get(idseq, []), key=lambda s: (s not in computing, s))
        out = []
        for sid in order:
            if sid in skipped:
                continue
            for g in glosses.get(sid, []):
                for w in words_of(g):
                    if w not in out:
                        out.append(w)
        return out[:MAX_WORDS]

    def has_computing(idseq):
        return any(s in computing for s in senses.get(idseq, []))

    terms = {}
    rows = [(kid, idseq, text, kid in kanji_common) for kid, idseq, text in c.execute("SELECT ID, idseq, text FROM Kanji")]
    rows += [(kid, idseq, text, kid in kana_common) for kid, idseq, text in c.execute("SELECT ID, idseq, text FROM Kana")
             if katakana(text)]
    # A spelling shared by several entries (表 as table and as front) takes
    # the common entries' words first.
    rows.sort(key=lambda r: not r[3])
    for _, idseq, text, common in rows:
        if len(text) < 2 or not (common or has_computing(idseq)):
            continue
        words = english(idseq)
        if not words:
            continue
        have = terms.setdefault(text, [])
        have.extend(w for w in words if w not in have)
    with open(out, "w", encoding="utf-8") as f:
        f.write("# JMdict (EDRDG, CC BY-SA 3.0), built by scripts/dictionary.py from " + PACKAGE + "\n")
        for term in sorted(terms):
            f.write(f"{term}\t{' '.join(terms[term][:MAX_WORDS])}\n")
    return len(terms)


def unxz(src, tmp):
    """Decompresses an .xz stream or file into `tmp`/jamdict.db; its path."""
    db = Path(tmp) / "jamdict.db"
    with lzma.open(src) as x, open(db, "wb") as f:
        shutil.copyfileobj(x, f)
    return db


def fetch(tmp, licence):
    """Downloads the package, writes its LICENSE.md (the EDRDG licence,
    which asks users of the files to ship it) to `licence`, and returns
    the decompressed database's path."""
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                    "-d", str(tmp), PACKAGE], check=True, stdout=sys.stderr)
    archive = next(Path(tmp).glob("jamdict_data-*.tar.gz"))
    with tarfile.open(archive) as t:
        notice = next(m for m in t.getmembers() if m.name.endswith("jamdict_data/LICENSE.md"))
        licence.write_bytes(t.extractfile(notice).read())
        member = next(m for m in t.getmembers() if m.name.endswith("jamdict.db.xz"))
        return unxz(t.extractfile(member), tmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--db", type=Path, help="jamdict.db or jamdict.db.xz (default: download " + PACKAGE + ")")
    a = ap.parse_args()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = a.db
        if db is None:
            db = fetch(tmp, a.out.with_name("JMdict-LICENSE.md"))
        elif db.suffix == ".xz":
            db = unxz(db, tmp)
        partial = a.out.with_suffix(".partial")
        n = build(db, partial)
        partial.replace(a.out)
    print(f"dictionary: {n} terms -> {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
