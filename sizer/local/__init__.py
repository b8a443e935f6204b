"""One user's machine under a local runtime (llama.cpp, Ollama, MLX ...): its settings, its prefill and
decode times (:mod:`sizer.local.machine`), and a model split by layers over unequal devices
(:mod:`sizer.local.split`).
"""
