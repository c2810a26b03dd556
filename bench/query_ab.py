#!/usr/bin/env python3
"""`query` latency, this build against another, in the same run.

    bench/run.sh query-ab REPO BASE_REPO --base-bin BIN [--queries N] [--rounds R]

REPO and BASE_REPO hold the same files (BASE_REPO a copy of REPO), each with
the index its build made (`code-intel index`): this build (CODE_INTEL_BIN or
the debug build) serves REPO, BIN serves BASE_REPO. Both servers run at
once; every request goes to one, then to the other (the order alternating),
so the machine's noise falls on both alike. The requests are N English
commit subjects from REPO's history plus the Japanese requests of
bench/sets/laravel-ja.tsv when REPO is laravel/framework; each is asked R
times after one warm-up call per server. Prints each build's p50 / p90 of
the client-side round trip (ms) and the ratio this/base of the p50s.
"""

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench import BIN, env
from sets import commit_queries, snapshot

JA = Path(__file__).resolve().parent / "sets" / "laravel-ja.tsv"


def requests(repo: Path, n: int):
    english = [q.query for q in commit_queries(repo, snapshot(repo), n)]
    japanese = []
    if (repo / "src" / "Illuminate").is_dir():
        for line in JA.read_text().splitlines():
            if line and not line.startswith("#"):
                japanese.append(line.split("\t", 1)[1])
    return english + japanese[: n // 2]


async def ask(session, query):
    t0 = time.perf_counter()
    r = await session.call_tool("query", {"query": query})
    ms = (time.perf_counter() - t0) * 1000
    if r.is_error:
        raise RuntimeError(f"query {query!r}: {r.content[0].text[:300]}")
    return ms


async def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("base_repo", type=Path)
    ap.add_argument("--base-bin", required=True)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    queries = requests(args.repo, args.queries)
    builds = [("this", BIN, args.repo), ("base", args.base_bin, args.base_repo)]
    times = {name: [] for name, _, _ in builds}
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        for name, binary, repo in builds:
            params = StdioServerParameters(command=binary, args=["serve", "--repo", str(repo.resolve())], env=env())
            read, write = await stack.enter_async_context(stdio_client(params))
            s = await stack.enter_async_context(ClientSession(read, write))
            await s.initialize()
            sessions[name] = s
        # Both indexes are complete (`code-intel index` made them), so each
        # server's start-up sync only stats the files; let it end first.
        await asyncio.sleep(15)
        for s in sessions.values():
            await ask(s, "warm up the caches")
        for r in range(args.rounds):
            for i, q in enumerate(queries):
                order = list(sessions.items())
                if (r + i) % 2:
                    order.reverse()
                for name, s in order:
                    times[name].append(await ask(s, q))
    print(f"{len(queries)} requests x {args.rounds} rounds on {args.repo}")
    p50 = {}
    for name, ts in times.items():
        ts.sort()
        p50[name] = statistics.median(ts)
        p90 = ts[int(0.9 * (len(ts) - 1))]
        print(f"  {name:5} p50 {p50[name]:8.1f} ms   p90 {p90:8.1f} ms   ({len(ts)} calls)")
    print(f"  ratio this/base p50: {p50['this'] / p50['base']:.2f}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    asyncio.run(main())
