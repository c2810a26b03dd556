#!/usr/bin/env python3
"""Agent-task benchmark (docs/measurements.md § Agent-task benchmark): scripted, realistic agent paths through
the real binary over MCP, measuring what a gated session costs.

    bench/run.sh agent [--demo PATH] [--laravel PATH] [--koel PATH]
                       [--json OUT] [--only ID]

Each task of bench/sets/agent_tasks.json is played as a careful agent would:
`orient` calls without a session (query, the recommended first call), then
start_session with the frame, then `steps` with the session (a step marked
`if_missing` runs only when the last submit_understanding reply says that
requirement — or, with `any`, anything — is missing, as an agent that reads
the reply would), then a write check of every file the reference solution
edits or creates (`edits`: must be allowed) and of files it does not need
(`not_needed`: must be refused).

Per task it prints: calls from start_session to READY (start_session
included), all calls, text and structured tokens of every reply, refusals,
and the write checks. Tokens are counted two ways: `est` = the server's
budget estimate (4 ASCII bytes or 1 other character per token, the ratio of
the issue's own figures: 43.8k characters ≈ 11k tokens) and `xlmr` = the
XLM-R tokenizer of multilingual-e5-small (tokenizer.json of the model dir),
which splits JSON and code more finely. Each repository given (the keys of
the task file's `repos`: demo at its `main`, laravel/framework, koel at
b73c97ff92) must be indexed (`code-intel index`) first; the script never
indexes, and runs the tasks of the repositories given.
"""

import argparse
import asyncio
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
BIN = os.environ.get("CODE_INTEL_BIN") or str(
    Path(os.environ.get("CARGO_TARGET_DIR", HERE.parent / "target")) / "debug" / "code-intel")
TODAY = datetime.date.today().strftime("%Y_%m_%d")


def est_tokens(s: str) -> int:
    ascii_bytes = sum(1 for ch in s if ord(ch) < 128)
    return -(-ascii_bytes // 4) + sum(1 for ch in s if ord(ch) >= 128)


def xlmr():
    from tokenizers import Tokenizer
    path = Path(os.environ["CODE_INTEL_MODEL_DIR"]) / "tokenizer.json"
    tok = Tokenizer.from_file(str(path))
    return lambda s: len(tok.encode(s, add_special_tokens=False).ids)


def subst(v, env):
    if isinstance(v, str):
        for k, x in env.items():
            if v == f"${k}":
                return x
            v = v.replace(f"${k}", str(x))
        return v
    if isinstance(v, list):
        return [subst(x, env) for x in v]
    if isinstance(v, dict):
        return {k: subst(x, env) for k, x in v.items()}
    return v


class Meter:
    def __init__(self, count):
        self.count = count
        self.calls = 0
        self.text = {"est": 0, "xlmr": 0}
        self.structured = {"est": 0, "xlmr": 0}
        self.refusals = 0
        self.log = []

    async def call(self, s, tool, args, expect_error=None):
        r = await s.call_tool(tool, args)
        text = "".join(c.text for c in r.content if getattr(c, "text", None))
        structured = json.dumps(r.structured_content, ensure_ascii=False) if r.structured_content else ""
        self.calls += 1
        self.text["est"] += est_tokens(text)
        self.text["xlmr"] += self.count(text)
        self.structured["est"] += est_tokens(structured)
        self.structured["xlmr"] += self.count(structured)
        body = r.structured_content or {}
        if r.is_error and body.get("error") == "gate_refused":
            self.refusals += 1
        self.log.append((tool, bool(r.is_error), f"[{est_tokens(text)}/{est_tokens(structured)}] "
                         + (text.splitlines()[0][:120] if text else "")))
        if expect_error is not None and bool(r.is_error) != expect_error:
            raise SystemExit(f"{tool}: unexpected {'success' if r.is_error is False else 'error'}: {text[:400]}")
        return r


async def wait_model(s):
    for _ in range(600):
        r = await s.call_tool("semantic_search", {"query": "warm up", "collection": "map"})
        if not (r.is_error and "model_loading" in (r.content[0].text if r.content else "")):
            return
        await asyncio.sleep(1)
    raise SystemExit("model did not load")


async def run_task(s, task, count, verbose):
    m = Meter(count)
    env = {"query": task["query"], "today": TODAY}
    for o in task.get("orient", []):
        await m.call(s, o["tool"], subst(o["args"], env), expect_error=False)
    start = {"intent": task["intent"], "query": task["query"]}
    if task.get("slots"):
        start["slots"] = task["slots"]
    r = await m.call(s, "start_session", start, expect_error=False)
    sid = r.structured_content["session_id"]
    first = m.calls
    phase = r.structured_content["phase"]
    ready_at = m.calls - first + 1 if phase == "READY" else None
    last_submit, missing = None, {}
    for step in task["steps"]:
        if ready_at is not None and step["tool"] != "find_definitions":
            break
        cond = step.get("if_missing")
        if cond and (ready_at is not None or (cond != "any" and cond not in missing)):
            continue
        args = dict(last_submit) if step.get("repeat") else subst(step.get("args", {}), env)
        args["session_id"] = sid
        r = await m.call(s, step["tool"], args)
        body = r.structured_content or {}
        if step["tool"] == "find_definitions" and body.get("symbols"):
            env["def_line"] = body["symbols"][0]["line"]
        if step["tool"] == "submit_understanding":
            last_submit = {k: v for k, v in args.items() if k != "session_id"}
            missing = body.get("missing") or {}
            phase = body.get("phase", phase)
        if phase == "READY" and ready_at is None:
            ready_at = m.calls - first + 1
    allowed, refused = [], []
    for f in task["edits"]:
        f = subst(f, env)
        r = await m.call(s, "check_write_target", {"session_id": sid, "file_path": f, "allow_new_files": True})
        allowed.append((f, not r.is_error))
    for f in task["not_needed"]:
        f = subst(f, env)
        r = await m.call(s, "check_write_target", {"session_id": sid, "file_path": f, "allow_new_files": True})
        refused.append((f, bool(r.is_error)))
    if verbose:
        for tool, err, line in m.log:
            print(f"    {'ERR ' if err else ''}{tool}: {line}", file=sys.stderr)
    return {
        "id": task["id"], "intent": task["intent"], "lang": task["lang"],
        "calls_to_ready": ready_at, "calls": m.calls,
        "text_tokens": m.text, "structured_tokens": m.structured, "refusals": m.refusals,
        "edits_allowed": sum(ok for _, ok in allowed), "edits": len(allowed),
        "unneeded_refused": sum(ok for _, ok in refused), "unneeded": len(refused),
        "denied_edits": [f for f, ok in allowed if not ok],
        "allowed_unneeded": [f for f, ok in refused if not ok],
    }


async def run_repo(repo, tasks, count, verbose):
    params = StdioServerParameters(command=BIN, args=["serve", "--repo", str(repo)],
                                   env={**os.environ, "RUST_LOG": "warn"})
    out = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            await wait_model(s)
            for t in tasks:
                out.append(await run_task(s, t, count, verbose))
                print(f"  {t['id']} done", file=sys.stderr)
    return out


def main():
    tasks = argparse.ArgumentParser(add_help=False)
    tasks.add_argument("--tasks", default=str(HERE / "sets" / "agent_tasks.json"))
    spec = json.loads(Path(tasks.parse_known_args()[0].tasks).read_text())
    ap = argparse.ArgumentParser(parents=[tasks])
    for name, origin in spec["repos"].items():
        ap.add_argument(f"--{name}", help=f"{origin} checkout, indexed")
    ap.add_argument("--only", help="run one task id")
    ap.add_argument("--json", help="write results here")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    count = xlmr()
    results = []
    for name in spec["repos"]:
        path = getattr(a, name)
        tasks = [t for t in spec["tasks"] if t["repo"] == name and (not a.only or t["id"] == a.only)]
        if path and tasks:
            results += asyncio.run(run_repo(Path(path), tasks, count, a.verbose))
    print(f"{'task':30s} {'intent':9s} lang {'→READY':>6s} {'calls':>5s} {'text est/xlmr':>14s} "
          f"{'struct est/xlmr':>16s} {'ratio':>5s} {'refused':>7s} {'edits ok':>8s} {'unneeded refused':>16s}")
    for r in results:
        t, st = r["text_tokens"], r["structured_tokens"]
        print(f"{r['id']:30s} {r['intent']:9s} {r['lang']:4s} {str(r['calls_to_ready'] or '-'):>6s} {r['calls']:5d} "
              f"{t['est']:>6d}/{t['xlmr']:<7d} {st['est']:>7d}/{st['xlmr']:<8d} {st['est'] / max(t['est'], 1):5.2f} "
              f"{r['refusals']:7d} {r['edits_allowed']:>3d}/{r['edits']:<4d} {r['unneeded_refused']:>7d}/{r['unneeded']:<8d}")
        for f in r["denied_edits"]:
            print(f"    edit refused: {f}")
        for f in r["allowed_unneeded"]:
            print(f"    unneeded allowed: {f}")
    change = [r for r in results if r["intent"] in ("IMPLEMENT", "MODIFY")]
    ready = [r["calls_to_ready"] for r in change if r["calls_to_ready"]]
    med = statistics.median
    print(f"\nIMPLEMENT/MODIFY tasks reaching READY: {len(ready)}/{len(change)}; "
          f"median calls start_session → READY: {med(ready) if ready else '-'}")
    for k in ("est", "xlmr"):
        tt = [r["text_tokens"][k] for r in results]
        ss = [r["structured_tokens"][k] for r in results]
        print(f"median text tokens per task ({k}): {med(tt):.0f}; median structured: {med(ss):.0f}; "
              f"median structured/text: {med([s / max(t, 1) for s, t in zip(ss, tt)]):.2f}")
    print(f"reference edits allowed: {sum(r['edits_allowed'] for r in results)}/{sum(r['edits'] for r in results)}; "
          f"unneeded files refused: {sum(r['unneeded_refused'] for r in results)}/{sum(r['unneeded'] for r in results)}")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
