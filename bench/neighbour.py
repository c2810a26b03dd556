#!/usr/bin/env python3
"""Good-neighbour benchmark (docs/measurements.md, `embedding_nice`): how much a `cargo build` of a
small crate slows down while `code-intel serve` indexes a repository in the
background, with `embedding_nice` 0 (normal priority) and the default 10.

    bench/run.sh neighbour REPO [--rounds 2]

REPO is copied without its `.code-intel/` so `serve` starts a cold index
(pick one whose cold index outlasts a build: filamentphp/filament,
livewire/livewire). The crate is generated in a temporary directory and
depends on `regex` and `serde_json` (built offline from the local cargo
cache). Prints the build's wall time alone and beside each `serve`, and the
slowdown ratio against the alone time measured in the same run.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = os.environ.get("CODE_INTEL_BIN") or str(
    Path(os.environ.get("CARGO_TARGET_DIR", HERE.parent / "target")) / "debug" / "code-intel")

CARGO_TOML = """[package]
name = "neighbour"
version = "0.1.0"
edition = "2021"

[dependencies]
regex = "1"
serde_json = "1"
"""
MAIN_RS = 'fn main() { let r = regex::Regex::new("a+").unwrap(); println!("{}", serde_json::json!(r.is_match("aa"))); }\n'


def build(crate: Path) -> float:
    target = crate / "target"
    shutil.rmtree(target, ignore_errors=True)
    env = {**os.environ, "CARGO_TARGET_DIR": str(target)}
    t = time.perf_counter()
    subprocess.run(["cargo", "build", "--offline", "-q"], cwd=crate, env=env, check=True)
    return time.perf_counter() - t


def serve(src: Path, tmp: Path, nice: int):
    repo = tmp / f"repo-nice{nice}"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(src, repo, ignore=shutil.ignore_patterns(".code-intel", ".git"), symlinks=True)
    (repo / ".code-intel").mkdir()
    (repo / ".code-intel" / "config.json").write_text(json.dumps({"embedding_nice": nice}))
    log = tmp / f"serve-nice{nice}.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([BIN, "serve", "--repo", str(repo)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=err)
    # Wait until the model is loaded (the background sync starts then), then a bit.
    deadline = time.time() + 120
    while "embedding model ready" not in log.read_text() and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(5)
    return proc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        crate = tmp / "neighbour"
        (crate / "src").mkdir(parents=True)
        (crate / "Cargo.toml").write_text(CARGO_TOML)
        (crate / "src" / "main.rs").write_text(MAIN_RS)
        build(crate)  # fetch/lock once
        times = {"alone": [], "nice 0": [], "nice 10": []}
        for _ in range(a.rounds):
            times["alone"].append(build(crate))
            for nice in (0, 10):
                proc = serve(Path(a.repo), tmp, nice)
                try:
                    assert proc.poll() is None, "serve exited"
                    times[f"nice {nice}"].append(build(crate))
                finally:
                    proc.kill()
                    proc.wait()
        alone = statistics.median(times["alone"])
        for k, v in times.items():
            m = statistics.median(v)
            print(f"{k:8s} build {m:6.1f} s (runs {', '.join(f'{x:.1f}' for x in v)})  slowdown ×{m / alone:.2f}")


if __name__ == "__main__":
    sys.exit(main())
