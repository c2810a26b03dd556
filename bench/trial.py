#!/usr/bin/env python3
"""An honest agent trial: a helper session (an agent given only the
installed `/code` workflow, the tool list and a ticket, never the answer)
explores a repository through the real binary, one MCP call per command,
and every call is logged; `count` turns the logs into the figures the agent
path is judged by.

    bench/run.sh trial tools REPO               the tool list an MCP client shows (markdown)
    bench/run.sh trial call REPO LOG TOOL JSON  one tool call; prints the reply's text
    bench/run.sh trial count LOG...             per task: calls, start_session→READY, workflow share, text tokens

`call` starts `code-intel serve --repo REPO` (CODE_INTEL_BIN or the debug
build), waits out `model_loading`, calls TOOL with the JSON arguments and
appends {tool, args, chars, error, head} to LOG (JSON lines). Sessions live
in REPO/.code-intel/sessions, so a task's calls share one session across
processes. Text tokens are reply characters / 4 (bench/README.md § Agent
tasks gives the server's own estimate; this is coarser).
"""

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = os.environ.get("CODE_INTEL_BIN") or str(
    Path(os.environ.get("CARGO_TARGET_DIR", Path(__file__).resolve().parents[1] / "target")) / "debug" / "code-intel")
# Calls that move the session rather than look at code (the gate's cost).
WORKFLOW = {"start_session", "set_query_frame", "submit_understanding", "submit_semantic", "submit_verification",
            "check_write_target", "get_session_status", "add_explored_files", "record_outcome",
            "revert_to_exploration", "validate_symbol_relevance"}


async def session(repo, body):
    # One process per call stands for one long-lived server: the shared
    # embedding service it connects to stays up between an agent's calls
    # (its default 30 s idle exit would reload the model between most of
    # them, and a `query` during the load ranks by words only).
    env = {"CODE_INTEL_EMBED_SERVICE_IDLE": "900", **os.environ}
    params = StdioServerParameters(command=BIN, args=["serve", "--repo", str(repo)], env=env)
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
        async with ClientSession(r, w) as s:
            init = await s.initialize()
            return await body(s, init)


async def call(repo, log, tool, args):
    async def body(s, _):
        # A long-lived server has its model by the agent's first call; this
        # process is new, and `query` answers by words alone until it has
        # connected to the embedding service (arms six and six2 had one such
        # orientation each). Wait for the model first, unlogged.
        for _ in range(120):
            warm = await s.call_tool("semantic_search", {"query": "warm up", "collection": "forest", "limit": 1})
            if not (warm.is_error and "model_loading" in "".join(getattr(c, "text", "") for c in warm.content)):
                break
            await asyncio.sleep(0.5)
        for _ in range(120):
            res = await s.call_tool(tool, args)
            text = "\n".join(c.text for c in res.content if getattr(c, "text", None))
            if res.is_error and "model_loading" in text:
                await asyncio.sleep(1)
                continue
            break
        with open(log, "a") as f:
            f.write(json.dumps({"t": time.time(), "tool": tool, "args": args, "chars": len(text),
                                "error": bool(res.is_error), "head": text[:400]}, ensure_ascii=False) + "\n")
        print(("ERROR: " if res.is_error else "") + text)
    await session(repo, body)


async def tools(repo):
    async def body(s, init):
        listed = await s.list_tools()
        out = ["# code-intel MCP server", "", "Server instructions: " + (init.instructions or ""), ""]
        for t in listed.tools:
            out += [f"## {t.name}", t.description or "", "input schema: " + json.dumps(t.input_schema, ensure_ascii=False), ""]
        print("\n".join(out))
    await session(repo, body)


def figures(logs):
    """Per task (one log each) the calls, the calls from the one that opens
    the session (`start_session`, or `query` with an `intent`, which ranks
    the files too and is not a workflow call) to the READY `submit_*` (both
    counted; None when it never got there), the
    workflow calls and the reply text in tokens (characters / 4); and over
    the tasks the medians, READY reached and the workflow share of all
    calls. What `count` prints and bench/report.py's trial table shows."""
    tasks = []
    for log in logs:
        calls = [json.loads(line) for line in open(log)]
        names = [c["tool"] for c in calls]
        start = next((i for i, c in enumerate(calls) if c["tool"] == "start_session"
                      or (c["tool"] == "query" and "intent" in c.get("args", {}))), 0)
        ready = next((i for i in range(len(calls) - 1, -1, -1)
                      if names[i].startswith("submit_") and "READY" in calls[i].get("head", "")), None)
        tasks.append({"task": Path(log).stem, "calls": len(calls),
                      "to_ready": None if ready is None else ready - start + 1,
                      "workflow": sum(n in WORKFLOW for n in names),
                      "tokens": sum(c["chars"] for c in calls) // 4})
    reached = [t["to_ready"] for t in tasks if t["to_ready"] is not None]
    return {
        "tasks": tasks,
        "calls_median": statistics.median(t["calls"] for t in tasks),
        "to_ready_median": statistics.median(reached) if reached else None,
        "reached": len(reached),
        "workflow_share": sum(t["workflow"] for t in tasks) / max(1, sum(t["calls"] for t in tasks)),
        "tokens_median": statistics.median(t["tokens"] for t in tasks),
    }


def count(logs):
    f = figures(logs)
    for t in f["tasks"]:
        print(f"{t['task']:12} calls {t['calls']:3}  start_session→READY "
              f"{'-' if t['to_ready'] is None else t['to_ready']:>3}  workflow {t['workflow']:2}  "
              f"text ≈{t['tokens']:6} tokens")
    print(f"median: calls {f['calls_median']}, start_session→READY "
          f"{'-' if f['to_ready_median'] is None else f['to_ready_median']} ({f['reached']}/{len(logs)} reached), "
          f"workflow {f['workflow_share']:.0%} of calls, text ≈{f['tokens_median']:.0f} tokens")


def main():
    a = sys.argv[1:]
    if a[:1] == ["tools"] and len(a) == 2:
        asyncio.run(tools(Path(a[1]).resolve()))
    elif a[:1] == ["call"] and len(a) in (4, 5):
        asyncio.run(call(Path(a[1]).resolve(), a[2], a[3], json.loads(a[4]) if len(a) == 5 else {}))
    elif a[:1] == ["count"] and len(a) >= 2:
        count(a[1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
