"""Profile a torch model layer by layer into a YAML workload profile the core reads without torch.

One forward pass of a small batch runs under a ``TorchDispatchMode`` that sees every aten op:
its FLOP come from torch's own formulas (``torch.utils.flop_counter.flop_registry``, the
table ``FlopCounterMode`` uses), its bytes from the tensors it reads and writes (parameters
counted apart, since they do not grow with the batch). Each op is charged to the innermost
module running it and to a kind (matmul, conv, attention, norm, ...) by its aten name; the
bytes autograd saves for the backward pass are charged the same way, each saved block of memory
once (what the caching allocator holds, not the sum of what every op saves). Figures are per sample.
"""
from __future__ import annotations

import importlib
from collections import defaultdict

MATMUL_OPS = {"mm", "addmm", "linear"}
ATTENTION_OPS = {"bmm", "baddbmm", "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
                 "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_cudnn_attention"}
CONV_OPS = {"convolution", "_convolution", "cudnn_convolution", "mkldnn_convolution"}
NORM_OPS = {"native_batch_norm", "native_layer_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
            "layer_norm", "batch_norm"}
POOL_OPS = {"max_pool2d_with_indices", "avg_pool2d", "_adaptive_avg_pool2d", "adaptive_avg_pool2d", "max_pool2d"}
LOSS_OPS = {"nll_loss_forward", "_log_softmax", "cross_entropy_loss"}
VIEW_OPS = {"view", "_unsafe_view", "reshape", "permute", "transpose", "t", "expand", "slice", "select", "split",
            "unsqueeze", "squeeze", "as_strided", "detach", "alias", "unbind", "contiguous", "clone_view", "split_with_sizes",
            "_reshape_alias", "flatten"}


def _flop_aliases() -> dict:
    """Ops torch's FLOP table lacks that compute what one of its entries does: CPU's fused attention
    (what ``F.scaled_dot_product_attention`` runs on a CPU) takes the flash kernel's arguments."""
    import torch

    return {"_scaled_dot_product_flash_attention_for_cpu": torch.ops.aten._scaled_dot_product_flash_attention}


def op_kind(name: str) -> str | None:
    """The layer kind of an aten op, or None for views that move no data."""
    if name in VIEW_OPS:
        return None
    for kind, names in (("matmul", MATMUL_OPS), ("attention", ATTENTION_OPS), ("conv", CONV_OPS), ("norm", NORM_OPS),
                        ("pool", POOL_OPS), ("loss", LOSS_OPS)):
        if name in names:
            return kind
    return "embedding" if name.startswith("embedding") else "elementwise"


def _tensors(tree):
    import torch
    from torch.utils._pytree import tree_flatten

    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def profile_model(model, example, *, name: str, description: str, sample: str = "sample", seq_len: int | None = None,
                  input_shape: list[int] | None = None, generated_by: str = "", source: str | None = None,
                  versions: dict[str, str] | None = None) -> dict:
    """The profile of ``model`` on ``example`` (a batch) as a plain dict ready for YAML."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    flop_aliases = _flop_aliases()
    batch = int(example.shape[0])
    stack: list[str] = [""]
    parameter_storage = {p.untyped_storage().data_ptr() for p in model.parameters()}
    rows: dict[tuple[str, str], dict] = defaultdict(lambda: {"forward_flops": 0.0, "bytes": 0.0, "kernels": 0,
                                                             "activation_bytes": 0.0})
    order: list[tuple[str, str]] = []

    def charge(key, **amounts):
        if key not in rows:
            order.append(key)
        row = rows[key]
        for field, amount in amounts.items():
            row[field] += amount

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            op = func.overloadpacket
            kind = op_kind(op.__name__)
            if kind is None:
                return out
            formula = flop_registry.get(flop_aliases.get(op.__name__, op))
            flops = float(formula(*args, **kwargs, out_val=out)) if formula is not None else 0.0
            moved = sum(t.nbytes for t in _tensors((args, kwargs, out))
                        if t.untyped_storage().data_ptr() not in parameter_storage)
            charge((stack[-1], kind), forward_flops=flops, bytes=float(moved), kernels=1)
            return out

    def pre(module_name):
        def hook(module, inputs):
            stack.append(module_name)
        return hook

    def post(module, inputs, output):
        stack.pop()

    handles = []
    for module_name, module in model.named_modules():
        if module_name:
            handles.append(module.register_forward_pre_hook(pre(module_name)))
            handles.append(module.register_forward_hook(post))

    saved_by_module: dict[str, float] = defaultdict(float)
    model_state = parameter_storage | {b.untyped_storage().data_ptr() for b in model.buffers()}
    kept: set[int] = set()

    def pack(tensor):
        # autograd saves an op's inputs before the op reaches the dispatcher: charge the module,
        # and give the bytes to its first row once the pass is over. A tensor two ops save (a ReLU's
        # output that the next convolution saves as its input; q, k and v as views of one product)
        # is one block of memory: charged once, whole, to the first module that saves it. Buffers
        # (batch-norm statistics, masks) are model state, not activations.
        storage = tensor.untyped_storage()
        pointer = storage.data_ptr()
        if pointer not in model_state and pointer not in kept:
            kept.add(pointer)
            saved_by_module[stack[-1]] += float(storage.nbytes())
        return tensor

    model.train()
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), Counter():
            model(example)
    finally:
        for handle in handles:
            handle.remove()

    for module, saved in saved_by_module.items():
        first = next((key for key in order if key[0] == module), (module, "elementwise"))
        charge(first, activation_bytes=saved)

    # each parameter once, to the first module holding it: a tied weight (T5's and Whisper's output
    # layer is their embedding) is one tensor held by two modules, and was once counted twice
    own_params, counted_once = {}, set()
    for module_name, module in model.named_modules(remove_duplicate=False):
        fresh = [p for p in module.parameters(recurse=False) if id(p) not in counted_once]
        counted_once.update(id(p) for p in fresh)
        own_params[module_name] = own_params.get(module_name, 0) + sum(p.numel() for p in fresh)
    layers, seen_params = [], set()
    for module, kind in order:
        row = rows[(module, kind)]
        params = 0
        if module not in seen_params:  # a module's own parameters go to its first row
            params = own_params.get(module, 0)
            seen_params.add(module)
        layers.append({"name": f"{module or '(model)'}:{kind}", "kind": kind,
                       "forward_flops": row["forward_flops"] / batch, "bytes": row["bytes"] / batch,
                       "params": float(params), "activation_bytes": row["activation_bytes"] / batch,
                       "kernels": int(row["kernels"])})
    counted = sum(layer["params"] for layer in layers)
    total = sum(p.numel() for p in model.parameters())
    if counted != total:  # parameters of modules that ran no op of their own (tied weights, unused heads)
        layers.append({"name": "(unattributed parameters)", "kind": "other", "forward_flops": 0.0, "bytes": 0.0,
                       "params": float(total - counted), "activation_bytes": 0.0, "kernels": 0})
    described = {"name": name, "description": description, "sample": sample, "seq_len": seq_len,
                 "input_shape": list(input_shape or example.shape[1:]), "generated_by": generated_by,
                 "torch_version": str(torch.__version__)}
    if source is not None:  # the library model it was built from, and the versions that built it
        described |= {"source": source, "versions": dict(versions or {})}
    return described | {"layers": layers}


def own_module(target: str) -> str:
    """``target`` (a module name or MODULE:FACTORY) with a leading ``validation.`` naming this folder: the
    docs write ``validation.model_zoo:resnet50``, which the wheel installs as ``sizer.validation.model_zoo``.

    >>> own_module("validation.model_zoo:resnet50").endswith("validation.model_zoo:resnet50")
    True
    >>> own_module("mymodels:net")
    'mymodels:net'
    """
    top, dot, rest = target.partition(".")
    return f"{__package__}{dot}{rest}" if top == "validation" else target


def load_factory(target: str):
    """``module:function`` to the function, e.g. ``validation.model_zoo:resnet50``."""
    module_name, _, attribute = own_module(target).partition(":")
    if not module_name or not attribute:
        from sizer.errors import InputError

        raise InputError("model", target, "MODULE:FACTORY, e.g. validation.model_zoo:resnet50")
    return getattr(importlib.import_module(module_name), attribute)


def require_torch() -> None:
    """Load torch and yaml (seconds, the first step of ``sizer profile``'s progress bar); ImportError where missing."""
    import torch  # noqa: F401
    import yaml  # noqa: F401


def build_model(factory, kwargs: dict, *, target: str, seq_len: int | None):
    """The model ``factory(**kwargs)`` builds, seeded; a factory that cannot build one is the user's input error.

    Parameters
    ----------
    factory : callable
        A function or class building a ``torch.nn.Module``.
    kwargs : dict
        ``{"seq_len": n}`` where the factory takes it, else empty.
    target : str
        The ``MODULE:FACTORY`` the user named (for the message).
    seq_len : int or None
        The sequence length given [tokens].

    Returns
    -------
    torch.nn.Module
        The model.
    """
    import torch

    from sizer.errors import InputError

    torch.manual_seed(0)
    try:
        model = factory(**kwargs)
    except TypeError as error:
        raise InputError("target", target, f"a factory that builds a model with no further arguments ({error})") from None
    except (RuntimeError, MemoryError) as error:
        raise InputError("seq_len" if kwargs else "target", seq_len if kwargs else target,
                         f"a model that can be built here ({str(error).splitlines()[0] if str(error) else error!r})") from None
    if not isinstance(model, torch.nn.Module):
        raise InputError("target", target, f"a factory returning a torch.nn.Module (it returned {type(model).__name__})")
    return model


def example_input(model, shape: tuple[int, ...] | None, batch: int):
    """A batch of ``batch`` random inputs of ``shape``, else the model's own ``example_input(batch)``.

    Parameters
    ----------
    model : torch.nn.Module
        The model to profile.
    shape : tuple of int or None
        One sample's input shape (``--input-shape``).
    batch : int
        Samples in the batch.

    Returns
    -------
    torch.Tensor or object
        The input of one forward pass.
    """
    import torch

    from sizer.errors import InputError

    if shape is not None:
        return torch.randn(batch, *shape)
    if hasattr(model, "example_input"):
        return model.example_input(batch)
    raise InputError("input_shape", None, "--input-shape, since the model has no example_input(batch)")

