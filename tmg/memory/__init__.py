"""tmg's long-term memory: the client side of the PLUR contract (spec/memory.md).

- `payloads`: the exact arguments tmg sends (inject, capture, learn, learn_batch), nothing else;
- `surface`: which tool surface the server offers (direct tools, or the `plur_admin` gateway);
- `client`: `PlurClient`, bounded calls where a raise OR an `isError` result is a failure;
- `results`: the server's JSON parsed into typed values (ids, statements, inject buckets).

Still to come, on top of these: `injector.py` (seam A, the pipeline transformer at priority 15)
and `learning.py` (seam B, the after-turn learning hook with its write report).
Nothing here imports `mcp`: the connection lives in `tmg.mcp_servers`.
"""
