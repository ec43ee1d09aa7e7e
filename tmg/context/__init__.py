"""The context pipeline: priority-sorted transformers that prepare each turn's messages.

Priorities below 100 are canonical (they may change what is stored, persisted only on request);
100 and above are transient (they shape only this turn's payload). See SPEC §6:
0 repair, 5 cleaners, 8 persona, 10 skills, 15 memory injector, 80 budget gatekeeper,
110 notices, 120 pruner, 130 final validator.
"""
