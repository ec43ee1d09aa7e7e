"""The interactive chat (SPEC §2): the input line, slash commands, and the loop that runs one
prompt at a time as a cancellable task. It renders engine events; it never drives the engine's
phases itself."""
