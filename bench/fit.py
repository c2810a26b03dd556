"""Fits the fusion weights of `query` (src/rank/fusion.rs) on development sets.

For each repository the query sets are built as in bench/retrieval.py, the
ranking is run once with `code-intel rank-features` (every candidate file with
its features), and the weights are fitted by coordinate ascent on
mean(recall@10) + mean(MRR) over all queries. Reported: the fitted weights,
their in-sample score, a 5-fold cross-validated score (weights fitted on four
fifths, scored on the fifth), and reciprocal rank fusion (RRF, k = 60) of the
three searches for comparison.

    bench/run.sh fit REPO[:BEFORE[:JA.tsv]] ... [--after] [--out weights.json]
    bench/run.sh fit REPO:AT:bench/sets/NAME-tickets.tsv ... [--out weights.json]

A `*-tickets.tsv` third part asks the task-style requests of that set
(bench/sets.py's `tickets`, English and Japanese; implies `--after`): the
weights are fitted on their `dev` part only and the `frozen` part is
scored with them, never fitted on.

By default the queries are the newest commits up to the snapshot, which the
index contains. With `--after` they are the commits after it (bench/sets.py's
`later_queries`): the script checks the snapshot out, indexes it, and the code
graph and co-change history it ranks with end before every query (a temporal
split; the co-change feature would otherwise see the commit it is asked about).
"""

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

import sets
from bench import BIN, env

FEATURES = ["keyword", "chunk_keyword", "vector", "path", "definition", "identifier", "kind", "support",
            "graph", "cochange", "quoted", "recency", "named", "phrase"]
CLASSES = ["test", "docs", "config", "example", "generated", "vendored", "lock", "l10n"]


def dump(repo: Path, queries, cache: Path, snap=None):
    """Candidate features of every query, cached per repository snapshot.
    With `snap`, the repository is checked out there and indexed first (and
    put back on its branch tip afterwards)."""
    if cache.exists():
        rows = [json.loads(l) for l in cache.read_text().splitlines()]
        if len(rows) == len(queries):
            return rows
    if snap:
        tip = sets.git(repo, "rev-parse", "HEAD").strip()
        sets.git(repo, "checkout", "-q", "--detach", snap)
        try:
            idx = subprocess.run([BIN, "index", str(repo)], capture_output=True, text=True, env=env())
            if idx.returncode != 0:
                sys.exit(idx.stderr)
            return dump(repo, queries, cache)
        finally:
            sets.git(repo, "checkout", "-q", tip)
    lines = "\n".join(json.dumps({"id": i, "query": q.query}) for i, q in enumerate(queries))
    out = subprocess.run(
        [BIN, "rank-features", "--repo", str(repo), "--limit", "50"],
        input=lines, capture_output=True, text=True, env=env(),
    )
    if out.returncode != 0:
        sys.exit(out.stderr)
    cache.write_text(out.stdout)
    return [json.loads(l) for l in out.stdout.splitlines()]


def score_file(w, feats, cls, requested):
    s = sum(w[f] * feats.get(f, 0.0) for f in FEATURES)
    if cls != "source" and cls not in requested:
        s += w.get("prior_" + cls, 0.0)
    return s


def evaluate(w, data):
    """mean R@10 + mean MRR, and the two separately."""
    ranked = []
    for q in data:
        order = sorted(q["cands"], key=lambda c: -score_file(w, c[2], c[1], q["requested"]))
        ranked.append(([c[0] for c in order], q["relevant"]))
    return averages(ranked)


def averages(ranked):
    """(mean R@10 + mean MRR, mean R@10, mean MRR) of (files, relevant) pairs."""
    r10 = mrr = 0.0
    for files, rel in ranked:
        r10 += len(rel & set(files[:10])) / len(rel)
        first = next((i for i, f in enumerate(files) if f in rel), None)
        mrr += 0.0 if first is None else 1.0 / (first + 1)
    n = max(1, len(ranked))
    return (r10 + mrr) / n, r10 / n, mrr / n


def rrf(data, k=60):
    ranked = []
    for q in data:
        total = {c[0]: 0.0 for c in q["cands"]}
        for f in ("keyword", "chunk_keyword", "vector"):
            order = sorted((c for c in q["cands"] if c[2].get(f, 0) > 0), key=lambda c: -c[2][f])
            for i, c in enumerate(order):
                total[c[0]] += 1 / (k + i + 1)
        ranked.append((sorted(total, key=lambda f: -total[f]), q["relevant"]))
    return averages(ranked)


def fit(data, start, rounds=6, off=(), hold=()):
    """Coordinate ascent from `start`; the features in `off` stay at 0,
    those in `hold` at their start weight."""
    w = dict(start)
    w.update({f: 0.0 for f in off})
    best = evaluate(w, data)[0]
    # A feature that never fires in these sets (tickets name no
    # identifiers) keeps its start weight: the data says nothing of it.
    fires = {f for q in data for c in q["cands"] for f, v in c[2].items() if v}
    keys = [f for f in FEATURES if f != "keyword" and f not in off and f not in hold and f in fires]
    keys += ["prior_" + c for c in CLASSES]
    for _ in range(rounds):
        improved = False
        for k in keys:
            base = w[k]
            for cand in sorted({base * m for m in (0, 0.5, 0.75, 1.25, 1.5, 2)} | {base + d for d in (-0.4, -0.2, -0.1, 0.1, 0.2, 0.4)}):
                if not k.startswith("prior_") and cand < 0:
                    continue
                w[k] = round(cand, 3)
                s = evaluate(w, data)[0]
                if s > best + 1e-9:
                    best, base, improved = s, w[k], True
                w[k] = base
        if not improved:
            break
    return w, best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repos", nargs="+", help="REPO[:BEFORE[:JA.tsv]]")
    ap.add_argument("--total", type=int, default=200)
    ap.add_argument("--plain", type=int, default=100)
    ap.add_argument("--after", action="store_true", help="queries after the snapshot (temporal split)")
    ap.add_argument("--ablate", default="", help="comma-separated features to refit without, one at a time")
    ap.add_argument("--start", type=Path, help="weights to start from (a --out file); default: fixed guesses")
    ap.add_argument("--hold", default="",
                    help="comma-separated features kept at their start weight (tickets are written without "
                         "identifiers: `identifier` is held when fitting on them)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    data = []
    for spec in a.repos:
        parts = spec.split(":")
        repo = Path(parts[0]).resolve()
        before = parts[1] if len(parts) > 1 and parts[1] else None
        snap = sets.snapshot(repo, before)
        tickets = len(parts) > 2 and parts[2].endswith("-tickets.tsv")
        after = a.after or tickets
        if tickets:
            snap = sets.git(repo, "rev-list", "-1", f"--before={before}T00:00:00Z", sets.tip(repo)).strip()
            queries = sets.tickets(repo, snap, Path(parts[2]), "all")
        else:
            if a.after:
                english = sets.later_queries(repo, snap, None, a.total)
            else:
                english = sets.balanced(sets.commit_queries(repo, snap, a.total * 4), a.total, a.plain)
            queries = list(english)
            if len(parts) > 2:
                queries += sets.japanese(repo, Path(parts[2]), english)
        tag = "tickets-" if tickets else "after-" if after else ""
        rows = dump(repo, queries, repo / ".code-intel" / f"fit-{tag}{snap[:10]}.jsonl", snap if after else None)
        for q, r in zip(queries, rows):
            data.append({
                "split": q.split or "dev",
                "set": f"{repo.name}-{q.lang}",
                "relevant": set(q.relevant),
                "requested": set(r["requested"]),
                "cands": [(c[0], c[1], c[2]) for c in r["candidates"]],
            })
        print(f"{repo.name}: {len(queries)} queries", file=sys.stderr)
    start = {f: 1.0 for f in FEATURES}
    start.update({"chunk_keyword": 0.5, "vector": 0.6, "path": 0.4, "definition": 0.3,
                  "identifier": 0.5, "kind": 0.2, "support": 0.1})
    start.update({"prior_" + c: -0.5 for c in CLASSES})
    if a.start:
        start.update(json.loads(a.start.read_text()))
    frozen = [d for d in data if d["split"] == "frozen"]
    data = [d for d in data if d["split"] != "frozen"]
    hold = tuple(f for f in a.hold.split(",") if f)
    w, best = fit(data, start, hold=hold)
    print("fitted:", json.dumps(w))
    groups = [("all", data)] + sorted({d["set"]: [x for x in data if x["set"] == d["set"]] for d in data}.items())
    if frozen:
        groups += [("frozen", frozen)] + sorted(
            {"frozen " + d["set"]: [x for x in frozen if x["set"] == d["set"]] for d in frozen}.items())
    for name, subset in groups:
        s, r10, mrr = evaluate(w, subset)
        _, rr10, rmrr = rrf(subset)
        _, sr10, smrr = evaluate(start, subset)
        print(f"  {name:<22} fitted R@10 {r10:.3f} MRR {mrr:.3f} | start R@10 {sr10:.3f} MRR {smrr:.3f} | RRF R@10 {rr10:.3f} MRR {rmrr:.3f}")
    sets_of = sorted({d["set"] for d in data})
    for feature in [f for f in a.ablate.split(",") if f]:
        wa, _ = fit(data, start, off=(feature,), hold=hold)
        cells = []
        for name in ["all"] + sets_of:
            subset = data if name == "all" else [x for x in data if x["set"] == name]
            _, r10, mrr = evaluate(wa, subset)
            cells.append(f"{name} R@10 {r10:.3f} MRR {mrr:.3f}")
        print(f"  without {feature:<14} " + " | ".join(cells))
    random.seed(7)
    idx = list(range(len(data)))
    random.shuffle(idx)
    folds = [idx[i::5] for i in range(5)]
    cv_r10 = cv_mrr = 0.0
    for f in folds:
        held = set(f)
        train = [d for i, d in enumerate(data) if i not in held]
        test = [data[i] for i in f]
        wf, _ = fit(train, start, hold=hold)
        _, r10, mrr = evaluate(wf, test)
        cv_r10 += r10 * len(test)
        cv_mrr += mrr * len(test)
    print(f"5-fold CV: R@10 {cv_r10 / len(data):.3f} MRR {cv_mrr / len(data):.3f}")
    if a.out:
        a.out.write_text(json.dumps(w, indent=1))


if __name__ == "__main__":
    main()
