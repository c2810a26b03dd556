"""Japanese segmentation: code-intel's reading against a maintained
analyser, Lindera with IPADIC (bench/README.md § Japanese bridge).

Run with a Python that has `lindera-python-ipadic` (PyPI, 2.2.0; the
dictionary is inside the wheel), not the bench's venv:

    python bench/segmentation.py segments bench/sets/*-tickets.tsv --out SEGMENTS.json
    python bench/segmentation.py coverage bench/sets/*-tickets.tsv --repo INDEXED_REPO [--bin code-intel]

`segments` writes, for every Japanese ticket (NFKC-normalised, the text
`plan` reads), IPADIC's token boundaries (byte offsets) and its content
words with their base forms: what bench/experiments/segmentation.patch
reads from `CODE_INTEL_EXP_SEGMENTS` to run `query` with the analyser's
segmentation (`bench/run.sh changeset … --lang ja` with the patched build;
matches only on IPADIC's boundaries, plus `CODE_INTEL_EXP_BASE=1`: IPADIC's
base forms looked up for the words the reading leaves, plus
`CODE_INTEL_EXP_NOBOUNDS=1`: base forms without the boundary rule).
`coverage` counts, on the development parts, IPADIC's content words that
code-intel's reading (`code-intel query --json`: the plan's translated
terms and the runs it hands to the bridge) takes, the ones it leaves that
the glossary or JMdict holds by their base form, and the occurrences of
its terms in the request that straddle an IPADIC boundary (every
occurrence of a term's text, so one inside a longer term counts too).
"""

import argparse
import collections
import json
import os
import subprocess
import unicodedata
from pathlib import Path

import lindera

TOKENIZER = lindera.Tokenizer(lindera.load_dictionary("embedded://ipadic"), mode="normal")
ROOT = Path(__file__).resolve().parent.parent


def japanese(text):
    return any("\u30a0" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in text)


def requests(paths, split=None):
    for path in paths:
        for line in open(path, encoding="utf-8"):
            cols = line.rstrip("\n").split("\t")
            if line.startswith("#") or len(cols) < 4 or cols[2] != "ja" or split and cols[1] != split:
                continue
            yield unicodedata.normalize("NFKC", cols[3])


def tokens(q):
    """(char start, char end, surface, base form, content word?) per token."""
    out, i = [], 0
    for t in TOKENIZER.tokenize(q):
        j = q.find(t.surface, i)
        if j < 0:
            continue
        i = j + len(t.surface)
        det = (t.details or []) + ["", ""]
        pos, sub = det[0], det[1]
        content = (pos == "名詞" and sub not in ("非自立", "代名詞", "数", "接尾")
                   or pos in ("動詞", "形容詞") and sub == "自立") and japanese(t.surface)
        base = det[6] if len(det) > 8 and det[6] not in ("*", "") else t.surface
        out.append((j, i, t.surface, base, content))
    return out


def segments(paths):
    out = {}
    for q in requests(paths):
        at = lambda k: len(q[:k].encode())
        toks = tokens(q)
        out[q] = {"bounds": sorted({at(a) for a, *_ in toks} | {at(b) for _, b, *_ in toks}),
                  "words": [[at(a), at(b), base] for a, b, _, base, content in toks if content]}
    return out


def table(path):
    rows = {}
    for line in open(path, encoding="utf-8"):
        cols = line.rstrip("\n").split("\t")
        if not line.startswith("#") and len(cols) >= 2:
            rows[cols[0]] = cols[1]
    return rows


def spans(q, terms):
    out = []
    for term in terms:
        j = q.find(term)
        while j >= 0:
            out.append((j, j + len(term), term))
            j = q.find(term, j + 1)
    return out


def coverage(paths, repo, bin_):
    known = {**table(Path.home() / ".cache/code-intel/dictionary/jmdict-ja-en.tsv"),
             **table(ROOT / "assets/glossary/ja-en.tsv")}
    n = collections.Counter()
    left = collections.Counter()
    for q in requests(paths, "dev"):
        plan = json.loads(subprocess.run([bin_, "query", q, "--repo", str(repo), "--json", "-n", "1"],
                                         capture_output=True, text=True, check=True).stdout)["plan"]
        terms = spans(q, [t["term"] for t in plan["translated"]])
        read = terms + spans(q, plan["untranslated"])
        toks = tokens(q)
        bounds = {a for a, *_ in toks} | {b for _, b, *_ in toks}
        n["requests"] += 1
        n["terms"] += len(terms)
        n["terms straddling an IPADIC boundary"] += sum(a not in bounds or b not in bounds for a, b, _ in terms)
        for a, b, surface, base, content in toks:
            if not content:
                continue
            n["IPADIC content words"] += 1
            if any(x <= a and b <= y or a <= x and y <= b for x, y, _ in read):
                n["read by code-intel"] += 1
            elif base in known:
                n["left, base form in the glossary or JMdict"] += 1
                left[f"{surface} → {base}"] += 1
            else:
                n["left, in neither"] += 1
    for k, v in n.items():
        print(f"{k}: {v}")
    print("left, readable by base form:", ", ".join(f"{k} ({v})" for k, v in left.most_common(12)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["segments", "coverage"])
    ap.add_argument("sets", nargs="+", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--repo", type=Path)
    ap.add_argument("--bin", default=os.environ.get("CODE_INTEL_BIN", "code-intel"))
    a = ap.parse_args()
    if a.what == "segments":
        a.out.write_text(json.dumps(segments(a.sets), ensure_ascii=False))
    else:
        coverage(a.sets, a.repo, a.bin)


if __name__ == "__main__":
    main()
