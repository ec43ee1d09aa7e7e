"""YAML configuration: which file (discovery), reading it safely (source), folder trust (trust,
screen), the schema and its checks (schema, loader), where values came from (origins, overrides),
the user's rules in a project (layering), the typed Config (model, build), the live,
hot-reloaded view (live, watcher, reload), and the MODE alone, for `tmg -t` (mode)."""
