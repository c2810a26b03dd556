"""File-localisation benchmark from git history (SWE-bench-style).

For each non-merge commit of REPO: the query is the commit subject, the
relevant files are the non-test source files it changed that still exist at
HEAD. Each method ranks files for the query; we print file-level recall@1/5/10
and MRR for:

- rg: keyword baseline — files ranked by how many distinct subject words
  (stopwords dropped, case-insensitive, ripgrep CLI) they contain, then by
  match count;
- semantic: `semantic_search` (forest, 50 chunks), files in order of their
  best chunk;
- query: the `query` tool (hybrid ranking, 50 chunks), same file order.

The index is built (or synced) on REPO at HEAD first, so old subjects are
answered from today's code: files a commit touched that were later deleted
are dropped from its relevant set, and commits left with none are skipped.

    bench/run.sh retrieval REPO [--max-commits N] [--json OUT]
"""

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench import BIN, env

SOURCE_EXT = {
    "py", "pyi", "php", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "css", "scss",
    "html", "htm", "vue", "go", "java", "rs", "scm",
}
TEST_PATH = re.compile(r"(^|/)(tests?|spec|__tests__|fixtures?)(/|$)|(_test|Test|\.test|\.spec)\.[a-z]+$")
STOP = set(
    "the and for from with that this into onto when which while where what are was were not "
    "use uses used using add adds added fix fixes fixed make makes made one two each all any "
    "its it's only also now new more less per via out off set get has have had".split()
)
KS = (1, 5, 10)


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def query_set(repo, max_commits):
    """(subject, relevant files) pairs, newest first."""
    head = set(git(repo, "ls-files").splitlines())
    out = []
    log = git(repo, "log", "--no-merges", "--format=%x00%s", "--name-only")
    for block in log.split("\x00")[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        subject, files = lines[0], lines[1:]
        rel = sorted(
            f for f in files
            if f in head and f.rsplit(".", 1)[-1] in SOURCE_EXT and not TEST_PATH.search(f)
        )
        if rel and len(rel) <= 20:
            out.append((subject, rel))
        if len(out) >= max_commits:
            break
    return out


def words(subject):
    return sorted({w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", subject)} - STOP)


def rg_rank(repo, subject):
    """Files by distinct subject words present, then total matches."""
    score = {}
    for w in words(subject):
        r = subprocess.run(
            ["rg", "--no-config", "-i", "-F", "-c", w, "."], cwd=repo, capture_output=True, text=True
        )
        for line in r.stdout.splitlines():
            path, _, n = line.rpartition(":")
            path = path[2:] if path.startswith("./") else path
            d, c = score.get(path, (0, 0))
            score[path] = (d + 1, c + int(n))
    return [p for p, _ in sorted(score.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))]


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
        # Wait for the model, and for the background sync `serve` starts.
        if r.is_error and ("model_loading" in r.content[0].text or "already running" in r.content[0].text):
            await asyncio.sleep(1)
            continue
        if r.is_error:
            raise RuntimeError(f"{tool}: {r.content[0].text}")
        return r.structured_content


async def run(repo, pairs):
    params = StdioServerParameters(command=BIN, args=["serve", "--repo", str(repo)], env=env())
    rows = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            t = time.time()
            sync = await call(s, "sync_index", {})
            print(f"index: {sync['report']['chunks_total']} chunks, sync {time.time() - t:.1f} s", file=sys.stderr)
            for subject, relevant in pairs:
                sem = await call(s, "semantic_search", {"query": subject, "collection": "forest", "limit": 50})
                hyb = await call(s, "query", {"query": subject, "limit": 50})
                rows.append({
                    "query": subject,
                    "relevant": relevant,
                    "rg": metrics(rg_rank(repo, subject), relevant),
                    "semantic": metrics(files_in_order(sem["results"]), relevant),
                    "query": metrics(files_in_order(hyb["results"]), relevant),
                })
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--max-commits", type=int, default=200)
    ap.add_argument("--json", type=Path, help="write per-query rows here")
    a = ap.parse_args()
    pairs = query_set(a.repo, a.max_commits)
    if not pairs:
        sys.exit(f"{a.repo}: no commit with a non-test source file that still exists")
    rows = asyncio.run(run(a.repo.resolve(), pairs))
    print(f"repository: {a.repo}  queries: {len(rows)} (commit subjects; relevant = changed non-test source files)")
    print(f"{'method':<10}" + "".join(f"{'recall@' + str(k):>11}" for k in KS) + f"{'MRR':>8}")
    for method in ("rg", "semantic", "query"):
        avg = {k: sum(r[method][k] for r in rows) / len(rows) for k in rows[0][method]}
        print(f"{method:<10}" + "".join(f"{avg['recall@' + str(k)]:>11.3f}" for k in KS) + f"{avg['mrr']:>8.3f}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
