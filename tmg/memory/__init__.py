"""tmg's long-term memory: the client side of the PLUR contract (spec/memory.md) and its two seams.

The contract:
- `payloads`: the exact arguments tmg sends (inject, capture, learn, learn_batch), nothing else;
- `surface`: which tool surface the server offers (direct tools, or the `plur_admin` gateway);
- `client`: `PlurClient`, bounded calls where a raise OR an `isError` result is a failure;
- `results`: the server's JSON parsed into typed values (ids, statements, inject buckets).

The seams and their session:
- `injector`: seam A, `MemoryInjector`, the pipeline transformer at priority 15;
- `learning`: seam B, `LearningHook`, the after-turn hook and its LEARN tiers;
- `health`: `WriteReport`, per-tool write attempts and failures, and the session-end notice;
- `spool`: `BatchSpool`, failed batches kept on disk for the next session;
- `lock`: `WriteLock`, the bounded advisory lock writes take;
- `runtime`: `MemoryRuntime`, the memory server's connection from background start to quick close;
- `session_end`: `MemoryEnd`, memory's steps of the single session end (flush, report, notice, close);
- `session`: `SessionMemory`, all of the above for one session, as the composition root wires it.
Nothing here imports `mcp` at module level: the connection lives in `tmg.mcp`.
"""
