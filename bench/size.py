#!/usr/bin/env python3
"""Binary-size and build-time benchmark (docs/measurements.md § Binary size and build time).

    bench/run.sh size [--profile release] [--target-dir DIR] [--touch src/lang.rs] [--json OUT]

Builds code-intel and its peer, `examples/lancedb_floor.rs` (LanceDB used
the way code-intel uses it, nothing else; same features and profile), with
`cargo build --timings`, symbols kept (`CARGO_PROFILE_<P>_STRIP=false`, so
`cargo bloat` can read the binary afterwards), and strips copies with
binutils' `strip`: the profile's `strip = true` gives the same bytes. Prints
the build's wall time (cold when DIR is empty: 20-45 min on 2 cores), the
build time by crate family from cargo's timings report, both stripped sizes,
their ratio and where the bytes are (ELF sections), then runs the peer once
on a temporary directory to show it works. With --touch, touches that file
and times the warm one-file rebuild. --json writes the figures (bench/report.py's
`size` table).

The goal the ratio is read against (docs/measurements.md): a stripped binary of at most
80 MB and a cold release build of at most 35 minutes on this 2-core machine.
"""

import argparse
import collections
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
GOAL_MB = 80
# Crate families whose units are summed together in the build-time table.
FAMILIES = ("lance", "datafusion", "arrow", "aws", "opendal", "object_store",
            "sqlparser", "tree_sitter", "tokenizers", "lindera", "jieba",
            "rmcp", "tokenizers", "ort", "tokio", "serde", "regex")
SECTIONS = (".text", ".rodata", ".eh_frame", ".gcc_except_table", ".rela.dyn")


def build(profile, target_dir, env):
    """Runs the build; returns (wall seconds, units compiled, timings path)."""
    started = time.monotonic()
    out = subprocess.run(
        ["cargo", "build", "--profile", profile, "--locked", "--timings",
         "--bin", "code-intel", "--example", "lancedb_floor"],
        cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    if out.returncode != 0:
        sys.exit(f"cargo build failed:\n{out.stderr[-4000:]}")
    compiled = out.stderr.count("Compiling ")
    return wall, compiled, target_dir / "cargo-timings" / "cargo-timing.html"


def families(timings):
    """Seconds of compilation per crate family, from cargo's timings HTML."""
    html = timings.read_text()
    units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\n\]);", html, re.S).group(1))
    by = collections.Counter()
    for u in units:
        name = u["name"].replace("-", "_")
        by[next((f + "*" for f in FAMILIES if name.startswith(f)), name)] += u["duration"]
    return by, sum(u["duration"] for u in units)


def stripped(binary, tmp):
    copy = tmp / (binary.name + ".stripped")
    subprocess.run(["strip", "-o", str(copy), str(binary)], check=True)
    return copy


def sections(binary):
    out = subprocess.run(["size", "-A", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in SECTIONS:
            sizes[parts[0]] = int(parts[1])
    return sizes


def mb(n):
    return f"{n / 1e6:7.1f} MB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="release")
    ap.add_argument("--target-dir", type=Path,
                    default=Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")))
    ap.add_argument("--touch", help="file (relative to the repository) for the warm rebuild")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    figures = {"profile": args.profile, "cpu": f"{os.cpu_count()} × {cpu}"}
    env = dict(os.environ, CARGO_TARGET_DIR=str(args.target_dir))
    env[f"CARGO_PROFILE_{args.profile.upper().replace('-', '_')}_STRIP"] = "false"
    out_dir = args.target_dir / args.profile

    wall, compiled, timings = build(args.profile, args.target_dir, env)
    print(f"profile {args.profile}, target dir {args.target_dir}")
    print(f"build: {wall / 60:.1f} min wall, {compiled} crates compiled "
          f"(goal for a cold release build: <= 35 min)")
    # The largest process the build waited for (rustc of one crate), in
    # KiB on Linux: what a 2-core machine's memory must hold at least.
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"peak RSS of one build process: {peak / 1024 ** 2:.1f} GiB")
    figures.update(build_s=round(wall), crates_compiled=compiled, peak_rss_kib=peak)
    by, total = families(timings)
    figures["families"] = [{"family": n, "min": round(x / 60, 1), "share": round(x / total, 3)}
                           for n, x in by.most_common(6)]
    figures["units_min"] = round(total / 60, 1)
    print(f"compile time by crate family ({total / 60:.1f} min summed over units; "
          "2 cores run two at a time):")
    for name, secs in by.most_common(12):
        if secs < 1:
            break
        print(f"  {name:26s} {secs / 60:5.1f} min  {100 * secs / total:4.1f}%")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ours = stripped(out_dir / "code-intel", tmp)
        peer = stripped(out_dir / "examples" / "lancedb_floor", tmp)
        ours_size, peer_size = ours.stat().st_size, peer.stat().st_size
        print("stripped size:")
        print(f"  code-intel      {mb(ours_size)}  (goal <= {GOAL_MB} MB)")
        print(f"  lancedb_floor   {mb(peer_size)}  (LanceDB alone)")
        print(f"  ratio code-intel / LanceDB alone: {ours_size / peer_size:.2f}; "
              f"LanceDB alone / goal: {peer_size / (GOAL_MB * 1e6):.2f}")
        figures.update(stripped_bytes=ours_size, peer_stripped_bytes=peer_size)
        ours_s, peer_s = sections(ours), sections(peer)
        print(f"  {'section':20s} {'code-intel':>12s} {'LanceDB alone':>14s}")
        for s in SECTIONS:
            print(f"  {s:20s} {mb(ours_s.get(s, 0)):>12s} {mb(peer_s.get(s, 0)):>14s}")
        run = subprocess.run([str(peer), str(tmp / "db")], capture_output=True, text=True)
        print(f"  lancedb_floor run: exit {run.returncode}: {run.stderr.strip()[-300:]}")
        figures["peer_runs"] = run.returncode == 0
        shutil.rmtree(tmp / "db", ignore_errors=True)

    if args.touch:
        (ROOT / args.touch).touch()
        wall, compiled, _ = build(args.profile, args.target_dir, env)
        print(f"warm rebuild after touching {args.touch}: {wall:.0f} s, "
              f"{compiled} crates compiled")
        figures.update(touched=args.touch, warm_s=round(wall))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
