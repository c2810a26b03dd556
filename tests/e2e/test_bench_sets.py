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
