"""The phase engine: one user prompt as a loop of turns through Guard, Refining, Inference,
Executing, Persisting, with Recovering on failure. See SPEC §5."""
