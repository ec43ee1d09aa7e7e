"""The session's models: failover for the rest of the session (and its later runs), /model ending it,
a local server when no provider is configured, the spend caps on every call."""

from __future__ import annotations

import asyncio

import pytest

from e2e.mock_llm import MockLLM
from tmg.config.loader import load_config
from tmg.errors import ConfigError
from tmg.session.models import SessionModels

THREE = """PROVIDERS:
  primary: {MODEL: openai/a, API_KEY: k1-123456, URL: "http://127.0.0.1:9/v1"}
  spare: {MODEL: openai/b, API_KEY: k2-123456, URL: "http://127.0.0.1:9/v1"}
  last: {MODEL: openai/c, URL: "http://127.0.0.1:9/v1"}
SELECTED_PROVIDER: primary
FAILOVER_ORDER: [primary, spare, last]
"""


def config(tmp_path, text=THREE, env=None):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return load_config(str(path), env or {}, tmp_path)[0]


def test_a_failover_holds_for_the_rest_of_the_session_until_model_chooses_again(tmp_path):
    cfg = config(tmp_path)
    models = SessionModels(None)
    assert models.spec_for(cfg).name == "primary"
    spec, _gateway = models.failover(cfg, ["primary"])
    assert (spec.name, spec.failed_over_from) == ("spare", "primary")
    assert models.spec_for(cfg).name == "spare"  # the next prompt: still the spare
    spec, _gateway = models.failover(cfg, ["spare"])  # the spare fails too: never back to the primary
    assert (spec.name, spec.failed_over_from) == ("last", "primary")  # URL and no API_KEY: callable
    assert models.failover(cfg, ["last"]) is None
    models.set_model("primary")
    assert models.spec_for(cfg).name == "primary" and models.spec_for(cfg).failed_over_from is None


def test_a_later_run_of_the_session_goes_on_with_its_failover_provider(tmp_path):
    cfg = config(tmp_path)
    stored = [{"role": "user", "content": "q"},
              {"role": "assistant", "content": "a", "meta": {"provider": "spare", "failover_from": "primary"}}]
    said: list[str] = []
    models = SessionModels(None)
    models.resume_failover(stored, cfg, said.append)
    assert models.spec_for(cfg).name == "spare" and said[0].startswith("provider primary failed earlier")
    chosen = SessionModels("primary")  # -m on the command line chooses anew
    chosen.resume_failover(stored, cfg, said.append)
    assert chosen.spec_for(cfg).name == "primary" and len(said) == 1
    plain = SessionModels(None)
    plain.resume_failover(stored[:1] + [{"role": "assistant", "meta": {"provider": "primary"}}], cfg, said.append)
    assert plain.spec_for(cfg).name == "primary"


def test_with_no_provider_configured_a_local_server_is_used(tmp_path):
    cfg = load_config(None, {"XDG_CONFIG_HOME": str(tmp_path)}, tmp_path)[0]  # no file, no key
    said: list[str] = []
    with MockLLM(model_ids=("llama3.2",)) as local:
        models = SessionModels(None)
        asyncio.run(models.find_local(cfg, {"TMG_LOCAL_PROBE_PORTS": str(local.port)}, said.append))
        spec = models.spec_for(cfg)
        assert (spec.model, spec.api_base, spec.backend, spec.api_key) == ("llama3.2", local.url, "native", None)
        assert len(said) == 1 and f"127.0.0.1:{local.port}" in said[0]
        again = SessionModels("other-model:7b")  # -m on the same server; found once, said once
        asyncio.run(again.find_local(cfg, {"TMG_LOCAL_PROBE_PORTS": str(local.port)}, said.append))
        assert again.spec_for(cfg).model == "other-model:7b" and len(said) == 1


def test_a_configured_provider_is_never_replaced_by_a_probe(tmp_path):
    cfg = config(tmp_path, "PROVIDERS:\n  mine:\n    MODEL: openai/x\n    API_KEY: ${UNSET_KEY_VAR}\n")
    models = SessionModels(None)
    asyncio.run(models.find_local(cfg, {"TMG_LOCAL_PROBE_PORTS": "1"}, print))
    with pytest.raises(ConfigError, match=r"set PROVIDERS.mine.API_KEY \(\$\{UNSET_KEY_VAR\} is not set\)"):
        models.spec_for(cfg)
