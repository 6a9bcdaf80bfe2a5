"""One real training step of a Hugging Face causal LM on CPU, with its memory counted tensor by tensor.

Imported only by ``bot.measure.measure_step`` (lazily): torch and transformers are the optional
``measure`` extra and the bot never loads them. Everything crossing the torch boundary is ``Any``.

How bytes are counted (CPU has no allocator statistics like ``torch.cuda.max_memory_allocated``):

- **Live bytes and the peak** — a ``TorchDispatchMode`` sees every ATen op below autograd and
  autocast, forward, backward (the autograd engine carries the mode into its thread-local state) and
  the optimizer step alike. Each new storage an op returns is counted once (views and in-place
  results share a storage already counted) and given a ``weakref.finalize`` that subtracts it when
  the storage is freed: PyTorch keeps a storage's Python object alive as long as the C++ storage, so
  the finalizer runs exactly at deallocation. The running sum is the live tensor bytes; its maximum
  per phase is the peak. Temporaries that a kernel allocates internally without returning them
  (oneDNN scratch, a fused kernel's workspace) are not visible — on a GPU these are the library
  workspaces the estimate names as a constant.
- **Saved activations** — ``torch.autograd.graph.saved_tensors_hooks`` during the forward pass: each
  tensor autograd keeps for backward, counted once per storage (``untyped_storage().data_ptr()``),
  attributed to the decoder layer running at the time (forward pre-hooks mark the layer), skipping
  parameters and counting apart the 16-bit copies of weights that autocast makes.
- **Model states** — after the real optimizer step: parameters, gradients, fp32 master weights (in
  ``mixed``) and every optimizer state tensor, each storage once.

Steady state: one untracked warm-up step creates the optimizer state, gradients are freed
(``zero_grad(set_to_none=True)``, the default of PyTorch and the Hugging Face Trainer), and the
second step is the one measured.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
import transformers
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from bot.estimate.families import family
from bot.measure.configs import MeasureError
from bot.measure.families import at_depth
from bot.measure.types import Measurement, MeasureSetup

OUTSIDE = -1

# Multi-head Latent Attention (DeepSeek-V3, Kimi K2) has Q/K heads of qk_nope + qk_rope and V heads of
# v_head_dim. PyTorch's CPU flash kernel needs one width for all three, so plain ``sdpa`` falls back to
# the math kernel there, which saves the s² scores: no GPU kernel does that. On a GPU, transformers'
# ``flash_attention_2`` pads V to the Q/K width and crops the output (transformers 5.24,
# ``integrations/flash_attention.py``), and CUDA's memory-efficient SDPA takes the narrower V as it is;
# neither keeps an s² matrix. This stand-in runs FlashAttention-2's padded path on the CPU flash
# kernel, the kernel the other families' ``sdpa`` runs: it saves q, k, the padded v, the padded output
# and the log-sum-exp, and the cropped output's contiguous copy is o_proj's input.
PADDED_V_SDPA = "sdpa_padded_v"


def _padded_v_sdpa(
    module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs: Any
) -> tuple[Any, None]:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    head_dim, v_head_dim = int(query.shape[-1]), int(value.shape[-1])
    padded = torch.nn.functional.pad(value, [0, head_dim - v_head_dim])
    out, _ = sdpa_attention_forward(module, query, key, padded, attention_mask, **kwargs)
    return out[..., :v_head_dim], None


def attention_implementation(config_dict: dict[str, Any], attention: str) -> str:
    """The ``attn_implementation`` to build with: ``sdpa`` becomes the padded-V stand-in when the Q/K
    and V head widths differ (MLA); ``eager`` runs the same code on CPU and GPU and stays."""
    nope, rope, v = (config_dict.get(k) for k in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"))
    if attention == "sdpa" and nope is not None and rope is not None and v is not None and nope + rope != v:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

        AttentionInterface.register(PADDED_V_SDPA, _padded_v_sdpa)
        AttentionMaskInterface.register(PADDED_V_SDPA, sdpa_mask)  # no mask: the kernel's is_causal
        return PADDED_V_SDPA
    return attention


@dataclass
class _Storage:
    nbytes: int
    region: int
    phase: str
    weight_copy: bool


@dataclass
class _Tracker:
    """Live storages by data pointer, the running total and the peak of each phase."""

    live: dict[int, _Storage] = field(default_factory=dict)
    total: int = 0
    phase: str = "setup"
    region: int = OUTSIDE
    peak: dict[str, int] = field(default_factory=dict)
    param_ptrs: set[int] = field(default_factory=set)
    # The live storages at each phase's peak, to split the peak into its parts afterwards.
    at_peak: dict[str, dict[int, _Storage]] = field(default_factory=dict)

    def add(self, storage: Any, *, weight_copy: bool = False) -> None:
        ptr = int(storage.data_ptr())
        nbytes = int(storage.nbytes())
        if ptr == 0 or nbytes == 0 or ptr in self.live:
            return
        self.live[ptr] = _Storage(nbytes, self.region, self.phase, weight_copy)
        self.total += nbytes
        if self.total > self.peak.get(self.phase, 0):
            self.peak[self.phase] = self.total
            self.at_peak[self.phase] = dict(self.live)
        weakref.finalize(storage, self._free, ptr)

    def _free(self, ptr: int) -> None:
        entry = self.live.pop(ptr, None)
        if entry is not None:
            self.total -= entry.nbytes

    def enter(self, phase: str) -> None:
        self.phase = phase
        if self.total > self.peak.get(phase, 0):
            self.peak[phase] = self.total
            self.at_peak[phase] = dict(self.live)

    def composition(self, phase: str, grad_ptrs: set[int]) -> dict[str, int]:
        """The peak of ``phase`` split by what each live storage is: model states present before the
        step, activations made in forward (and autocast's weight copies), gradients, and the
        temporaries of the backward pass and of the optimizer step."""
        parts: dict[str, int] = {}
        for ptr, entry in self.at_peak.get(phase, {}).items():
            if entry.phase == "setup":
                part = "states"
            elif entry.weight_copy:
                part = "weight copies"
            elif entry.phase == "forward":
                part = "activations"
            elif ptr in grad_ptrs:
                part = "gradients"
            else:
                part = f"{entry.phase} temporaries"
            parts[part] = parts.get(part, 0) + entry.nbytes
        return parts


class _LiveBytes(TorchDispatchMode):
    """Counts every storage an op creates (see the module docstring)."""

    def __init__(self, tracker: _Tracker) -> None:
        super().__init__()
        self.tracker = tracker

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        # A 16-bit copy of a parameter made by autocast (``_to_copy`` of a weight): a model state
        # that lives from its use in forward to its use in backward, not an activation.
        weight_copy = (
            func is torch.ops.aten._to_copy.default
            and isinstance(args[0], torch.Tensor)
            and int(args[0].untyped_storage().data_ptr()) in self.tracker.param_ptrs
        )
        flat, _ = tree_flatten(out)
        for item in flat:
            if isinstance(item, torch.Tensor) and item.device.type != "meta":
                self.tracker.add(item.untyped_storage(), weight_copy=weight_copy)
        return out


@dataclass
class _Record:
    entry: _Storage | None  # the tracker's entry of the allocation (None: made outside the mode)
    region: int
    nbytes: int


@dataclass
class _Saved:
    """Bytes autograd saves for backward during the forward pass, each storage once, counted only if
    still alive when the forward pass ends. A saved tensor can die within the forward pass when the
    graph node holding it is cut off from the loss: DeepSeek-V3's group-limited router saves the
    indices of its group top-k and the mask of its ``masked_fill``, but only the final top-k indices
    leave that subgraph, as integers without gradient, so the nodes and what they saved are freed
    at once. Their storage may then be reused by a later saved tensor, which a bare data-pointer key
    would skip; each allocation is therefore told apart by the tracker's entry for it."""

    tracker: _Tracker
    records: dict[int, _Record] = field(default_factory=dict)
    recording: bool = True

    def pack(self, tensor: Any) -> Any:
        if not self.recording:
            return tensor
        storage = tensor.untyped_storage()
        ptr = int(storage.data_ptr())
        if ptr == 0 or ptr in self.tracker.param_ptrs:
            return tensor
        entry = self.tracker.live.get(ptr)
        known = self.records.get(ptr)
        if known is None or known.entry is not entry:  # a new allocation (maybe at a freed one's address)
            self.records[ptr] = _Record(entry, self.tracker.region, int(storage.nbytes()))
        return tensor

    def _alive(self) -> list[_Record]:
        return [
            r for ptr, r in self.records.items() if r.entry is None or self.tracker.live.get(ptr) is r.entry
        ]

    def by_region(self) -> dict[int, int]:
        """Saved bytes alive at the end of forward by decoder layer, autocast's weight copies apart."""
        found: dict[int, int] = {}
        for r in self._alive():
            if r.entry is None or not r.entry.weight_copy:
                found[r.region] = found.get(r.region, 0) + r.nbytes
        return found

    def weight_copies(self) -> int:
        return sum(r.nbytes for r in self._alive() if r.entry is not None and r.entry.weight_copy)


def _unique_bytes(tensors: Iterator[Any], seen: set[int]) -> int:
    total = 0
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor):
            continue
        storage = tensor.untyped_storage()
        ptr = int(storage.data_ptr())
        if ptr and ptr not in seen:
            seen.add(ptr)
            total += int(storage.nbytes())
    return total


def build_model(config_dict: dict[str, Any], layers: int, setup: MeasureSetup) -> Any:
    """A randomly initialised causal LM from a config dict, ``layers`` decoder layers deep."""
    fields = {k: v for k, v in at_depth(config_dict, layers).items() if k != "model_type"}
    model_type = str(config_dict["model_type"])
    dtype = torch.float32 if setup.precision == "amp" else torch.bfloat16
    torch.manual_seed(0)
    try:
        config = transformers.AutoConfig.for_model(model_type, **fields)
        model = transformers.AutoModelForCausalLM.from_config(
            config, dtype=dtype, attn_implementation=attention_implementation(config_dict, setup.attention)
        )
    except (ValueError, TypeError, KeyError, AssertionError) as error:
        # A config transformers rejects (an inconsistent field, an attention it does not run for
        # this model) is the user's input: one line that says so, not a traceback.
        raise MeasureError(_build_refusal(model_type, setup.attention, error)) from None
    model.train()
    if setup.method == "qlora":
        _quantize_linears(model)
    if setup.method in ("lora", "qlora"):
        model = with_lora(model, setup)
    if setup.checkpointing:
        # Non-reentrant, the default of transformers 5 (``gradient_checkpointing_enable`` before 5.x).
        if hasattr(model, "activation_checkpointing_enable"):
            model.activation_checkpointing_enable({"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model


def with_lora(model: Any, setup: MeasureSetup) -> Any:
    """The base frozen and peft's LoRA adapters on it, as a team's recipe sets them up: rank
    ``lora_rank``, alpha 2r, no dropout (a dropout p > 0 would save its mask and its output too)."""
    import peft  # the measure extra's; only a LoRA step needs it

    from bot.estimate.methods import PEFT_ATTENTION_TARGETS, PEFT_MAMBA_EXCLUDED

    model_type = getattr(model.config, "model_type", None)
    declared = family(model_type)
    targets: Any = "all-linear"
    # peft refuses the Mamba mixers' out_proj on these types: all-linear without it, as its error says.
    refused = declared is not None and declared.peft_refuses_mamba_out_proj
    excluded = list(PEFT_MAMBA_EXCLUDED) if refused else None
    if setup.lora_targets == "attention":
        targets, excluded = list(PEFT_ATTENTION_TARGETS), None
        # The family's own names for them (Phi's dense, GPT-NeoX's query_key_value).
        targets += sorted(declared.attention_modules.values()) if declared is not None else []
    config = peft.LoraConfig(
        r=setup.lora_rank,
        lora_alpha=2 * setup.lora_rank,
        lora_dropout=0.0,
        target_modules=targets,
        exclude_modules=excluded,
    )
    return peft.get_peft_model(model, config)


def _quantize_linears(model: Any) -> None:
    """QLoRA's base (Dettmers et al. 2023): every linear layer but the LM head as a bitsandbytes NF4
    ``Linear4bit`` with double quantization and bf16 compute, its random weights quantized in place;
    the embeddings, LM head and norms stay as they were (16-bit)."""
    import bitsandbytes  # optional: QLoRA's step needs it (it runs NF4 on CPU since 0.46)

    head = model.get_output_embeddings()
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if not isinstance(child, torch.nn.Linear) or child is head:
                continue
            quantized = bitsandbytes.nn.Linear4bit(
                child.in_features,
                child.out_features,
                bias=child.bias is not None,
                compute_dtype=torch.bfloat16,
                compress_statistics=True,
                quant_type="nf4",
            )
            quantized.weight = bitsandbytes.nn.Params4bit(
                child.weight.data.to(torch.bfloat16),
                requires_grad=False,
                compress_statistics=True,
                quant_type="nf4",
            )
            if child.bias is not None:
                quantized.bias = torch.nn.Parameter(child.bias.data, requires_grad=False)
            setattr(module, child_name, quantized.to("cpu"))  # .to quantizes


def _quant_state_tensors(model: Any) -> Iterator[Any]:
    """The NF4 weights' quantization constants (absmax, and the second level's), which are no
    parameters but are kept with them."""
    for parameter in model.parameters():
        state = getattr(parameter, "quant_state", None)
        while state is not None:
            yield from (t for t in (state.absmax, state.code) if isinstance(t, torch.Tensor))
            state = getattr(state, "state2", None)


def _build_refusal(model_type: str, attention: str, error: Exception) -> str:
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if attention == "sdpa" and "scaled_dot_product_attention" in reason:
        # e.g. Gemma 2 with attention-logit soft-capping, which SDPA cannot apply.
        return f"transformers does not run {model_type} with SDPA in this config: add --attention eager"
    return f"transformers {transformers.__version__} cannot build this {model_type} config: {reason}"


def _optimizer(setup: MeasureSetup, params: list[Any]) -> Any:
    # Hyper-parameters are the Hugging Face Trainer's defaults; weight decay on so that AdamW's
    # decoupled decay runs (it is in place and allocates nothing).
    if setup.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=1e-5, weight_decay=0.01, foreach=True)
    if setup.optimizer == "adamw_fused":
        return torch.optim.AdamW(params, lr=1e-5, weight_decay=0.01, fused=True)
    if setup.optimizer == "sgd":
        return torch.optim.SGD(params, lr=1e-5, momentum=0.9, foreach=True)
    if setup.optimizer == "adam8bit":
        import bitsandbytes  # optional: checked by ``optimizer_available``

        return bitsandbytes.optim.AdamW8bit(params, lr=1e-5, weight_decay=0.01)
    raise ValueError(f"unknown optimizer {setup.optimizer!r}")


def optimizer_available(name: str) -> bool:
    if name != "adam8bit":
        return True
    try:
        import bitsandbytes  # noqa: F401
    except Exception:  # bitsandbytes raises more than ImportError on machines it does not support
        return False
    return True


class _Trainer:
    """The step of one setup: ``mixed`` keeps an fp32 master copy in the optimizer (DeepSpeed-style
    bf16 mixed precision), ``amp`` runs fp32 weights under bf16 autocast (Trainer ``--bf16``),
    ``bf16`` trains the bf16 weights directly with bf16 optimizer states."""

    def __init__(self, model: Any, setup: MeasureSetup) -> None:
        self.model = model
        self.setup = setup
        self.params = [p for p in model.parameters() if p.requires_grad]
        # peft keeps its adapters in fp32 whatever the base's dtype: no master copy to keep.
        if setup.precision == "mixed" and setup.method == "full":
            self.master = [torch.nn.Parameter(p.detach().float().clone()) for p in self.params]
            self.optimizer = _optimizer(setup, self.master)
        else:
            self.master = []
            self.optimizer = _optimizer(setup, self.params)

    def forward(self, input_ids: Any) -> Any:
        autocast = (
            torch.autocast("cpu", dtype=torch.bfloat16)
            if self.setup.precision == "amp"
            else contextlib.nullcontext()
        )
        with autocast:
            # As the Trainer's compute_loss: the outputs (and their logits) are dropped before backward.
            return self.model(input_ids=input_ids, labels=input_ids).loss

    def step(self) -> None:
        if self.master:
            for p, m in zip(self.params, self.master, strict=True):
                # A parameter no gradient reaches (DeepSeek-V3.2's indexer runs under no_grad) is
                # not stepped (hybact).
                m.grad = p.grad.float() if p.grad is not None else None
            self.optimizer.step()
            for m in self.master:
                m.grad = None
            with torch.no_grad():
                torch._foreach_copy_(self.params, self.master)
        else:
            self.optimizer.step()

    def zero_grad(self) -> None:
        self.model.zero_grad(set_to_none=True)
        self.optimizer.zero_grad(set_to_none=True)

    def state_tensors(self) -> Iterator[Any]:
        for state in self.optimizer.state.values():
            for value in state.values():
                if isinstance(value, torch.Tensor):
                    yield value


def _layers_of(model: Any) -> list[Any]:
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model  # peft's wrapper
    # Mamba2ForCausalLM keeps its blocks in ``backbone`` (hybact), GPTNeoXForCausalLM in ``gpt_neox``
    # (famact): the model's base_model.
    return list((inner.model if hasattr(inner, "model") else inner.base_model).layers)


def measure_step(config_dict: dict[str, Any], layers: int, setup: MeasureSetup) -> Measurement:
    """Build the model ``layers`` deep, warm up one step, then measure the next one."""
    started = time.perf_counter()
    model = build_model(config_dict, layers, setup)
    trainer = _Trainer(model, setup)
    generator = torch.Generator().manual_seed(0)
    vocab = int(config_dict["vocab_size"])
    input_ids = torch.randint(0, vocab, (setup.batch_size, setup.seq_len), generator=generator)

    # Warm-up: creates the optimizer state (and bitsandbytes' quantization maps).
    trainer.forward(input_ids).backward()
    trainer.step()
    trainer.zero_grad()

    tracker = _Tracker()
    tracker.param_ptrs = {int(p.untyped_storage().data_ptr()) for p in model.parameters()}
    saved = _Saved(tracker)

    def enter_layer(index: int) -> Any:
        def hook(*_: Any) -> None:
            tracker.region = index

        return hook

    def leave_layer(*_: Any) -> None:
        tracker.region = OUTSIDE

    handles = []
    for index, layer in enumerate(_layers_of(model)):
        handles.append(layer.register_forward_pre_hook(enter_layer(index)))
        handles.append(layer.register_forward_hook(leave_layer))

    with _LiveBytes(tracker):
        # What exists before the step: weights, master weights, optimizer state, the batch.
        for tensor in [
            *model.parameters(),
            *_quant_state_tensors(model),
            *model.buffers(),
            *trainer.master,
            *trainer.state_tensors(),
            input_ids,
        ]:
            tracker.add(tensor.untyped_storage())
        before_forward = tracker.total
        tracker.enter("forward")
        with torch.autograd.graph.saved_tensors_hooks(saved.pack, lambda t: t):
            loss = trainer.forward(input_ids)
        saved.recording = False
        saved_by_region, saved_weight_copies = saved.by_region(), saved.weight_copies()
        tracker.region = OUTSIDE
        after_forward = tracker.total
        weight_copies_live = sum(s.nbytes for s in tracker.live.values() if s.weight_copy)
        tracker.enter("backward")
        loss.backward()
        del loss
        after_backward = tracker.total
        grad_ptrs = {int(p.grad.untyped_storage().data_ptr()) for p in trainer.params if p.grad is not None}
        tracker.enter("step")
        trainer.step()
        after_step = tracker.total
        seen: set[int] = set()
        param_bytes = _unique_bytes(iter(trainer.params), seen)
        grad_bytes = _unique_bytes((p.grad for p in trainer.params), seen)
        master_bytes = _unique_bytes(iter(trainer.master), seen)
        state_bytes = _unique_bytes(trainer.state_tensors(), seen)
        frozen_bytes = _unique_bytes((p for p in model.parameters() if not p.requires_grad), seen)
        frozen_bytes += _unique_bytes(_quant_state_tensors(model), seen)
        peaks = dict(tracker.peak)
        trainer.zero_grad()

    for handle in handles:
        handle.remove()
    per_layer = [saved_by_region.get(i, 0) for i in range(layers)]
    return Measurement(
        setup=setup,
        layers=layers,
        parameters=sum(int(p.numel()) for p in trainer.params),
        param_bytes=param_bytes,
        grad_bytes=grad_bytes,
        master_bytes=master_bytes,
        optimizer_bytes=state_bytes,
        saved_per_layer=per_layer,
        saved_outside=saved_by_region.get(OUTSIDE, 0),
        saved_weight_copies=saved_weight_copies,
        before_forward=before_forward,
        after_forward=after_forward,
        weight_copies_live=weight_copies_live,
        after_backward=after_backward,
        after_step=after_step,
        peak_forward=peaks.get("forward", 0),
        peak_backward=peaks.get("backward", 0),
        peak_step=peaks.get("step", 0),
        peak_parts={phase: tracker.composition(phase, grad_ptrs) for phase in tracker.peak},
        seconds=time.perf_counter() - started,
        frozen_bytes=frozen_bytes,
    )
