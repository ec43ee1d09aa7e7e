"""YAML configuration: the schema, discovery and loading, and (later) the live, hot-reloaded view."""

from tmg.config.loader import load_config, discover_config_path
from tmg.config.model import Config, MemoryConfig, McpServerConfig, ProviderConfig

__all__ = [
    "Config",
    "MemoryConfig",
    "McpServerConfig",
    "ProviderConfig",
    "discover_config_path",
    "load_config",
]
