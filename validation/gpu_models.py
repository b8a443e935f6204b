"""The GPU suite's models, written with torch alone (torchvision and transformers are not installed beside
this torch build; nothing is downloaded), random weights, at the shapes of their reference versions:

- ViT-B/16 with torchvision's ``vit_b_16`` shapes (86,567,656 parameters; Dosovitskiy et al. 2021);
- GPT-2 medium (24 x 1024, 16 heads, 1024 positions, tied embedding: 354,823,168 parameters, Hugging Face's
  ``gpt2-medium``; Radford et al. 2019);
- a Llama-style decoder (RMSNorm, rotary positions, grouped-query attention, SwiGLU; Touvron et al. 2023) at
  Llama 3.2 1B's and Llama 3.1 8B's published config.json shapes, with a KV cache for prefill and decode;
- LoRA adapters (Hu et al. 2021) over chosen projections of a frozen model.

The decoders attend with ``torch.nn.functional.scaled_dot_product_attention`` (flash or memory-efficient
kernels on a GPU), as Hugging Face's models do by default. ResNet-50 and BERT come from
:mod:`validation.model_zoo`. Every builder imports torch lazily and takes its sizes, so that the test suite
builds the same code small on a CPU, or full size on the meta device to check the shapes.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DecoderShape:
    """A decoder's published shape (config.json field names in the comments)."""

    layers: int  # num_hidden_layers
    d_model: int  # hidden_size
    heads: int  # num_attention_heads
    kv_heads: int  # num_key_value_heads
    ffn: int  # intermediate_size
    vocab: int  # vocab_size
    tied: bool  # tie_word_embeddings
    rope_theta: float = 500_000.0


# meta-llama/Llama-3.2-1B and meta-llama/Llama-3.1-8B config.json (catalog/hf_configs)
LLAMA_3_2_1B = DecoderShape(layers=16, d_model=2048, heads=32, kv_heads=8, ffn=8192, vocab=128_256, tied=True)
LLAMA_3_1_8B = DecoderShape(layers=32, d_model=4096, heads=32, kv_heads=8, ffn=14_336, vocab=128_256, tied=False)
DECODERS = {"llama-3.2-1b": LLAMA_3_2_1B, "llama-3.1-8b": LLAMA_3_1_8B}


def vit(image: int = 224, patch: int = 16, d_model: int = 768, layers: int = 12, heads: int = 12, classes: int = 1000):
    """A Vision Transformer: patch convolution, class token, learned positions, pre-norm encoder blocks."""
    import torch
    import torch.nn as nn

    from .model_zoo import _encoder_block

    tokens = (image // patch) ** 2 + 1

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patches = nn.Conv2d(3, d_model, patch, patch)
            self.cls = nn.Parameter(torch.zeros(1, 1, d_model))
            self.positions = nn.Parameter(torch.zeros(1, tokens, d_model))
            self.blocks = nn.Sequential(*(_encoder_block(d_model, heads, 4 * d_model, False, True) for _ in range(layers)))
            self.norm, self.head = nn.LayerNorm(d_model), nn.Linear(d_model, classes)

        def forward(self, images):
            x = self.patches(images).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.positions
            return self.head(self.norm(self.blocks(x))[:, 0])

    return ViT()


def _sdpa_block(d_model: int, heads: int, ffn: int):
    """A GPT-2 block: pre-norm, causal attention through SDPA, a GELU MLP of ``ffn``."""
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.qkv, self.proj = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, ffn), nn.GELU(approximate="tanh"), nn.Linear(ffn, d_model))

        def forward(self, x):
            batch, length, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(batch, length, 3, heads, d_model // heads).permute(2, 0, 3, 1, 4)
            attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(attended.transpose(1, 2).reshape(batch, length, d_model))
            return x + self.mlp(self.ln2(x))

    return Block()


def gpt2(d_model: int = 1024, layers: int = 24, heads: int = 16, vocab: int = 50_257, positions: int = 1024):
    """GPT-2 (default: medium) with SDPA attention and the output layer tied to the token embedding."""
    import torch
    import torch.nn as nn

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, d_model), nn.Embedding(positions, d_model)
            self.blocks = nn.Sequential(*(_sdpa_block(d_model, heads, 4 * d_model) for _ in range(layers)))
            self.norm = nn.LayerNorm(d_model)

        def forward(self, ids):
            x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device))
            return self.norm(self.blocks(x)) @ self.tokens.weight.t()

    return GPT2()


def _rotary(head_size: int, length: int, theta: float, device, offset: int = 0):
    """cos and sin of the rotary angles for positions ``offset .. offset + length`` (Su et al. 2021)."""
    import torch

    inverse = 1.0 / theta ** (torch.arange(0, head_size, 2, device=device, dtype=torch.float32) / head_size)
    angles = torch.outer(torch.arange(offset, offset + length, device=device, dtype=torch.float32), inverse)
    angles = torch.cat([angles, angles], -1)
    return angles.cos(), angles.sin()


def _rotate(x, cos, sin):
    import torch

    half = x.shape[-1] // 2
    turned = torch.cat([-x[..., half:], x[..., :half]], -1)
    return (x * cos.to(x.dtype)) + (turned * sin.to(x.dtype))


def llama(shape: DecoderShape = LLAMA_3_2_1B):
    """A Llama-style decoder of ``shape``. ``model(ids)`` gives the logits of a training pass;
    ``model(ids, cache=cache, start=position)`` fills or extends a KV cache made by ``model.new_cache``."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    head_size = shape.d_model // shape.heads

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(shape.d_model, shape.heads * head_size, bias=False)
            self.k = nn.Linear(shape.d_model, shape.kv_heads * head_size, bias=False)
            self.v = nn.Linear(shape.d_model, shape.kv_heads * head_size, bias=False)
            self.o = nn.Linear(shape.heads * head_size, shape.d_model, bias=False)

        def forward(self, x, cos, sin, cache=None, start: int = 0):
            batch, length, _ = x.shape
            q = self.q(x).view(batch, length, shape.heads, head_size).transpose(1, 2)
            k = self.k(x).view(batch, length, shape.kv_heads, head_size).transpose(1, 2)
            v = self.v(x).view(batch, length, shape.kv_heads, head_size).transpose(1, 2)
            q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
            causal = True
            if cache is not None:  # write this pass's keys and values, attend to everything cached so far
                keys, values = cache
                keys[:, :, start:start + length], values[:, :, start:start + length] = k, v
                k, v = keys[:, :, :start + length], values[:, :, :start + length]
                causal = start == 0  # a prefill is causal; one new token sees every cached one
            if length > 1:  # a pass over many tokens: k and v widened to every head, so flash kernels take it
                k = k.repeat_interleave(shape.heads // shape.kv_heads, 1)
                v = v.repeat_interleave(shape.heads // shape.kv_heads, 1)
                out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            else:  # one new token against the cache: grouped without a copy of the cache
                out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            return self.o(out.transpose(1, 2).reshape(batch, length, -1))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.RMSNorm(shape.d_model, eps=1e-5), nn.RMSNorm(shape.d_model, eps=1e-5)
            self.attention = Attention()
            self.gate = nn.Linear(shape.d_model, shape.ffn, bias=False)
            self.up = nn.Linear(shape.d_model, shape.ffn, bias=False)
            self.down = nn.Linear(shape.ffn, shape.d_model, bias=False)

        def forward(self, x, cos, sin, cache=None, start: int = 0):
            x = x + self.attention(self.norm1(x), cos, sin, cache, start)
            h = self.norm2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(shape.vocab, shape.d_model)
            self.blocks = nn.ModuleList(Block() for _ in range(shape.layers))
            self.norm = nn.RMSNorm(shape.d_model, eps=1e-5)
            self.lm_head = nn.Linear(shape.d_model, shape.vocab, bias=False)
            if shape.tied:
                self.lm_head.weight = self.embed.weight

        def new_cache(self, batch: int, length: int, dtype, device):
            """Keys and values of every block for ``length`` positions: 2 x layers x batch x kv heads x length x head."""
            size = (batch, shape.kv_heads, length, head_size)
            return [(torch.empty(size, dtype=dtype, device=device), torch.empty(size, dtype=dtype, device=device))
                    for _ in range(shape.layers)]

        def forward(self, ids, cache=None, start: int = 0, last_only: bool = False):
            cos, sin = _rotary(head_size, ids.shape[1], shape.rope_theta, ids.device, start)
            x = self.embed(ids)
            for index, block in enumerate(self.blocks):
                x = block(x, cos, sin, None if cache is None else cache[index], start)
            x = self.norm(x)
            return self.lm_head(x[:, -1:] if last_only else x)

    return Llama()


def add_lora(model, rank: int = 16, alpha: float = 32.0, targets: tuple[str, ...] = ("q", "v")):
    """Freeze ``model`` and put a trainable low-rank update ``B A x · alpha / rank`` beside every linear layer
    whose own name is in ``targets`` (Hu et al. 2021; B starts at zero, as peft does). Returns ``model``."""
    import torch
    import torch.nn as nn

    class LoraLinear(nn.Module):
        def __init__(self, base: nn.Linear):
            super().__init__()
            self.base = base
            self.a = nn.Parameter(torch.randn(rank, base.in_features, device=base.weight.device) / rank)
            self.b = nn.Parameter(torch.zeros(base.out_features, rank, device=base.weight.device))
            self.scale = alpha / rank

        def forward(self, x):
            return self.base(x) + (x @ self.a.t().to(x.dtype)) @ self.b.t().to(x.dtype) * self.scale

    for parameter in model.parameters():
        parameter.requires_grad_(False)
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if name in targets and isinstance(child, nn.Linear):
                setattr(parent, name, LoraLinear(child))
    return model


def trainable_parameters(model) -> int:
    """Parameters that receive gradients."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
