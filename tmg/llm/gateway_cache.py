"""One gateway per provider settings for a session: made on first use (its backend chosen then,
tmg.llm.select), reused by every call with the same settings, closed at the session's end."""

from __future__ import annotations

from tmg.llm.gateway import Completion, CompletionRequest, ModelGateway, ProviderSpec


class GatewayCache:
    def __init__(self) -> None:
        self._gateways: dict[tuple, ModelGateway] = {}

    def get(self, spec: ProviderSpec) -> ModelGateway:
        """The gateway for `spec`'s settings (provider, model, endpoint, backend, key, headers)."""
        key = (spec.name, spec.model, spec.api_base, spec.backend, spec.api_key, tuple(sorted(spec.headers.items())))
        gateway = self._gateways.get(key)
        if gateway is None:
            from tmg.llm.select import DeferredGateway

            gateway = self._gateways[key] = DeferredGateway(spec)
        return gateway

    async def complete_once(self, spec: ProviderSpec, messages: list) -> Completion:
        """One completion without tools, its text gathered rather than shown (a summary, a sampling answer)."""
        request = CompletionRequest(spec, messages, [], timeout=spec.stream_idle_timeout,
                                    first_byte_timeout=spec.first_byte_timeout)
        return await self.get(spec).complete(request, lambda _delta: None)

    async def aclose(self) -> None:
        for gateway in self._gateways.values():
            await gateway.aclose()
        self._gateways.clear()
