"""Models of the reference libraries (torchvision, timm, Hugging Face transformers) by name, built with
random weights for ``sizer profile torchvision:vgg16`` and for ``--workload timm:NAME`` on the fly.

Nothing is downloaded: torchvision models are built with ``weights=None``, timm models with
``pretrained=False``, and transformers models from a config object whose sizes are written here
(:data:`HF_CONFIGS`: the config class's defaults where they are the named checkpoint's, else the
published sizes of its model card's ``config.json``), never fetched from the Hub. A name not in
that table is read with ``AutoConfig.from_pretrained`` (the user's own Hugging Face cache or
network). Each built model has ``example_input(batch)``; an encoder-decoder takes one tensor there
and feeds the decoder a sequence of its own (:func:`_encoder_decoder`).
"""
from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

# The prefix a user writes -> the package that must be installed to build the model.
LIBRARIES = {"torchvision": "torchvision", "timm": "timm", "hf": "transformers"}
DEFAULT_SEQ_LEN = 128  # tokens per sequence for a text model when none is asked
DEFAULT_RESOLUTION = 224
# Arguments a torchvision model is built with beyond weights=None. GoogLeNet without weights gets two
# auxiliary heads (6.4 M parameters) that its published weights drop: torchvision's 6,624,904 parameters
# and 1.498 GMAC, and the measured GoogLeNet runs (convnet-benchmarks), are of the network without them.
TORCHVISION_ARGUMENTS: dict[str, dict] = {"googlenet": {"aux_logits": False}}

# Published sizes of Hugging Face checkpoints: (config class, its arguments, model class, input kind).
# A class's defaults are the checkpoint's where no argument is given (the class's docstring says
# which checkpoint its defaults match); the other figures are each model card's config.json.
HF_CONFIGS: dict[str, tuple[str, dict, str, str]] = {
    # DistilBertConfig() defaults = distilbert-base-uncased (6 x 768, 12 heads, 3072, vocab 30522)
    "distilbert-base-uncased": ("DistilBertConfig", {}, "DistilBertForSequenceClassification", "text"),
    # roberta-base config.json: vocab 50265, 514 positions, 1 token type, pad 1 (12 x 768, 3072)
    "roberta-base": ("RobertaConfig", {"vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1,
                                        "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "layer_norm_eps": 1e-5},
                     "RobertaForSequenceClassification", "text"),
    # roberta-large config.json: 24 x 1024, 16 heads, 4096
    "roberta-large": ("RobertaConfig", {"vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1,
                                         "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "layer_norm_eps": 1e-5,
                                         "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                                         "intermediate_size": 4096},
                      "RobertaForSequenceClassification", "text"),
    # microsoft/deberta-v3-base config.json: 12 x 768, 12 heads, 3072, vocab 128100, relative
    # attention over 256 position buckets shared with the content keys (c2p and p2c)
    "deberta-v3-base": ("DebertaV2Config", {"vocab_size": 128100, "hidden_size": 768, "num_hidden_layers": 12,
                                            "num_attention_heads": 12, "intermediate_size": 3072,
                                            "max_position_embeddings": 512, "type_vocab_size": 0,
                                            "relative_attention": True, "max_relative_positions": -1,
                                            "position_buckets": 256, "norm_rel_ebd": "layer_norm",
                                            "share_att_key": True, "pos_att_type": ["p2c", "c2p"],
                                            "position_biased_input": False, "layer_norm_eps": 1e-7},
                        "DebertaV2ForSequenceClassification", "text"),
    # T5Config() defaults = t5-small (6 + 6 layers of 512, 8 heads, d_ff 2048, vocab 32128)
    "t5-small": ("T5Config", {}, "T5ForConditionalGeneration", "text2text"),
    # t5-base config.json: 12 + 12 layers of 768, 12 heads, d_ff 3072
    "t5-base": ("T5Config", {"d_model": 768, "d_ff": 3072, "num_layers": 12, "num_decoder_layers": 12, "num_heads": 12},
                "T5ForConditionalGeneration", "text2text"),
    # CLIPConfig() defaults = openai/clip-vit-base-patch32 (text 12 x 512, vision ViT-B/32 12 x 768, 224 px)
    "clip-vit-base-patch32": ("CLIPConfig", {}, "CLIPModel", "image-text"),
    # openai/whisper-base config.json: 6 + 6 layers of 512, 8 heads, ffn 2048, vocab 51865, 80 mel bins
    "whisper-base": ("WhisperConfig", {"d_model": 512, "encoder_layers": 6, "decoder_layers": 6,
                                       "encoder_attention_heads": 8, "decoder_attention_heads": 8,
                                       "encoder_ffn_dim": 2048, "decoder_ffn_dim": 2048},
                     "WhisperForConditionalGeneration", "audio"),
    # openai/whisper-small config.json: 12 + 12 layers of 768, 12 heads, ffn 3072
    "whisper-small": ("WhisperConfig", {"d_model": 768, "encoder_layers": 12, "decoder_layers": 12,
                                        "encoder_attention_heads": 12, "decoder_attention_heads": 12,
                                        "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072},
                      "WhisperForConditionalGeneration", "audio"),
}
# Hub names written with their organisation map to the same entries.
HF_ORGS = {"distilbert/": "", "FacebookAI/": "", "microsoft/": "", "google-t5/": "", "openai/": "", "google/": ""}
CLIP_TEXT_TOKENS = 77  # CLIP's text context (CLIPTextConfig max_position_embeddings)
WHISPER_DECODER_TOKENS = 128  # the transcript profiled with each 30 s clip (the decoder takes up to 448)


def library_versions(library: str) -> dict[str, str]:
    """torch's version and the library's, as installed."""
    versions = {"torch": version("torch")}
    package = LIBRARIES[library]
    try:
        versions[package] = version(package)
    except PackageNotFoundError:
        pass
    return versions


def build(library: str, name: str, seq_len: int | None = None):
    """The model ``name`` of ``library`` with random weights and an ``example_input(batch)``.

    Parameters
    ----------
    library : str
        ``torchvision``, ``timm`` or ``hf``.
    name : str
        The library's own model name (``vgg16``, ``convnext_tiny``, ``distilbert-base-uncased``).
    seq_len : int, optional
        Tokens per sequence for a text model [token]; None takes :data:`DEFAULT_SEQ_LEN`.

    Returns
    -------
    torch.nn.Module
        The model, with ``example_input``, ``sample`` ("sample" or "sequence") and ``seq_len`` set.
    """
    import torch

    builders = {"torchvision": _torchvision, "timm": _timm, "hf": _hugging_face}
    if library not in builders:
        raise ValueError(f"unknown library {library!r}: one of {', '.join(builders)}")
    torch.manual_seed(0)  # the same random weights each time (the counts do not depend on them)
    return builders[library](name, seq_len)


def _attach(model, make, sample: str = "sample", seq_len: int | None = None):
    model.example_input, model.sample, model.seq_len = make, sample, seq_len
    return model


def _image_input(model, resolution: int):
    import torch

    return _attach(model, lambda batch: torch.randn(batch, 3, resolution, resolution))


def _torchvision(name: str, seq_len: int | None):
    from torchvision import models

    model = models.get_model(name, weights=None, **TORCHVISION_ARGUMENTS.get(name, {}))
    try:  # the resolution the published weights were evaluated at (their transforms' crop), read offline
        resolution = int(models.get_model_weights(name).DEFAULT.transforms().crop_size[0])
    except (ValueError, AttributeError, IndexError, TypeError):
        resolution = DEFAULT_RESOLUTION
    return _image_input(model, resolution)


def _timm(name: str, seq_len: int | None):
    import timm

    model = timm.create_model(name, pretrained=False)
    size = model.pretrained_cfg.get("input_size", (3, DEFAULT_RESOLUTION, DEFAULT_RESOLUTION))
    return _image_input(model, int(size[-1]))


def hf_key(name: str) -> str:
    """A Hub name without the organisation of :data:`HF_ORGS` (``FacebookAI/roberta-base`` -> ``roberta-base``)."""
    for org in HF_ORGS:
        if name.startswith(org):
            return name[len(org):]
    return name


def hf_config(name: str):
    """The config of ``name``: built from :data:`HF_CONFIGS`, else read by ``AutoConfig.from_pretrained``."""
    transformers = import_module("transformers")
    key = hf_key(name)
    if key in HF_CONFIGS:
        config_class, arguments, model_class, kind = HF_CONFIGS[key]
        config = getattr(transformers, config_class)(**arguments)
    else:
        config = transformers.AutoConfig.from_pretrained(name)
        model_class, kind = "", "text"
    config._attn_implementation = "eager"  # attention as matmul, softmax, matmul: counted on every device alike
    return config, model_class, kind


def _hugging_face(name: str, seq_len: int | None):
    import torch
    import transformers

    config, model_class, kind = hf_config(name)
    if model_class:
        model = getattr(transformers, model_class)(config)
    else:
        model = transformers.AutoModel.from_config(config, attn_implementation="eager")
        kind = "text2text" if getattr(config, "is_encoder_decoder", False) else "text"
    length = seq_len or DEFAULT_SEQ_LEN
    vocab = int(getattr(config, "vocab_size", None) or config.text_config.vocab_size)
    if kind == "text":
        return _attach(_Forward(model, lambda ids: model(input_ids=ids)),
                       lambda batch: torch.randint(0, vocab, (batch, length)), "sequence", length)
    if kind == "text2text":
        # the decoder reads a target as long as the source (a translation or a span-corruption target)
        return _attach(_Forward(model, lambda ids: model(input_ids=ids, decoder_input_ids=ids)),
                       lambda batch: torch.randint(0, vocab, (batch, length)), "sequence", length)
    if kind == "image-text":
        size = config.vision_config.image_size
        text = torch.randint(0, config.text_config.vocab_size, (1, CLIP_TEXT_TOKENS))
        return _attach(_Forward(model, lambda pixels: model(input_ids=text.expand(pixels.shape[0], -1),
                                                            pixel_values=pixels)),
                       lambda batch: torch.randn(batch, 3, size, size))
    # audio: a 30 s clip of log-mel frames (twice the encoder's positions) and a transcript
    frames = 2 * config.max_source_positions
    tokens = torch.randint(0, vocab, (1, WHISPER_DECODER_TOKENS))
    return _attach(_Forward(model, lambda mel: model(input_features=mel,
                                                     decoder_input_ids=tokens.expand(mel.shape[0], -1))),
                   lambda batch: torch.randn(batch, config.num_mel_bins, frames))


def _Forward(model, call):  # noqa: N802 - builds a module, named like one
    """``model`` behind a one-tensor ``forward`` (the profiler passes one example tensor)."""
    import torch.nn as nn

    class OneInput(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x):
            return call(x)

    return OneInput()
