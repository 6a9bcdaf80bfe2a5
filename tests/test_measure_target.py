"""What ``vram-bot measure`` measures: a preset's derived config, a Hub repo's config.json (from the
fake Hub), a file or a family, and the refusals, all without torch (the step itself is
``tests/test_measure.py``, under the ``accuracy`` marker)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bot.measure.__main__ as measure_cli
from bot.cli import main
from bot.estimate.hub import architecture_from_config, forget_all
from bot.estimate.models import presets
from bot.measure.configs import (
    MeasureError,
    Target,
    at_depth,
    buildable_config,
    config_for,
    model_type_of,
    preset_target,
)
from bot.measure.types import MeasureSetup
from tests.fake_hub import FakeHub, point_hub_client_at, running_in_thread
from tests.fresh_python import FreshSteps
from tests.hub_configs import CONFIGS

TINY_LLAMA: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 176,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_hidden_layers": 4,
    "vocab_size": 256,
    "tie_word_embeddings": False,
}
BERT = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 768}


# --- presets ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(presets()))
def test_every_presets_config_counts_back_to_the_preset_exactly(key: str) -> None:
    preset = presets()[key]
    config = config_for(preset)
    found = architecture_from_config(preset.hub_id or key, config)
    assert found.parameter_count == preset.parameter_count
    assert found.active_parameter_count == preset.active_parameter_count
    assert preset_target(preset).architecture is preset  # estimated by the preset itself


@pytest.mark.parametrize(
    ("key", "model_type"),
    [
        ("llama-3.1-8b", "llama"),
        ("mistral-small-3", "mistral"),
        ("mixtral-8x22b", "mixtral"),
        ("qwen2.5-72b", "qwen2"),
        ("qwen3-32b", "qwen3"),
        ("qwen3-235b-a22b", "qwen3_moe"),
        ("gemma-2-27b", "gemma2"),
        ("gemma-3-4b", "gemma3_text"),
        ("phi-3-mini", "phi3"),
        ("phi-4", "phi3"),
        ("deepseek-r1", "deepseek_v3"),
        ("kimi-k2", "deepseek_v3"),
        ("gpt-oss-20b", "gpt_oss"),
        ("glm-4.5-air", "glm4_moe"),
        ("llama-4-maverick", "llama4_text"),
    ],
)
def test_each_family_gets_its_transformers_model_type(key: str, model_type: str) -> None:
    assert model_type_of(presets()[key]) == model_type


def test_sliding_layers_follow_the_families_pattern() -> None:
    gemma3 = config_for(presets()["gemma-3-4b"])["layer_types"]
    assert len(gemma3) == 34
    assert gemma3.count("sliding_attention") == 29
    assert gemma3[:6] == ["sliding_attention"] * 5 + ["full_attention"]  # every 6th layer global
    gpt_oss = config_for(presets()["gpt-oss-20b"])["layer_types"]
    assert gpt_oss == ["sliding_attention", "full_attention"] * 12
    # Mistral's config class defaults to a 4096 window; Mistral Small 3 has none.
    assert config_for(presets()["mistral-small-3"])["sliding_window"] is None
    assert config_for(presets()["mistral-7b"])["sliding_window"] == 4096


def test_a_preset_without_a_family_or_with_a_shape_its_family_lacks_is_refused_clearly() -> None:
    llama = presets()["llama-3.1-8b"]
    with pytest.raises(MeasureError, match="has no transformers family"):
        model_type_of(llama.model_copy(update={"key": "falcon-7b", "name": "Falcon 7B"}))
    # Llama's attention_bias puts biases on q, k, v and o together: q/k/v alone is not a Llama.
    odd = llama.model_copy(update={"qkv_bias": True})
    with pytest.raises(MeasureError, match="cannot be written as a llama config"):
        preset_target(odd)


def test_two_layers_of_a_preset_are_what_the_measurement_builds() -> None:
    deepseek = at_depth(presets()["deepseek-v3"], 2)
    assert deepseek.layers == 2
    assert deepseek.moe_layers == 0
    gemma = at_depth(presets()["gemma-3-27b"], 2)
    assert gemma.sliding_window_layers == 2
    # decl2: DeepSeek-V4 Flash's two first layers are hash-routed, of its three.
    assert at_depth(presets()["deepseek-v4-flash"], 2).hash_routed_layers == 2


# --- configs from the Hub or a file ----------------------------------------------------------------


def test_a_multimodal_config_is_built_as_its_text_model() -> None:
    built = buildable_config(CONFIGS["gemma-3-27b"])
    assert built["model_type"] == "gemma3_text"
    assert "vision_config" not in built
    assert "text_config" not in built
    assert built["num_hidden_layers"] == 62
    llama4 = buildable_config({"model_type": "llama4", "text_config": {"hidden_size": 8}, "vocab_size": 5})
    assert llama4 == {"model_type": "llama4_text", "hidden_size": 8, "vocab_size": 5, "use_cache": False}


def test_a_quantized_or_remote_code_config_is_built_plain() -> None:
    built = buildable_config({**CONFIGS["deepseek-v3"], "auto_map": {"AutoModel": "x.Y"}})
    assert "quantization_config" not in built
    assert "auto_map" not in built
    assert buildable_config({"model_type": "kimi_k2"})["model_type"] == "deepseek_v3"


# --- the command line ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["llama-3.1-8b", "--family", "llama"],
        ["--config", "c.json", "--family", "llama"],
        ["llama-3.1-8b", "--batch-size", "0"],
        ["llama-3.1-8b", "--seq-len", "1"],
    ],
)
def test_exactly_one_model_source_or_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["measure", *argv])
    assert exited.value.code == 2
    assert "usage: vram-bot measure" in capsys.readouterr().err


def test_help_names_the_defaults_and_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["measure", "--help"])
    out = capsys.readouterr().out
    assert "MODEL" in out
    assert "default: mixed" in out
    assert "default: 512" in out
    assert "vram-bot measure llama-3.1-8b" in out


@pytest.mark.parametrize(
    ("typed", "key"),
    [("llama-3.1-8b", "llama-3.1-8b"), ("llama 8", "llama-3.1-8b"), ("qwen72", "qwen2.5-72b")],
)
def test_a_preset_by_any_name_autocomplete_takes(typed: str, key: str) -> None:
    target = measure_cli.resolve(typed)
    assert target.architecture.key == key
    assert target.config == config_for(presets()[key])


def test_a_presets_own_repo_id_is_measured_from_the_preset_offline() -> None:
    # HF_ENDPOINT is a closed port here (conftest): a Hub request would fail.
    target = measure_cli.resolve("Qwen/Qwen3-8B")
    assert target.architecture.key == "qwen3-8b"
    assert target.label.startswith("Qwen3 8B (preset qwen3-8b")


@pytest.mark.parametrize(
    ("typed", "said"),
    [("zzzq", "give one of the presets"), ("../etc/passwd", "nor a Hugging Face repo ID")],
)
def test_a_name_that_is_neither_is_refused_as_vram_refuses_it(
    typed: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["measure", typed]) == 2
    err = capsys.readouterr().err
    assert err.startswith("measure: ")
    assert said in err
    assert err.count("\n") == 1


def _no_step(*_: object) -> Any:
    raise AssertionError("a model refused for its size must not be built")


@pytest.mark.parametrize(("model", "name"), [("kimi-k2", "Kimi K2"), ("llama 3.1 405b", "Llama 3.1 405B")])
def test_a_model_too_large_at_two_layers_exits_2_with_the_memory_it_needs(
    model: str, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(measure_cli, "available_bytes", lambda: 64 * 10**9)
    monkeypatch.setattr(measure_cli, "measure_step", _no_step)
    monkeypatch.setattr(measure_cli, "torch_available", _no_step)  # refused before torch is looked for
    assert main(["measure", model]) == 2
    err = capsys.readouterr().err
    assert "two layers (" in err
    assert f"of {name} (preset" in err
    need = float(err.split("needs about ")[1].split(" GB")[0])
    assert need > 0.7 * 64  # what it needs is more than the share of 64 GB it may use


def test_the_memory_needed_follows_the_presets_own_architecture() -> None:
    setup = MeasureSetup(batch_size=1, seq_len=512)
    kimi = measure_cli.needed_bytes(preset_target(presets()["kimi-k2"]), setup)
    # Two layers of Kimi K2: one dense, one of 384 experts: about 20B parameters at 16 B each and more.
    assert at_depth(presets()["kimi-k2"], 2).parameter_count > 19e9
    assert kimi > 16 * 19e9


def test_the_figures_are_printed_under_the_models_name(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(measure_cli, "torch_available", lambda: True)
    monkeypatch.setattr(measure_cli, "transformers_refuses", lambda _: None)
    monkeypatch.setattr(measure_cli, "available_bytes", lambda: 10**15)
    seen: list[Target] = []

    def run(target: Target, setup: MeasureSetup) -> dict[str, float]:
        seen.append(target)
        return {"layers": target.architecture.layers, "parameters": 8e9, "peak_measured": 5e10}

    monkeypatch.setattr(measure_cli, "run", run)
    assert main(["measure", "llama 8", "--precision", "bf16"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split(maxsplit=1) == ["model", "Llama 3.1 8B (preset llama-3.1-8b, built as llama)"]
    assert lines[1:] == [
        f"{'layers':24} 32",
        f"{'parameters':24} 8,000,000,000",
        f"{'peak_measured':24} 50.0000 GB",
    ]
    assert seen[0].config["model_type"] == "llama"


def test_a_config_file_and_a_family_still_work(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "qwen3", "hidden_size": 64}', encoding="utf-8")
    args = measure_cli.parse_args(["--config", str(path)], "vram-bot measure")
    with pytest.raises(MeasureError, match="lacks a field the estimate needs"):
        measure_cli.target_of(args)
    args = measure_cli.parse_args(["--family", "gemma3"], "vram-bot measure")
    target = measure_cli.target_of(args)
    assert target.config["model_type"] == "gemma3_text"
    assert target.architecture.layers == 2


# --- Hub repos, from the fake Hub ------------------------------------------------------------------


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    hub = FakeHub()
    hub.add("acme/Tiny-Llama", TINY_LLAMA, stored_params=1_000)
    hub.add("acme/Gemma-Like", CONFIGS["gemma-3-27b"])
    hub.add("acme/Gated-8B", CONFIGS["llama-3.1-8b"], gated=True)
    hub.add("acme/No-Config", TINY_LLAMA, files=set())
    hub.add("acme/Bert", BERT)
    with running_in_thread(hub):
        yield hub
    forget_all()


@pytest.fixture
def hub_env(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    point_hub_client_at(hub, tmp_path, monkeypatch, token="hf_not_a_real_token_but_secret")
    hub.requests.clear()
    return hub


def test_a_repo_is_read_from_the_hub_and_built_from_its_config(hub_env: FakeHub) -> None:
    target = measure_cli.resolve("acme/Tiny-Llama")
    assert target.config == buildable_config(TINY_LLAMA)
    assert target.architecture.parameter_count == architecture_from_config("a/b", TINY_LLAMA).parameter_count
    assert target.label.startswith("acme/Tiny-Llama (Hugging Face at ")
    assert target.label.endswith(", built as llama)")
    # config.json, the model's metadata and the safetensors headers only: never a weight file whole.
    files = {path.rsplit("/", 1)[-1] for _, path in hub_env.requests if "/resolve" in path}
    assert "config.json" in files
    assert files <= {"config.json", "model.safetensors", "model.safetensors.index.json"}  # kept per commit
    assert hub_env.whole_weight_reads == 0


def test_a_multimodal_repo_is_measured_as_its_text_model(hub_env: FakeHub) -> None:
    target = measure_cli.resolve("acme/Gemma-Like")
    assert target.config["model_type"] == "gemma3_text"
    assert target.architecture.parameter_count == presets()["gemma-3-27b"].parameter_count


def test_a_big_repo_is_refused_for_its_size_after_the_lookup(
    hub_env: FakeHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(measure_cli, "available_bytes", lambda: 10**9)
    monkeypatch.setattr(measure_cli, "measure_step", _no_step)
    assert main(["measure", "acme/Gemma-Like"]) == 2
    assert "of acme/Gemma-Like (Hugging Face at " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("repo", "said"),
    [
        ("acme/Gated-8B", "HF_TOKEN"),
        ("acme/Missing", "acme/Missing"),
        ("acme/No-Config", "config.json"),
        ("acme/Bert", "bert"),
    ],
)
def test_hub_failures_exit_2_in_estimates_words(
    repo: str, said: str, hub_env: FakeHub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["measure", repo]) == 2
    err = capsys.readouterr().err
    assert main(["estimate", "--model", repo]) == 2
    estimate_err = capsys.readouterr().err
    assert err.startswith("measure: ")
    assert err.count("\n") == 1
    assert err.removeprefix("measure: ") == estimate_err.removeprefix("vram-bot: ")
    assert said in err
    assert "hf_not_a_real_token" not in err


def test_offline_a_repo_comes_from_the_disk_cache_or_is_refused(
    hub_env: FakeHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    measure_cli.resolve("acme/Tiny-Llama")  # fills the cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub_env.requests.clear()
    assert measure_cli.resolve("acme/Tiny-Llama").config == buildable_config(TINY_LLAMA)
    assert main(["measure", "acme/Other"]) == 2
    assert "HF_HUB_OFFLINE" in capsys.readouterr().err
    assert hub_env.requests == []


def test_a_preset_refused_for_its_size_loads_neither_torch_nor_the_hub_client(
    fresh_steps: FreshSteps,
) -> None:
    # A fresh interpreter's `vram-bot measure kimi-k2` (tests/fresh_python.py), after the offline
    # preview. Kimi K2's two layers need some 478 GB: refused on any machine with less than ~680 GB.
    step = fresh_steps.step("measure kimi-k2")
    assert step.loaded_of("torch", "transformers", "huggingface_hub") == []
    assert "needs about" in step.stderr
