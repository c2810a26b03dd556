#!/usr/bin/env python3
"""`find_references` against a labelled set of callers, per call shape.

    bench/run.sh references NAME=REPO ... [--base-bin BIN] [--json OUT]

NAME is a set of bench/sets/references.json (bookstack, koel, framework);
REPO a clone checked out at the set's commit (a warning is printed when it
is not). For every labelled method `Class::method` the server answers
`find_references` (this build: CODE_INTEL_BIN or the debug build; with
--base-bin, that build too, in the same run); its references in PHP files
outside vendor/, tests/ and lang/ (and outside the set's `within` folder)
are compared with the labelled callers, which were found with
`rg -w NAME --type php` and checked by hand.

The peer measured in the same run is what an agent without the tool does:
`rg` for the member and static call shapes `->name(` / `::name(` plus the
route-action string `'name'` in route files, every hit taken as a caller.

Prints, per build and for the peer: recall per labelled shape, precision per
resolution the server reported, overall recall / precision (micro averages
over callers and reported references), and each build's client-side
`find_references` round trip (p50 and max, ms; the first call of a server
includes its cold caches).
"""

import argparse
import asyncio
import collections
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench import BIN, env

SETS = Path(__file__).resolve().parent / "sets" / "references.json"
LATENCY = collections.defaultdict(list)
EXCLUDED = re.compile(r"(^|/)(vendor|tests|lang)/")


def counted(path: str, within: str) -> bool:
    return path.endswith(".php") and not EXCLUDED.search(path) and path.startswith(within)


def server_env():
    e = env()
    # References need no model: a missing one keeps the start-up sync to
    # its lexical pass and leaves the CPU to the measured calls.
    e["CODE_INTEL_MODEL_DIR"] = "/nonexistent-model-for-references-bench"
    return e


async def tool_references(binary, repo: Path, methods):
    params = StdioServerParameters(command=binary, args=["serve", "--repo", str(repo.resolve())], env=server_env())
    out = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        for m in methods:
            t0 = time.perf_counter()
            r = await s.call_tool(
                "find_references", {"symbol": m["symbol"], "max_results": 2000, "max_tokens": 20000}
            )
            LATENCY[binary].append((time.perf_counter() - t0) * 1000)
            if r.is_error:
                raise RuntimeError(f"{m['symbol']}: {r.content[0].text[:300]}")
            refs = (r.structured_content or {}).get("references", [])
            out[m["symbol"]] = {f"{x['file']}:{x['line']}": x.get("resolution", "?") for x in refs}
    return out


def peer_references(repo: Path, methods):
    out = {}
    for m in methods:
        name = re.split(r"::|\.", m["symbol"])[-1]
        pattern = rf"(->|::){re.escape(name)}\(|'{re.escape(name)}'"
        hits = subprocess.run(
            ["rg", "-n", "--no-heading", "--type", "php", pattern, "."],
            cwd=repo, capture_output=True, text=True,
        ).stdout.splitlines()
        found = {}
        for h in hits:
            path, line, text = h.split(":", 2)
            path = path.removeprefix("./")
            if f"'{name}'" in text and "->" not in text and "::" not in text.replace("::class", ""):
                if not path.startswith("routes/"):
                    continue
            if re.search(rf"function\s+{re.escape(name)}\b", text):
                continue
            found[f"{path}:{line}"] = "rg"
        out[m["symbol"]] = found
    return out


def score(label, sets, answers):
    shape_hits = collections.Counter()
    shape_total = collections.Counter()
    res_tp = collections.Counter()
    res_all = collections.Counter()
    misses, wrong = [], []
    for name, s in sets:
        within = s.get("within", "")
        for m in s["methods"]:
            truth = {c["at"]: c["shape"] for c in m["callers"]}
            got = {k: v for k, v in answers[name][m["symbol"]].items() if counted(k.rsplit(":", 1)[0], within)}
            for at, shape in truth.items():
                shape_total[shape] += 1
                if at in got:
                    shape_hits[shape] += 1
                else:
                    misses.append(f"{name} {m['symbol']} {at} ({shape})")
            for at, res in got.items():
                res_all[res] += 1
                if at in truth:
                    res_tp[res] += 1
                else:
                    wrong.append(f"{name} {m['symbol']} {at} [{res}]")
    recall = sum(shape_hits.values()) / max(1, sum(shape_total.values()))
    precision = sum(res_tp.values()) / max(1, sum(res_all.values()))
    print(f"\n## {label}: recall {recall:.3f} ({sum(shape_hits.values())}/{sum(shape_total.values())}), "
          f"precision {precision:.3f} ({sum(res_tp.values())}/{sum(res_all.values())})")
    print("| shape | callers | found | recall |\n|---|---|---|---|")
    for shape in sorted(shape_total):
        print(f"| {shape} | {shape_total[shape]} | {shape_hits[shape]} | {shape_hits[shape] / shape_total[shape]:.2f} |")
    print("| resolution | reported | right | precision |\n|---|---|---|---|")
    for res in sorted(res_all):
        print(f"| {res} | {res_all[res]} | {res_tp[res]} | {res_tp[res] / res_all[res]:.2f} |")
    for line in misses[:40]:
        print(f"  missed: {line}")
    for line in wrong[:40]:
        print(f"  wrong:  {line}")
    return recall, precision


async def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repos", nargs="+", help="NAME=REPO")
    ap.add_argument("--base-bin")
    ap.add_argument("--json", type=Path, help="write each build's and the peer's figures here (bench/report.py)")
    args = ap.parse_args()
    data = json.loads(SETS.read_text())["sets"]
    chosen = []
    for spec in args.repos:
        name, _, path = spec.partition("=")
        if name not in data:
            sys.exit(f"unknown set {name!r}: {', '.join(data)}")
        repo = Path(path)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout
        if not head.startswith(data[name]["commit"]):
            print(f"warning: {repo} is at {head[:10]}, the set {name} was labelled at {data[name]['commit']}")
        chosen.append((name, data[name], repo))
    sets = [(name, s) for name, s, _ in chosen]
    builds = [("this build", BIN)] + ([("base build", args.base_bin)] if args.base_bin else [])
    methods = sum(len(s["methods"]) for _, s in sets)
    print(f"{methods} methods, {sum(len(m['callers']) for _, s in sets for m in s['methods'])} labelled callers")
    results = {}
    for label, binary in builds:
        answers = {name: await tool_references(binary, repo, s["methods"]) for name, s, repo in chosen}
        results[label] = score(label, sets, answers)
    peer = {name: peer_references(repo, s["methods"]) for name, s, repo in chosen}
    results["peer (rg call shapes)"] = score("peer (rg call shapes)", sets, peer)
    print("\n| build | recall | precision | p50 ms | max ms |\n|---|---|---|---|---|")
    for label, (r, p) in results.items():
        ms = LATENCY.get(dict(builds).get(label), [])
        lat = f"{statistics.median(ms):.0f} | {max(ms):.0f}" if ms else "- | -"
        print(f"| {label} | {r:.3f} | {p:.3f} | {lat} |")
    if args.json:
        callers = sum(len(m["callers"]) for _, s in sets for m in s["methods"])
        args.json.write_text(json.dumps({
            "sets": {name: s["commit"] for name, s in sets},
            "methods": methods,
            "callers": callers,
            "rows": [{"build": label, "recall": round(r, 3), "precision": round(p, 3),
                      "p50_ms": round(statistics.median(LATENCY[dict(builds)[label]]))
                      if LATENCY.get(dict(builds).get(label)) else None}
                     for label, (r, p) in results.items()],
        }, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
