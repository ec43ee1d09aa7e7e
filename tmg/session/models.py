"""The models a session talks to: the provider its config selects, or the one `--model` or `/model`
chose; the next one of FAILOVER_ORDER when that fails; the summary model of compaction; and one
completion for an MCP server's sampling request. Their gateways come from one cache
(tmg.llm.gateway_cache), closed at the session's end."""

from __future__ import annotations

from dataclasses import replace

from tmg.config.model import Config
from tmg.config.providers import choose_provider, provider_spec
from tmg.context.summary import SummaryCall, SummaryReply
from tmg.context.tokens import Budget
from tmg.llm.gateway import ModelGateway, ProviderSpec
from tmg.llm.gateway_cache import GatewayCache


class SessionModels:
    def __init__(self, model_override: str | None) -> None:
        self._model_override = model_override
        self._cache = GatewayCache()

    def set_model(self, model_override: str | None) -> None:
        """Use ``model_override`` (a model id or a provider name) from the next call on (``/model``)."""
        self._model_override = model_override

    def spec_for(self, config: Config) -> ProviderSpec:
        """The chat's provider as the gateway calls it. Raises UsageError or ConfigError, with the fix."""
        return provider_spec(choose_provider(config, self._model_override))

    def __call__(self, config: Config) -> tuple[ProviderSpec, ModelGateway]:
        spec = self.spec_for(config)
        return spec, self._cache.get(spec)

    def failover(self, config: Config, tried: list[str]) -> tuple[ProviderSpec, ModelGateway] | None:
        """The next FAILOVER_ORDER provider not yet tried that tmg can call, with its gateway."""
        for name in config.failover_order:
            p = config.providers.get(name)
            if p is not None and name not in tried and (p.api_key or p.url):
                spec = provider_spec(p)
                return spec, self._cache.get(spec)
        return None

    def summary_model(self, config: Config, chat: ProviderSpec | None) -> tuple[SummaryCall, int]:
        """How the gatekeeper calls the summary model (COMPACTION.SUMMARY_MODEL, a model id or a
        provider name; else the chat's own) and that model's window."""
        wanted = config.compaction.summary_model
        spec = provider_spec(choose_provider(config, wanted)) if wanted or chat is None else chat
        window = Budget.for_request(config, spec).hard

        async def call(messages: list) -> SummaryReply:
            completion = await self._cache.complete_once(spec, messages)
            return SummaryReply(completion.text, completion.usage, spec.model, window)

        return call, window

    async def sample(self, config: Config, messages: list, max_tokens: int) -> tuple[str, str, str | None]:
        """One completion of the chat's model for an MCP server's sampling request (no tools, at
        most `max_tokens`): its text, the model, why it stopped."""
        spec, _gateway = self(config)  # the chat's own gateway: the bound below is not one of its settings
        bounded = replace(spec, max_tokens=min(max_tokens, spec.max_tokens or max_tokens))
        completion = await self._cache.complete_once(bounded, messages)
        return completion.text, spec.model, completion.finish_reason

    async def aclose(self) -> None:
        await self._cache.aclose()
