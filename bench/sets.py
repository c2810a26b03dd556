"""Query sets for the retrieval benchmark, built from a repository's git history.

A query is a commit subject (cleaned of `[13.x]` prefixes, `(#123)` PR
numbers and conventional-commit tags); its relevant files are the non-test
source files the commit changed that still exist at the snapshot the index is
built from (file-level localisation as in SWE-bench localisation studies).
Commits that are maintenance (StyleCI, changelog, version bumps, facade
docblocks, "Update X.php"), that touch more than `MAX_RELEVANT` source files
or whose subject has fewer than three words are left out.

Task-style requests (`tickets`) are ours too: `bench/sets/<name>-tickets.tsv`
holds `commit<TAB>split<TAB>lang<TAB>request` lines written from the diffs
(bench/README.md § Change sets).

Japanese queries are ours: `bench/sets/<name>-ja.tsv` holds `commit<TAB>query`
lines written by hand for commits of the English set; the English side of the
comparison is the same commit's subject. Nothing from the benchmarked
repositories is stored here: subjects and files are read from their history at
run time.
"""

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_EXT = {
    "py", "pyi", "php", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "css", "scss",
    "html", "htm", "vue", "go", "java", "rs", "rb", "kt", "swift", "c", "h", "cc", "cpp",
}
# Tests, type tests (laravel's types/), fixtures and benchmarks are not where a
# change to behaviour is made; docs and examples have their own extensions or
# directories. Published and built assets (`public/vendor/`, `dist/`, `.min.js`)
# are regenerated, not edited.
NOT_SOURCE = re.compile(
    r"(^|/)(tests?|testing|spec|specs|__tests__|fixtures?|types|benchmarks?|docs?|examples?|stubs?/tests?)(/|$)"
    r"|(^|/)(vendor|node_modules|dist)/|^public/(build|css|js)/|\.min\.[a-z]+$"
    r"|(_test|Test|\.test|\.spec|_spec)\.[a-z]+$|(^|/)test_[^/]+\.py$|(^|/)conftest\.py$"
)
MAINTENANCE = re.compile(
    r"^(update (the )?(changelog|facade docblocks|version|dependencies|readme)|apply fixes from styleci"
    r"|wip|formatting|format|cs|typo|revert\b|merge\b|port feature|update comment|bump\b|release\b"
    r"|update [\w./-]+\.\w+$|changes?$|fix tests?$|tests?$|cleanup$|clean up$"
    r"|v?\d+\.\d+(\.\d+)?\b|version \d|ran composer|composer cs|lint\b|upgrade .*formatter)",
    re.I,
)
MAX_RELEVANT = 10

IDENTIFIER = re.compile(
    r"`[^`]+`"  # backticks
    r"|\w+(::|->)\w*"  # Class::method, $a->b
    r"|\b\w+\(\)"  # call()
    r"|\$\w+"  # $variable
    r"|\b\w+\\\w+"  # Ns\Class
    r"|\b[A-Za-z]+_[A-Za-z0-9_]+\b"  # snake_case
    r"|\b[a-z]+[A-Z]\w*"  # camelCase
    r"|\b[A-Z][a-z0-9]+[A-Z]\w*"  # PascalCase with two words
    r"|\b\w+\.\w+\(?"  # dotted.name
)


# Test files, as `tests` counts them: a test directory or a test file name.
TEST = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs)/|(_test|Test|\.test|\.spec|_spec)\.[a-z]+$|(^|/)test_[^/]+\.py$"
)


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def clean_subject(subject: str) -> str:
    s = re.sub(r"^\s*(\[[^\]]*\]\s*)+", "", subject)  # [13.x] [Feature]
    s = re.sub(r"\s*\((#\d+(, ?)?)+\)\s*$", "", s)  # (#60326)
    s = re.sub(r"\s*\(#\d+\)", "", s)
    s = re.sub(r"^(feat|fix|chore|refactor|perf|docs|test|tests)(\([^)]*\))?!?:\s*", "", s, flags=re.I)
    s = re.sub(r"^\d+\.x\s+", "", s)  # "13.x ensure …"
    return s.strip()


def has_identifier(query: str) -> bool:
    return bool(IDENTIFIER.search(query))


def is_source(path: str) -> bool:
    return path.rsplit(".", 1)[-1] in SOURCE_EXT and not NOT_SOURCE.search(path)


def is_test(path: str) -> bool:
    return path.rsplit(".", 1)[-1] in SOURCE_EXT and bool(TEST.search(path)) and "/fixtures/" not in path


@dataclass
class Query:
    commit: str
    query: str
    relevant: list
    date: str
    lang: str = "en"
    identifiers: bool = False
    english: str = ""  # for Japanese queries: the commit's English subject
    tags: list = field(default_factory=list)
    tests: list = field(default_factory=list)  # test files it changed that exist at the snapshot
    split: str = ""  # tickets: dev or frozen


def tip(repo):
    """The newest commit of the clone's default branch (`origin/HEAD`), or
    HEAD when it has no remote; HEAD itself may be a checked-out snapshot."""
    try:
        return git(repo, "rev-parse", "--verify", "-q", "origin/HEAD").strip()
    except subprocess.CalledProcessError:
        return git(repo, "rev-parse", "HEAD").strip()


def snapshot(repo, before=None, rev="HEAD"):
    """The commit the index is built from: `rev`, or the last commit of
    `rev`'s history before `before` (an ISO date; history after it is kept
    aside)."""
    if before:
        return git(repo, "rev-list", "-1", f"--before={before}T00:00:00Z", rev).strip()
    return git(repo, "rev-parse", rev).strip()


def _queries(repo, snap, revs, limit, *extra):
    """Queries from `git log REVS` (`extra`: more log options), in log order,
    at most `limit`, with their relevant files as they exist at `snap`."""
    present = set(git(repo, "ls-tree", "-r", "--name-only", snap).splitlines())
    log = git(repo, "log", "--no-merges", *extra, "--format=%x00%H%x01%cI%x01%s", "--name-only", revs)
    out, seen = [], set()
    for block in log.split("\x00")[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        sha, date, subject = lines[0].split("\x01", 2)
        q = clean_subject(subject)
        if MAINTENANCE.search(q) or len(re.findall(r"\w+", q)) < 3 or q.lower() in seen:
            continue
        rel = sorted(f for f in lines[1:] if f in present and is_source(f))
        if not rel or len(rel) > MAX_RELEVANT:
            continue
        seen.add(q.lower())
        out.append(Query(sha, q, rel, date, identifiers=has_identifier(q)))
        if len(out) >= limit:
            break
    return out


def commit_queries(repo, snap, max_commits):
    """English queries from the newest commits reachable from `snap`."""
    return _queries(repo, snap, snap, max_commits)


def later_queries(repo, snap, until, limit):
    """Queries from commits after `snap` up to `until` (oldest first), with
    their relevant files as they exist at the snapshot."""
    end = git(repo, "rev-list", "-1", f"--before={until}T00:00:00Z", tip(repo)).strip() if until else tip(repo)
    return _queries(repo, snap, f"{snap}..{end}", limit, "--reverse")


def balanced(queries, total, min_plain):
    """Newest first, at least `min_plain` queries without identifiers (when the
    history has them) within `total`."""
    plain = [q for q in queries if not q.identifiers]
    ident = [q for q in queries if q.identifiers]
    take_plain = plain[: max(min_plain, total - len(ident))]
    take_ident = ident[: total - len(take_plain)]
    chosen = set(id(q) for q in take_plain + take_ident)
    return [q for q in queries if id(q) in chosen]


def japanese(repo, path: Path, english, lang="ja"):
    """Japanese queries of `path` (commit<TAB>query), matched to the English set
    (or, for commits outside it, to the commit read from history); `lang`
    labels the rows (`en-para` for English paraphrases read the same way)."""
    by_commit = {q.commit: q for q in english}
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        sha, text = line.split("\t", 1)
        full = next((c for c in by_commit if c.startswith(sha)), None)
        if full is None:
            continue
        en = by_commit[full]
        out.append(Query(full, text.strip(), en.relevant, en.date, lang=lang, english=en.query))
    return out


def tickets(repo, snap, path: Path, split="dev"):
    """Task-style requests of `path` (`commit<TAB>split<TAB>lang<TAB>request`,
    bench/sets/*-tickets.tsv) for the commits of `split` (dev, frozen or
    all), each with the commit's relevant files (source files it changed
    that exist at `snap`) and the test files it changed that exist there."""
    present = set(git(repo, "ls-tree", "-r", "--name-only", snap).splitlines())
    out, files = [], {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        sha, part, lang, text = line.split("\t", 3)
        if split != "all" and part != split:
            continue
        if sha not in files:
            # A pull request's merge commit: its change is the diff against
            # the first parent (without -m, `git show` lists only the files
            # both parents changed).
            changed = git(repo, "show", "-m", "--first-parent", "--no-renames", "--format=%cI",
                          "--name-only", sha).split("\n")
            files[sha] = (changed[0].strip(), [f for f in changed[1:] if f.strip() and f in present])
        date, changed = files[sha]
        rel = sorted(f for f in changed if is_source(f))
        if not rel:
            continue
        tests = sorted(f for f in changed if is_test(f))
        out.append(Query(sha, text.strip(), rel, date, lang=lang, identifiers=has_identifier(text),
                         tests=tests, split=part))
    return out
