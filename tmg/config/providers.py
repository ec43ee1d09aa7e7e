"""Choosing the provider a prompt talks to."""

from __future__ import annotations

from tmg.config.model import Config, ProviderConfig
from tmg.errors import ConfigError, UsageError
from tmg.llm.gateway import ProviderSpec

NO_PROVIDER_HELP = (
    "No model provider is configured, and no local OpenAI-compatible server answered on 127.0.0.1 "
    "(Ollama 11434, llama.cpp 8080, LM Studio 1234, vLLM 8000). Either start one, export one of "
    "OPENAI_API_KEY, ANTHROPIC_API_KEY, OPENROUTER_API_KEY or GEMINI_API_KEY, or write a config "
    "file (copy config/tmg.example.yaml to ~/.config/tmg/config.yaml or ./tmg.yaml) with a "
    "PROVIDERS entry giving MODEL, API_KEY and, for a local or compatible server, URL; then "
    "run `tmg doctor` to check it."
)


def usable(config: Config, name: str) -> bool:
    """Whether tmg can call provider ``name``: it has an API key, or a URL and no API_KEY written
    at all (a local server takes any key). An API_KEY written as an unset ``${VAR}`` wants a key:
    without it the provider is passed over, and the error names the variable."""
    p = config.providers[name]
    return bool(p.api_key or (p.url and f"PROVIDERS.{name}.API_KEY" not in config.origins))


def no_provider_configured(config: Config) -> bool:
    """Whether the config names no provider of its own (only the shipped defaults, keyed from
    the environment) and none of those has a key: the case where tmg looks for a local server."""
    return all(not usable(config, n) and config.origin(f"PROVIDERS.{n}.MODEL").startswith("default")
               for n in config.providers)


def _none_usable(config: Config) -> ConfigError:
    """The error for a config whose own providers have neither a key nor a URL: each one named,
    with the key to set (and the variable it names, when that is what is unset)."""
    if no_provider_configured(config):
        return ConfigError(NO_PROVIDER_HELP)
    named = []
    for name in config.providers:
        origin = config.origins.get(f"PROVIDERS.{name}.API_KEY", "")
        unset = origin.partition(", ")[2] if "is not set" in origin else "not set"
        named.append(f"PROVIDERS.{name}.API_KEY ({unset})")
    return ConfigError(f"no provider can be called, none has an API key: set {', or '.join(named)}; a local "
                       "OpenAI-compatible server needs only URL (and no API_KEY); `tmg doctor` checks each provider")


def choose_provider(config: Config, model_override: str | None = None) -> ProviderConfig:
    """SELECTED_PROVIDER, else the first provider (FAILOVER_ORDER first) that has an API key or a URL.

    ``-m/--model`` replaces the chosen provider's model, or names a provider outright.

    Raises:
        UsageError: ``model_override`` is neither a provider name nor a model id.
    """
    if model_override and model_override in config.providers:
        return config.providers[model_override]
    if model_override:
        check_model_id(model_override, config)
    if config.selected_provider:
        chosen = config.providers[config.selected_provider]
    else:
        order = list(config.failover_order) + [n for n in config.providers if n not in config.failover_order]
        keyed = [config.providers[n] for n in order if usable(config, n)]
        if not keyed:
            raise _none_usable(config)
        chosen = keyed[0]
    if model_override:
        from dataclasses import replace

        chosen = replace(chosen, model=model_override)
    return chosen


def check_model_id(word: str, config: Config) -> None:
    """Accept a model id: ``provider/model`` (litellm style), a bare id in litellm's price map, or a
    bare id shaped like one (``gpt-4o``, ``llama3``: a digit in it). Anything else is most likely
    a mistyped provider name, which would go to the default provider as a model and fail there."""
    if "/" in word.strip("/") or any(c.isdigit() for c in word):
        return
    from tmg.llm.pricing import is_known_model

    if is_known_model(word):
        return
    import difflib

    names = sorted(config.providers)
    close = difflib.get_close_matches(word, names, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise UsageError(f"{word!r} is neither a provider nor a model id; {hint}providers: {', '.join(names) or 'none'} "
                     "(or give a model id as provider/model, e.g. openai/gpt-4o-mini)")


def provider_spec(p: ProviderConfig) -> ProviderSpec:
    """The configured provider as the gateway calls it."""
    return ProviderSpec(
        name=p.name, model=p.model, api_key=p.api_key or None, api_base=p.url or None,
        max_tokens=p.max_tokens, headers=dict(p.headers), backend=p.backend,
        first_byte_timeout=p.first_byte_timeout, stream_idle_timeout=p.stream_idle_timeout,
        context_window=p.context_window, images=p.images,
    )
