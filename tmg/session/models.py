"""The models a session talks to: the provider its config selects, or the one `--model` or `/model`
chose; the next one of FAILOVER_ORDER when that fails, for the rest of the session; a local
OpenAI-compatible server when no provider is configured at all; the summary model of compaction;
and one completion for an MCP server's sampling request. Their gateways come from one cache
(tmg.llm.gateway_cache), closed at the session's end, each call checked against the session's
spend caps (tmg.session.spend) once compose.py sets them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Callable

from tmg.config.model import Config, ProviderConfig
from tmg.config.providers import choose_provider, no_provider_configured, provider_spec, usable
from tmg.context.summary import SummaryCall, SummaryReply
from tmg.context.tokens import Budget
from tmg.errors import ConfigError
from tmg.llm.gateway import ModelGateway, ProviderSpec
from tmg.llm.gateway_cache import GatewayCache
from tmg.session.spend import CappedGateway, CostCap


class SessionModels:
    def __init__(self, model_override: str | None) -> None:
        self._model_override = model_override
        self._cache = GatewayCache()
        self._local: ProviderConfig | None = None  # found on loopback: no provider is configured
        # After a failure, the FAILOVER_ORDER provider the session went on with, and those that failed.
        self._stand_in: str | None = None
        self._failed: list[str] = []

    def set_model(self, model_override: str | None) -> None:
        """Use ``model_override`` (a model id or a provider name) from the next call on (``/model``);
        the user's choice ends a failover."""
        self._model_override = model_override
        self._stand_in, self._failed = None, []

    def resume_failover(self, stored: list[dict], config: Config, say: Callable[[str], None]) -> None:
        """A session whose last answer came from a failover provider goes on with it (the rest of
        the session is every later run of it), said once; ``-m`` on the command line chooses anew."""
        last = next((m for m in reversed(stored) if m.get("role") == "assistant"), None)
        meta = (last or {}).get("meta") or {}
        stand_in, original = meta.get("provider"), meta.get("failover_from")
        if self._model_override is None and original and usable_name(config, str(stand_in)):
            self._stand_in, self._failed = str(stand_in), [str(original)]
            say(f"provider {original} failed earlier in this session; it goes on with {stand_in} (FAILOVER_ORDER): "
                "-m or /model chooses again, --new starts a session with the selected provider")

    def cap_spend(self, cap: CostCap) -> None:
        """Check each later call against ``cap`` (MAX_COST) and count what it cost."""
        self._cache.wrap = lambda gateway: CappedGateway(gateway, cap)

    async def find_local(self, config: Config, env: Mapping[str, str], say: Callable[[str], None]) -> None:
        """With no provider configured at all, the first local OpenAI-compatible server that answers
        on loopback (tmg.llm.local_probe), said in one line; nothing is probed otherwise."""
        if not no_provider_configured(config):
            return
        from tmg.llm.local_probe import find_local_server

        server, anew = await find_local_server(env)
        if server is None:
            return
        self._local = ProviderConfig(name=server.name, model=server.model, url=server.url, backend="native")
        if anew:
            say(f"no provider is configured: using the OpenAI-compatible server on 127.0.0.1:{server.port} "
                f"({server.kind if server.kind != 'local' else 'found on loopback'}), model {server.model}; "
                "configure PROVIDERS to choose another (tmg doctor checks them)")

    def spec_for(self, config: Config) -> ProviderSpec:
        """The chat's provider as the gateway calls it. Raises UsageError or ConfigError, with the fix."""
        if self._stand_in is not None and usable_name(config, self._stand_in):
            return replace(provider_spec(config.providers[self._stand_in]), failed_over_from=self._failed[0])
        try:
            return provider_spec(choose_provider(config, self._model_override))
        except ConfigError:
            if self._local is None or not no_provider_configured(config):
                raise
            local = replace(self._local, model=self._model_override) if self._model_override else self._local
            return provider_spec(local)

    def __call__(self, config: Config) -> tuple[ProviderSpec, ModelGateway]:
        spec = self.spec_for(config)
        return spec, self._cache.get(spec)

    def failover(self, config: Config, tried: list[str]) -> tuple[ProviderSpec, ModelGateway] | None:
        """The next FAILOVER_ORDER provider that tmg can call and that has not failed in this
        session (``tried``: those that failed this prompt), with its gateway. The session goes on
        with it: later prompts use it too, until ``/model`` chooses again."""
        self._failed.extend(n for n in tried if n not in self._failed)
        for name in config.failover_order:
            if name not in self._failed and usable_name(config, name):
                self._stand_in = name
                spec = replace(provider_spec(config.providers[name]), failed_over_from=self._failed[0])
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


def usable_name(config: Config, name: str) -> bool:
    return name in config.providers and usable(config, name)
