import asyncio, sys, json
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from bench import BIN, env
async def main():
    params = StdioServerParameters(command=BIN, args=["serve", "--repo", sys.argv[1]], env=env())
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            await asyncio.sleep(8)
            for q in sys.argv[2:]:
                res = await s.call_tool("query", {"query": q})
                print(res.content[0].text)
asyncio.run(main())
