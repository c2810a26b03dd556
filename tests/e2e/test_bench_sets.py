"""Frozen parts stay frozen: each labelled set's frozen part (bench/frozen.py)
hashes to the SHA-256 that bench/README.md § Frozen parts records."""

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_frozen_parts_hash_to_what_the_bench_readme_records():
    spec = importlib.util.spec_from_file_location("frozen", ROOT / "bench" / "frozen.py")
    frozen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(frozen)
    readme = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    recorded = dict(re.findall(r"^\| `([^`]+)` \|[^|]*\| \d+ \| `([0-9a-f]{64})` \|$", readme, re.M))
    parts = frozen.parts()
    assert len(parts) >= 4 and all(rows for _, _, rows in parts), [(n, len(r)) for n, _, r in parts]
    for name, _, rows in parts:
        assert recorded.get(name) == frozen.digest(rows), f"{name}: frozen part changed or not recorded"
    # A changed frozen row changes its digest.
    name, _, rows = parts[0]
    assert frozen.digest(rows[:-1] + [rows[-1] + " "]) != recorded[name]


def test_glossary_source_column_follows_its_rule():
    """Each glossary line's source column is what bench/glossary.py's rule
    gives (the Japanese sets whose requests contain its term, or `general`),
    and the check catches a line relabelled `general`."""
    spec = importlib.util.spec_from_file_location("glossary", ROOT / "bench" / "glossary.py")
    glossary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(glossary)
    assert glossary.mismatches() == []
    lines = glossary.GLOSSARY.read_text(encoding="utf-8").splitlines()
    k = next(i for i, l in enumerate(lines) if l.endswith("\tlaravel-ja"))
    term = lines[k].split("\t")[0]
    lines[k] = lines[k].rsplit("\t", 1)[0] + "\tgeneral"
    assert [m[1] for m in glossary.mismatches(lines)] == [term]


def test_generated_tables_match_their_result_files():
    """Every `<!-- report:NAME -->` table in README.md and bench/README.md is
    what bench/report.py makes from bench/results/NAME.json, and a figure
    changed in a result file is caught."""
    import json

    spec = importlib.util.spec_from_file_location("report", ROOT / "bench" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    assert report.differences() == []
    doc = report.load("changeset")
    assert {r["split"] for r in doc["rows"]} == {"dev", "frozen"}
    before = report.table_changeset()
    doc["rows"][0]["recall10"] = (doc["rows"][0]["recall10"] or 0) + 0.5
    report.load = lambda name: doc if name == "changeset" else json.loads(
        (report.RESULTS / f"{name}.json").read_text())
    assert report.table_changeset() != before
    assert "changeset" in report.differences()


def test_the_trial_table_is_counted_from_its_committed_logs():
    """bench/results/trial.json is what the arms' committed logs count to
    (bench/trial.py's `figures`), so the honest-trial table cannot drift
    from the calls the helper sessions made."""
    spec = importlib.util.spec_from_file_location("report", ROOT / "bench" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    counted = report.collect_trial()
    assert [r["logs"] for r in counted] == [d for d, _, _ in report.TRIAL_ARMS]
    # Every task of every arm reached READY (4 tickets an arm, 6 from `six`).
    assert all(len(r["tasks"]) in (4, 6) and r["reached"] == len(r["tasks"]) for r in counted)
    assert counted == report.load("trial")["rows"]
