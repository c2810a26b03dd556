#!/usr/bin/env python3
"""Interactive work during another repository's bulk index: how long a
small sync (20 changed chunks) takes on the shared embedding service alone,
and while `code-intel index` of another, large repository runs on the same
service (embed/passages.rs: shortest remaining request first).

    bench/run.sh contention [--bulk-files 3000] [--small-files 20] [--base-bin BIN] [--json OUT]

Both repositories are generated Python files of one chunk each, in a
temporary directory. Prints, per binary: the small sync's wall time alone,
during the bulk index, their ratio, and the wait the sync reported ("note:
waited … for the shared embedding service"). With `--base-bin` the same
run is made with another build first (an A/B in one run: the machine's
load is the same for both).
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import BIN, env  # noqa: E402  (the model and ONNX Runtime of the test assets)


def write_files(repo: Path, n: int, version: int):
    (repo / "pkg").mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (repo / "pkg" / f"mod_{i:04}.py").write_text(
            f"def handler_{i}_{version}(request):\n"
            f"    \"\"\"Handles request {i}, revision {version}.\"\"\"\n"
            f"    return request.get('item_{i}_{version}')\n")


def small_sync(binary: str, repo: Path, files: int, version: int, run_env: dict):
    write_files(repo, files, version)
    t0 = time.perf_counter()
    p = subprocess.run([binary, "index", str(repo)], capture_output=True, text=True, env=run_env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"index failed: {p.stderr[-2000:]}")
    m = re.search(r"waited ([0-9.]+) s for the shared embedding service", p.stdout + p.stderr)
    return wall, m.group(1) + " s" if m else "< 1 s, not reported"


def measure(binary: str, a, tmp: Path):
    run_env = env()
    # A service of this binary alone (the socket's name hashes the binary's path).
    run_env["CODE_INTEL_EMBED_SERVICE_IDLE"] = "5"
    small, bulk = tmp / f"small-{Path(binary).parent.name}", tmp / f"bulk-{Path(binary).parent.name}"
    write_files(bulk, a.bulk_files, 0)
    small_sync(binary, small, a.small_files, 0, run_env)  # first index, loads the model
    alone = [small_sync(binary, small, a.small_files, v, run_env) for v in (1, 2)]
    proc = subprocess.Popen([binary, "index", str(bulk)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=run_env, start_new_session=True)
    time.sleep(a.bulk_head_start)
    contended = [small_sync(binary, small, a.small_files, v, run_env) for v in (3, 4)]
    still_bulk = proc.poll() is None
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    alone_wall = min(w for w, _ in alone)
    worst = max(contended)
    print(f"{binary}: small sync of {a.small_files} chunks alone {alone_wall:.2f} s; "
          f"during the bulk index {', '.join(f'{w:.2f} s (waited {x})' for w, x in contended)}; "
          f"ratio {worst[0] / alone_wall:.1f}"
          + ("" if still_bulk else "  [the bulk index ended before the small syncs: raise --bulk-files]"))
    time.sleep(6)  # let this binary's service exit before the next one runs
    return {"binary": binary, "alone_s": round(alone_wall, 2),
            "during_s": [round(w, 2) for w, _ in contended], "waited": [x for _, x in contended],
            "ratio": round(worst[0] / alone_wall, 1), "bulk_still_running": still_bulk}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bulk-files", type=int, default=3000)
    ap.add_argument("--small-files", type=int, default=20)
    ap.add_argument("--bulk-head-start", type=float, default=20.0,
                    help="seconds the bulk index runs before the small syncs")
    ap.add_argument("--base-bin")
    ap.add_argument("--json", type=Path, help="write a row per binary here (bench/report.py)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(binary, a, Path(tmp)) for binary in [b for b in (a.base_bin, BIN) if b]]
    if a.json:
        a.json.write_text(json.dumps({"bulk_files": a.bulk_files, "small_files": a.small_files,
                                      "head_start_s": a.bulk_head_start, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
