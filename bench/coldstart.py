#!/usr/bin/env python3
"""First contact: how good `query` is while `serve` indexes a cold copy.

    bench/run.sh coldstart REPO [--at 10,30,60,120,300] [--queries 20]
                               [--until YYYY-MM-DD] [--base-bin BIN] [--json OUT]

REPO is a clone checked out at a snapshot; its queries are the commits
after it (sets.later_queries: the temporal split, so no query is about code
the index holds already). For each build (this one, and BIN when given) a
fresh copy of REPO without `.code-intel/` is served with its background
sync, and at each mark (seconds after `initialize`) every query is asked
(`query`, 10 files): recall@10 and MRR, the index line the reply starts
with, and the server's peak RSS so far. The BM25 baseline over `rg -c`
counts (bench/retrieval.py) is computed once in the same run: it answers
from the first second, which is what a cold `query` is measured against.
The builds run one after the other, never at once (2-core machines).
"""

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import sets
from bench import BIN, env
from retrieval import BM25, metrics


def peak_rss_mib(marker: str) -> float:
    """VmHWM of the `serve` process whose command line names `marker`, plus
    that of the embedding service it uses (`embed-service`, shared by the
    processes of one configuration: the bench runs one server at a time, so
    it is this server's): the servers and the service counted together."""
    total = 0.0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if ("serve" in cmd and marker in cmd) or "embed-service --socket" in cmd:
                for line in (proc / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return total


async def ask(s, query):
    r = await s.call_tool("query", {"query": query, "limit": 10, "max_tokens": 20000})
    text = r.content[0].text if r.content else ""
    if r.is_error:
        return [], text.splitlines()[0] if text else "error"
    files = [f["file"] for f in r.structured_content.get("files", [])]
    return files, r.structured_content.get("index", {}).get("message", "")


async def run(binary, repo, queries, marks):
    work = Path(tempfile.mkdtemp(prefix="coldstart-"))
    copy = work / repo.name
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".code-intel"))
    params = StdioServerParameters(command=binary, args=["serve", "--repo", str(copy)], env=env())
    rows = []
    try:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                start = time.monotonic()
                for mark in marks:
                    await asyncio.sleep(max(0.0, mark - (time.monotonic() - start)))
                    at = time.monotonic() - start
                    ms, line = [], ""
                    for q in queries:
                        files, line = await ask(s, q.query)
                        ms.append(metrics(files, q.relevant))
                    rows.append({
                        "mark": mark,
                        "at": at,
                        "took": time.monotonic() - start - at,
                        "recall@10": statistics.mean(m["recall@10"] for m in ms),
                        "mrr": statistics.mean(m["mrr"] for m in ms),
                        "rss": peak_rss_mib(str(copy)),
                        "index": line,
                    })
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--at", default="10,30,60,120,300")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--until")
    ap.add_argument("--base-bin")
    ap.add_argument("--json", type=Path, help="write the rows here (bench/report.py)")
    args = ap.parse_args()
    repo = args.repo.resolve()
    marks = [float(x) for x in args.at.split(",")]
    queries = sets.later_queries(repo, sets.snapshot(repo), args.until, args.queries)
    bm25 = BM25(repo)
    base = [metrics(bm25.rank(q.query), q.relevant) for q in queries]
    print(f"{repo.name}: {len(queries)} later commits; BM25 baseline recall@10 "
          f"{statistics.mean(m['recall@10'] for m in base):.3f}, MRR {statistics.mean(m['mrr'] for m in base):.3f}")
    builds = [("this", BIN)] + ([("base", args.base_bin)] if args.base_bin else [])
    out = {"repo": repo.name, "commit": sets.snapshot(repo)[:10], "queries": len(queries),
           "bm25": {"recall@10": statistics.mean(m["recall@10"] for m in base),
                    "mrr": statistics.mean(m["mrr"] for m in base)},
           "builds": []}
    for name, binary in builds:
        rows = asyncio.run(run(binary, repo, queries, marks))
        out["builds"].append({"name": name, "rows": rows})
        print(f"\n{name} ({binary})")
        print(f"  {'t (s)':>6} {'asked':>6} {'R@10':>6} {'MRR':>6} {'RSS MiB':>8}  index line")
        for r in rows:
            print(f"  {r['mark']:6.0f} {r['at']:6.0f} {r['recall@10']:6.3f} {r['mrr']:6.3f} {r['rss']:8.0f}  {r['index'][:110]}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
