#!/usr/bin/env python3
"""Kill-9 consistency (bench/README.md): `code-intel index` killed with SIGKILL at
random points, then run to completion; counts the rounds after which the
index is consistent (every file indexed once, `forest` rows = chunks in
sync_state, no chunk lost or duplicated, one `files` row per file: the
lexical pass's rows of files a kill left unembedded are replaced or pruned).

    bench/run.sh kill [--rounds 20] [--files 150] [--seed 7]

Works on a generated repository of Python files (one chunk each) in a
temporary directory; a third of the rounds use `--force`, and between
rounds a few files are changed, added or deleted, so kills land in
embedding, in writes, in deletes and in index builds.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import BIN, env  # noqa: E402  (the model and ONNX Runtime of the test assets)


def write(repo: Path, i: int, version: int = 0):
    (repo / "pkg" / f"mod_{i:04}.py").write_text(
        f"def handler_{i}_{version}(request):\n    return request.get('item_{i}_{version}')\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--files", type=int, default=150)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        (repo / "pkg").mkdir(parents=True)
        files = set(range(a.files))
        for i in files:
            write(repo, i)
        consistent, killed_mid = 0, 0
        for r in range(a.rounds):
            force = r % 3 == 2
            args = [BIN, "index", str(repo)] + (["--force"] if force else [])
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env())
            delay = rng.uniform(0.2, 8.0)
            time.sleep(delay)
            if proc.poll() is None:
                proc.kill()
                killed_mid += 1
            proc.wait()
            # Change the tree before the next run.
            for i in rng.sample(sorted(files), 3):
                write(repo, i, version=r + 1)
            gone = rng.choice(sorted(files))
            (repo / "pkg" / f"mod_{gone:04}.py").unlink()
            files.discard(gone)
            new = max(files) + 1
            write(repo, new)
            files.add(new)
            done = subprocess.run([BIN, "index", str(repo), "--json"], capture_output=True, text=True, env=env())
            status = json.loads(subprocess.run([BIN, "status", "--repo", str(repo), "--json"], env=env(),
                                               capture_output=True, text=True).stdout)
            ok = (done.returncode == 0 and status["files_indexed"] == len(files)
                  and status["forest_rows"] == status["chunks"] == len(files)
                  and status["file_rows"] == len(files))
            consistent += ok
            print(f"round {r + 1:2d}: killed after {delay:4.1f} s{' (--force)' if force else ''}"
                  f"{'' if proc.returncode else ' (had finished)'} → files {status['files_indexed']}/{len(files)}, "
                  f"rows {status['forest_rows']}, file rows {status['file_rows']}, chunks {status['chunks']}: {'consistent' if ok else 'INCONSISTENT'}",
                  flush=True)
        print(f"\n{consistent}/{a.rounds} rounds consistent ({killed_mid} killed mid-run)")
        sys.exit(0 if consistent == a.rounds else 1)


if __name__ == "__main__":
    main()
