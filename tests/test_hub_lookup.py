"""Hub lookups against the fake Hub on loopback: what each answer of the Hub becomes, the caches,
single flight, rate limits, slowness, offline mode and search. No Discord here; no real network."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest
import pytest_asyncio
from discord.ext import commands

from bot.estimate.hub import HubFailure, forget_all, registered
from bot.estimate.models import Architecture
from bot.hub_cache import SMALL_FILE_MAX
from bot.hub_lookup import fetch_architecture
from bot.hub_settings import HubSettings, hub_settings_from_env
from bot.runtime import hub_client
from bot.runtime.cog import _hub_client
from bot.runtime.hub_client import HubClient
from bot.runtime.settings import Settings
from tests.fake_hub import FakeHub
from tests.hub_configs import CONFIGS

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module")
async def hub() -> AsyncIterator[FakeHub]:
    hub = FakeHub()
    await hub.start()
    hub.add("acme/Llama-8B", CONFIGS["llama-3.1-8b"], stored_params=8_030_261_248, downloads=50)
    hub.add("acme/Qwen3-32B-FP8", CONFIGS["qwen3-32b"], stored_params=17_000_000_000, downloads=900)
    hub.add("acme/Gated-8B", CONFIGS["llama-3.1-8b"], gated=True)
    hub.add("acme/No-Config", CONFIGS["llama-3.1-8b"], files=set())
    hub.add("acme/Broken", raw=b'{"hidden_size": 4096,')
    hub.add("acme/Huge", raw=b"{" + b" " * 1_000_001 + b"}")
    hub.add(
        "acme/Rwkv",
        {
            "architectures": ["RwkvForCausalLM"],
            "model_type": "rwkv",
            "hidden_size": 768,
            "vocab_size": 50280,
        },
    )
    hub.add("acme/Absurd", {**CONFIGS["llama-3.1-8b"], "num_hidden_layers": 10**9})
    yield hub
    await hub.stop()
    forget_all()


def settings_for(hub: FakeHub, cache: Path, token: str | None = None, timeout_s: float = 2.0) -> HubSettings:
    """The fake Hub, a cache folder of the test's own, and never HF_HUB_OFFLINE from the environment."""
    return HubSettings(endpoint=hub.url, cache_dir=cache, token=token, timeout_s=timeout_s, offline=False)


async def test_a_repo_becomes_its_architecture_with_its_commit(hub: FakeHub, tmp_path: Path) -> None:
    found = await asyncio.to_thread(fetch_architecture, "acme/Qwen3-32B-FP8", settings_for(hub, tmp_path))
    assert isinstance(found, Architecture)  # no safetensors served: the config alone
    assert found.parameter_count == 32_762_123_264
    assert found.hub_stored_params == 17_000_000_000  # FP8 packs: shown, not used
    assert found.hub_revision == hub.repos["acme/qwen3-32b-fp8"].sha


@pytest.mark.parametrize(
    ("repo", "kind", "fields"),
    [
        ("acme/Missing", "not_found", ()),
        ("acme/Gated-8B", "gated", ()),
        ("acme/No-Config", "no_config", ()),
        ("acme/Broken", "malformed", ()),
        ("acme/Huge", "too_large", ()),
        ("acme/Rwkv", "undeclared_family", ("rwkv",)),
        ("acme/Absurd", "absurd", ("num_hidden_layers",)),
    ],
)
async def test_each_refusal_of_the_hub_has_its_kind(
    hub: FakeHub, tmp_path: Path, repo: str, kind: str, fields: tuple[str, ...]
) -> None:
    with pytest.raises(HubFailure) as caught:
        await asyncio.to_thread(fetch_architecture, repo, settings_for(hub, tmp_path))
    assert (caught.value.kind, caught.value.fields) == (kind, fields)


async def test_an_oversized_config_is_refused_before_its_bytes_are_fetched(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub.requests.clear()
    with pytest.raises(HubFailure):
        await asyncio.to_thread(fetch_architecture, "acme/Huge", settings_for(hub, tmp_path))
    assert [method for method, path in hub.requests if "resolve" in path] == ["HEAD", "HEAD"]


async def test_a_token_with_access_opens_a_gated_repo(hub: FakeHub, tmp_path: Path) -> None:
    hub.tokens_with_access.add("hf_reader")
    with pytest.raises(HubFailure) as caught:  # a token without access
        await asyncio.to_thread(
            fetch_architecture, "acme/Gated-8B", settings_for(hub, tmp_path, token="hf_other")
        )
    assert caught.value.kind == "gated"
    found = await asyncio.to_thread(
        fetch_architecture, "acme/Gated-8B", settings_for(hub, tmp_path, token="hf_reader")
    )
    assert found.parameter_count == 8_030_261_248


async def test_one_round_trip_per_revision(hub: FakeHub, tmp_path: Path) -> None:
    clock = [0.0]
    client = HubClient(settings_for(hub, tmp_path), ttl_s=60, clock=lambda: clock[0])
    hub.requests.clear()
    await client.resolve("acme/Llama-8B")
    first = len(hub.requests)
    await client.resolve("acme/Llama-8B")  # memory
    assert len(hub.requests) == first
    clock[0] = 61  # expired: the Hub is asked for the commit, the config comes from the disk cache
    await client.resolve("acme/Llama-8B")
    assert hub.requests[first:] == [("GET", "/api/models/acme/Llama-8B")]
    assert registered("ACME/llama-8b") is not None  # repo IDs are case-insensitive


async def test_fifty_asks_at_once_cost_one_hub_lookup(hub: FakeHub, tmp_path: Path) -> None:
    client = HubClient(settings_for(hub, tmp_path))
    hub.requests.clear()
    hub.delay_s = 0.01  # the asks all start before the first request is answered
    try:
        answers = await asyncio.gather(*(client.resolve("acme/Llama-8B") for _ in range(50)))
    finally:
        hub.delay_s = 0
    assert {answer.architecture for answer in answers} == {answers[0].architecture}
    assert hub.count("/api/models/") == 1
    assert client.lookups == 1


async def test_a_rate_limited_hub_is_answered_from_the_disk_cache(hub: FakeHub, tmp_path: Path) -> None:
    await HubClient(settings_for(hub, tmp_path)).resolve("acme/Llama-8B")  # fills the disk cache
    fresh = HubClient(settings_for(hub, tmp_path))  # a restarted bot: nothing in memory
    hub.rate_limited = True
    try:
        answer = await fresh.resolve("acme/Llama-8B")
        assert answer.rate_limited
        assert answer.architecture.parameter_count == 8_030_261_248
        with pytest.raises(HubFailure) as caught:  # never fetched: nothing to fall back on
            await fresh.resolve("acme/Qwen3-32B-FP8")
        assert caught.value.kind == "rate_limited"
    finally:
        hub.rate_limited = False


async def test_a_hub_that_is_down_or_slow_is_unavailable(hub: FakeHub, tmp_path: Path) -> None:
    hub.down = True
    try:
        with pytest.raises(HubFailure) as caught:
            await HubClient(settings_for(hub, tmp_path)).resolve("acme/Llama-8B")
        assert caught.value.kind == "unavailable"
    finally:
        hub.down = False
    hub.delay_s = 0.06
    try:
        slow = HubClient(settings_for(hub, tmp_path, timeout_s=0.02))
        with pytest.raises(HubFailure) as caught:
            await slow.resolve("acme/Llama-8B")
        assert caught.value.kind == "unavailable"
    finally:
        hub.delay_s = 0


async def test_offline_answers_from_the_disk_cache_only(hub: FakeHub, tmp_path: Path) -> None:
    await HubClient(settings_for(hub, tmp_path)).resolve("acme/Llama-8B")
    hub.requests.clear()
    offline = HubSettings(endpoint=hub.url, cache_dir=tmp_path, offline=True)
    found = await asyncio.to_thread(fetch_architecture, "acme/Llama-8B", offline)
    assert found.parameter_count == 8_030_261_248
    with pytest.raises(HubFailure) as caught:
        await asyncio.to_thread(fetch_architecture, "acme/Qwen3-32B-FP8", offline)
    assert caught.value.kind == "offline"
    assert hub.requests == []


async def test_lookups_turned_off_refuse_every_repo(hub: FakeHub, tmp_path: Path) -> None:
    with pytest.raises(HubFailure) as caught:
        await HubClient(settings_for(hub, tmp_path), enabled=False).resolve("acme/Llama-8B")
    assert caught.value.kind == "disabled"


async def test_search_most_downloaded_first_cached_and_never_slower_than_asked(
    hub: FakeHub, tmp_path: Path
) -> None:
    client = HubClient(settings_for(hub, tmp_path))
    hub.requests.clear()
    assert (await client.suggest("acme/", 2.0))[:2] == ("acme/Qwen3-32B-FP8", "acme/Llama-8B")
    await client.suggest("acme/", 2.0)
    assert hub.count("/api/models") == 1  # the second came from the cache
    hub.delay_s = 0.06
    try:
        assert await client.suggest("acme/l", 0.02) == ()  # too slow: no suggestions, no wait
    finally:
        hub.delay_s = 0


async def test_huggingface_hubs_variables_are_read_when_asked() -> None:
    settings = hub_settings_from_env(
        {
            "HF_ENDPOINT": "http://127.0.0.1:9/",
            "HF_TOKEN": "hf_x",
            "HF_HOME": "/srv/hf",
            "HF_HUB_OFFLINE": "1",
        }
    )
    assert settings == HubSettings(
        endpoint="http://127.0.0.1:9", token="hf_x", cache_dir=Path("/srv/hf/hub"), offline=True
    )
    assert hub_settings_from_env({}) == HubSettings()


async def test_the_bots_settings_shape_its_hub_client() -> None:
    class Host:
        settings = Settings(hub_lookups=False, hub_timeout_s=0.5, hub_cache_max_repos=5)

    client = _hub_client(cast(commands.Bot, Host()))
    assert (client.enabled, client.deadline_s, client.settings.cache_max_repos) == (False, 0.5, 5)
    # By default a lookup may take several seconds in all: a Hub answering in 2.5 s is answered,
    # after the "thinking" reply (Discord waits 15 minutes for its edit).
    assert Settings().hub_timeout_s == HubSettings().timeout_s >= 5


async def test_a_lasting_refusal_is_kept_a_while_an_outage_is_not(hub: FakeHub, tmp_path: Path) -> None:
    clock = [0.0]
    client = HubClient(settings_for(hub, tmp_path), clock=lambda: clock[0])
    hub.requests.clear()
    for _ in range(3):
        with pytest.raises(HubFailure):
            await client.resolve("acme/Missing")
    assert hub.count("/api/models/") == 1  # repeated asks cost the Hub nothing
    clock[0] = hub_client.FAILURE_TTL_S + 1
    with pytest.raises(HubFailure):
        await client.resolve("acme/Missing")
    assert hub.count("/api/models/") == 2
    hub.down = True
    try:
        for _ in range(2):
            with pytest.raises(HubFailure):
                await client.resolve("acme/Llama-8B")
    finally:
        hub.down = False
    assert (await client.resolve("acme/Llama-8B")).architecture.parameter_count == 8_030_261_248


async def test_the_caches_are_bounded(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_client, "CACHE_MAX", 2)
    client = HubClient(settings_for(hub, tmp_path))
    for query in ("acme/", "acme/l", "acme/q"):
        await client.suggest(query, 2.0)
    assert client.cached_suggestions("acme/") is None  # the oldest went
    assert client.cached_suggestions("acme/q") is not None


async def test_trickling_repos_neither_starve_the_others_nor_keep_their_threads(
    hub: FakeHub, tmp_path: Path
) -> None:
    for i in range(8):  # one byte every 30 ms: some 3 s for the model info, never a read timeout
        hub.add(f"acme/Trickle-{i}", CONFIGS["llama-3.1-8b"], trickle_s=0.03)
    # The healthy one takes ~0.05 s on a quiet machine, 0.4 s with the eight starting on a loaded one:
    # the deadline leaves it room, and the trickles (some 3 s each) still end at the deadline.
    client = HubClient(settings_for(hub, tmp_path, timeout_s=1.2))
    trickling = [asyncio.ensure_future(client.resolve(f"acme/Trickle-{i}")) for i in range(8)]
    for _ in range(500):
        if hub.count("/api/models/acme/Trickle-") == 8:
            break
        await asyncio.sleep(0.01)
    healthy = await client.resolve("acme/Llama-8B")
    assert healthy.architecture.parameter_count == 8_030_261_248
    assert not any(task.done() for task in trickling)  # answered while all eight were in flight
    outcomes = await asyncio.gather(*trickling, return_exceptions=True)
    assert [getattr(outcome, "kind", outcome) for outcome in outcomes] == ["unavailable"] * 8
    for _ in range(25):  # each thread gave up at the deadline, not at the trickle's last byte
        if client.threads.busy == 0:
            break
        await asyncio.sleep(0.02)
    assert client.threads.busy == 0


async def test_whatever_huggingface_hub_or_json_raises_is_a_clear_failure(
    hub: FakeHub, tmp_path: Path
) -> None:
    hub.add("acme/Deep", raw=b"[" * 100_000 + b"]" * 100_000)  # RecursionError in json.loads
    hub.add("acme/Files-Down", CONFIGS["llama-3.1-8b"], files_status=503)  # retried, after sleeps
    # FileMetadataError, made a LocalEntryNotFoundError, as a timeout of the file's HEAD is:
    hub.add("acme/No-ETag", CONFIGS["llama-3.1-8b"], files_without_etag=True)
    hub.add("acme/Info-Cut", info_raw=b'{"id": "acme/Info-Cut"')  # JSONDecodeError
    hub.add("acme/Info-List", info_raw=b"[1, 2]")  # TypeError in ModelInfo(**data)
    expected = {
        "acme/Deep": "malformed",
        "Qwen/a--b": "not_found",  # HFValidationError: an ID the Hub forbids, never sent to it
        "acme/Files-Down": "unavailable",  # at once: huggingface_hub slept 1 + 2 + 4 + 8 s on it
        "acme/No-ETag": "unavailable",  # an outage, not "no config.json" (which would be kept)
        "acme/Info-Cut": "unavailable",
        "acme/Info-List": "unavailable",
    }
    for repo, kind in expected.items():
        with pytest.raises(HubFailure) as caught:
            await asyncio.to_thread(fetch_architecture, repo, settings_for(hub, tmp_path))
        assert caught.value.kind == kind, repo


async def test_the_disk_cache_keeps_the_most_recently_used_repos(hub: FakeHub, tmp_path: Path) -> None:
    for name in "ABC":
        hub.add(f"acme/Cache-{name}", CONFIGS["llama-3.1-8b"])
    # Another tool's model, with weights, used long ago: never removed.
    weights = tmp_path / "models--other--Weights"
    (weights / "blobs").mkdir(parents=True)
    with (weights / "blobs" / "0123").open("wb") as blob:
        blob.truncate(SMALL_FILE_MAX + 1)
    os.utime(weights, (0, 0))
    settings = dataclasses.replace(settings_for(hub, tmp_path), cache_max_repos=2)
    for repo in ("acme/Cache-A", "acme/Cache-B", "acme/Cache-A", "acme/Cache-C"):
        await asyncio.to_thread(fetch_architecture, repo, settings)
    assert sorted(name for name in os.listdir(tmp_path) if name.startswith("models--")) == [
        "models--acme--Cache-A",  # used again after B
        "models--acme--Cache-C",
        "models--other--Weights",
    ]
