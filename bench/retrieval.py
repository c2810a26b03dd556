"""File-localisation benchmark from git history (SWE-bench-style localisation).

Queries come from commit subjects (bench/sets.py): the relevant files of a
query are the non-test source files its commit changed that exist at the
snapshot the index is built from. The whole repository is indexed, tests and
docs included, as a user would. Methods, all in the same run on the same
files:

- bm25: the baseline — files ranked by BM25 (k1 1.2, b 0.75) over `rg -c -w
  -i` match counts of the query's words (length = lines; N = files rg lists);
- semantic: `semantic_search` (forest, 50 chunks), files in order of their
  best chunk;
- query: the `query` tool (50 files).

Printed per set (English: all / without identifiers / with identifiers;
Japanese; the same commits in English): recall@1/5/10 and MRR, and `query`
latency p50/p95 (client-side, warm server).

    bench/run.sh retrieval REPO [--before 2026-06-01] [--ja bench/sets/laravel-ja.tsv]
    (koel/koel at b73c97ff92: --ja bench/sets/koel-ja.tsv or koel-ja-translations.tsv;
    with koel-ja.tsv, --paraphrases bench/sets/koel-en-paraphrases.tsv)
                                [--total 200] [--plain 100] [--json rows.json]
"""

import argparse
import asyncio
import json
import math
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import sets
from bench import BIN, env

STOP = set(
    "the and for from with that this into onto when which while where what are was were not "
    "use uses used using add adds added fix fixes fixed make makes made one two each all any "
    "its it's only also now new more less per via out off set get has have had can should "
    "does doesn't don't isn't being been than then them they their there these those".split()
)
KS = (1, 5, 10)
QUERY_ARGS = {}


class BM25:
    """BM25 over `rg -c -w -i` counts (the issue's 30-line baseline)."""

    def __init__(self, repo: Path):
        self.repo = repo
        files = subprocess.run(["rg", "--files"], cwd=repo, capture_output=True, text=True).stdout
        self.n = max(1, len(files.splitlines()))
        lines = subprocess.run(["rg", "-c", "", "."], cwd=repo, capture_output=True, text=True).stdout
        self.length = {}
        for line in lines.splitlines():
            path, _, n = line.rpartition(":")
            self.length[path.removeprefix("./")] = int(n)
        self.avg = sum(self.length.values()) / max(1, len(self.length))
        self.cache = {}

    def counts(self, word):
        if word not in self.cache:
            r = subprocess.run(
                ["rg", "--no-config", "-c", "-w", "-i", "-F", word, "."],
                cwd=self.repo, capture_output=True, text=True,
            )
            tf = {}
            for line in r.stdout.splitlines():
                path, _, n = line.rpartition(":")
                tf[path.removeprefix("./")] = int(n)
            self.cache[word] = tf
        return self.cache[word]

    def rank(self, query):
        words = sorted({w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", query)} - STOP)
        score = defaultdict(float)
        k1, b = 1.2, 0.75
        for w in words:
            tf = self.counts(w)
            df = len(tf)
            if not df:
                continue
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            for f, c in tf.items():
                dl = self.length.get(f, self.avg)
                score[f] += idf * c * (k1 + 1) / (c + k1 * (1 - b + b * dl / self.avg))
        return [f for f, _ in sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))]


def files_in_order(results):
    seen = []
    for h in results:
        if h["file"] not in seen:
            seen.append(h["file"])
    return seen


def metrics(ranked, relevant):
    rel = set(relevant)
    m = {f"recall@{k}": len(rel & set(ranked[:k])) / len(rel) for k in KS}
    first = next((i for i, f in enumerate(ranked) if f in rel), None)
    m["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    return m


async def call(session, tool, args):
    while True:
        r = await session.call_tool(tool, args)
        text = r.content[0].text if r.content else ""
        # Wait for the model, and for the background sync `serve` starts.
        if r.is_error and ("model_loading" in text or "already running" in text):
            await asyncio.sleep(1)
            continue
        if r.is_error:
            raise RuntimeError(f"{tool}: {text}")
        return r.structured_content


async def run(repo, queries, bm25):
    params = StdioServerParameters(command=BIN, args=["serve", "--repo", str(repo)], env=env())
    rows = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            t = time.time()
            sync = await call(s, "sync_index", {})
            rep = sync["report"]
            print(
                f"index: {rep['chunks_total']} chunks, {rep['files_indexed']} files, "
                f"sync {time.time() - t:.1f} s (full-text index {rep.get('text_index_seconds', 0):.1f} s, "
                f"vector index {rep.get('vector_index_seconds', 0):.1f} s, "
                f"vocabulary {rep.get('vocabulary_words', 0)} words {rep.get('vocabulary_seconds', 0):.1f} s)",
                file=sys.stderr,
            )
            # Warm-up: the first call loads caches (vocabulary, Lance files).
            tools = {t.name: t for t in (await s.list_tools()).tools}
            if "chunks_per_file" in tools["query"].input_schema.get("properties", {}):
                QUERY_ARGS["chunks_per_file"] = 1
            # Replies are cut to a token budget (README § MCP tools): ask for room
            # for all 50 files, as the ranking, not the reply size, is measured.
            sem_args = {}
            if "max_tokens" in tools["query"].input_schema.get("properties", {}):
                QUERY_ARGS["max_tokens"] = 20000
                sem_args["max_tokens"] = 20000
            await call(s, "query", {"query": "warm up", "limit": 5})
            for q in queries:
                sem = await call(s, "semantic_search", {"query": q.query, "collection": "forest", "limit": 50, **sem_args})
                t0 = time.perf_counter()
                hyb = await call(s, "query", {"query": q.query, "limit": 50, **QUERY_ARGS})
                ms = (time.perf_counter() - t0) * 1000
                # Releases before file-level results returned ranked chunks.
                ranked = [f["file"] for f in hyb["files"]] if "files" in hyb else files_in_order(hyb["results"])
                rows.append({
                    "commit": q.commit,
                    "query": q.query,
                    "lang": q.lang,
                    "identifiers": q.identifiers,
                    "english": q.english,
                    "relevant": q.relevant,
                    "bm25": metrics(bm25.rank(q.query), q.relevant),
                    "semantic": metrics(files_in_order(sem["results"]), q.relevant),
                    "query_files": ranked[:10],
                    "query_ms": ms,
                    "server_ms": hyb.get("timings", {}).get("total_ms"),
                    "translated": hyb["plan"].get("translated"),
                    "query_metrics": metrics(ranked, q.relevant),
                })
    return rows


def overlap(ja, en):
    """Mean number of files the top 5 of `query` share between a Japanese
    request and its commit's English subject (the goal was ≥ 4; bench/README.md
    § Retrieval says what two English wordings reach)."""
    by_commit = {r["commit"]: r for r in en}
    pairs = [(r, by_commit[r["commit"]]) for r in ja if r["commit"] in by_commit]
    if not pairs:
        return float("nan")
    return statistics.mean(len(set(j["query_files"][:5]) & set(e["query_files"][:5])) for j, e in pairs)


SUBSETS = (
    ("English, all", lambda r: r["lang"] == "en"),
    ("English, no identifiers", lambda r: r["lang"] == "en" and not r["identifiers"]),
    ("English, identifiers", lambda r: r["lang"] == "en" and r["identifiers"]),
    ("Japanese", lambda r: r["lang"] == "ja"),
)


def summary(rows):
    """The figures `report` publishes (bench/report.py): for each subset of
    SUBSETS that has rows (and the English subjects of the Japanese
    requests' commits), recall@1/5/10 and MRR per method, and `query`'s
    client-side latency p50 / p95 in ms over all requests."""
    ja = {r["commit"] for r in rows if r["lang"] == "ja"}
    subsets = [*SUBSETS, ("the same commits in English", lambda r: r["lang"] == "en" and r["commit"] in ja)]
    out = []
    for name, keep in subsets:
        part = [r for r in rows if keep(r)]
        if not part:
            continue
        methods = {}
        for method, key in (("bm25", "bm25"), ("semantic", "semantic"), ("query", "query_metrics")):
            methods[method] = {k: round(sum(r[key][k] for r in part) / len(part), 3) for k in part[0][key]}
        out.append({"subset": name, "queries": len(part), **methods})
    ms = sorted(r["query_ms"] for r in rows)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))] if ms else None
    return {"subsets": out, "query_ms_p50": round(statistics.median(ms)) if ms else None,
            "query_ms_p95": round(p95) if ms else None}


def table(title, rows):
    if not rows:
        return
    print(f"\n{title}  ({len(rows)} queries)")
    print(f"{'method':<10}" + "".join(f"{'R@' + str(k):>8}" for k in KS) + f"{'MRR':>8}")
    for method, key in (("bm25", "bm25"), ("semantic", "semantic"), ("query", "query_metrics")):
        avg = {k: sum(r[key][k] for r in rows) / len(rows) for k in rows[0][key]}
        print(f"{method:<10}" + "".join(f"{avg['recall@' + str(k)]:>8.3f}" for k in KS) + f"{avg['mrr']:>8.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--before", help="snapshot: the last commit before this date (YYYY-MM-DD)")
    ap.add_argument("--total", type=int, default=200, help="English queries")
    ap.add_argument("--plain", type=int, default=100, help="of which without identifiers, at least")
    ap.add_argument("--ja", type=Path, help="Japanese queries (commit<TAB>query)")
    ap.add_argument("--paraphrases", type=Path,
                    help="English requests phrased as the --ja ones (commit<TAB>query): the overlap's paraphrase baseline")
    ap.add_argument("--json", type=Path, help="write per-query rows here")
    a = ap.parse_args()
    repo = a.repo.resolve()
    snap = sets.snapshot(repo, a.before)
    head = sets.git(repo, "rev-parse", "HEAD").strip()
    if head != snap:
        sys.exit(f"{repo} is at {head[:10]}, the snapshot is {snap[:10]}: `git -C {repo} checkout {snap}` first")
    english = sets.balanced(sets.commit_queries(repo, snap, a.total * 4), a.total, a.plain)
    queries = list(english)
    if a.ja:
        queries += sets.japanese(repo, a.ja, english)
    if a.paraphrases:
        queries += sets.japanese(repo, a.paraphrases, english, lang="en-para")
    if not queries:
        sys.exit(f"{repo}: no commit with a non-test source file that still exists")
    bm25 = BM25(repo)
    rows = asyncio.run(run(repo, queries, bm25))
    print(f"repository: {repo.name} at {snap[:10]}  ({bm25.n} files)")
    en = [r for r in rows if r["lang"] == "en"]
    ja = [r for r in rows if r["lang"] == "ja"]
    table("English, all", en)
    table("English, no identifiers in the subject", [r for r in en if not r["identifiers"]])
    table("English, identifiers in the subject", [r for r in en if r["identifiers"]])
    if ja:
        table("Japanese", ja)
        same = {r["commit"] for r in ja}
        table("The same commits in English", [r for r in en if r["commit"] in same])
        print(f"\nJapanese vs English top 5 (`query`), files in common: {overlap(ja, en):.2f} of 5")
    para = [r for r in rows if r["lang"] == "en-para"]
    if para:
        table("English paraphrases", para)
        print(f"English paraphrase vs English subject top 5, files in common: {overlap(para, en):.2f} of 5"
              " (what rewording alone costs)")
        if ja:
            print(f"Japanese vs its English paraphrase top 5, files in common: {overlap(ja, para):.2f} of 5"
                  " (what the language costs)")
    latency = summary(rows)
    if latency["query_ms_p50"] is not None:
        print(f"\nquery latency (client, warm): p50 {latency['query_ms_p50']} ms, p95 {latency['query_ms_p95']} ms")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
