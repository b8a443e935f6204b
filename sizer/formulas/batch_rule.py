"""The pre-training batch a run of a given compute budget would use, where the user gives none.

Two rules, each named after its source, and which one applies:

- ``deepseek_llm``: DeepSeek LLM's fit of the near-optimal batch against the compute budget
  (:func:`deepseek_llm_batch_tokens`), for a run whose length is known;
- ``by_size``: GPT-3's and Llama 2's batches by model size (:func:`batch_tokens_by_size`), for a
  step time or memory question without a run length (no compute budget to apply the first to).

A model whose report states its batch (``pretraining_batch`` in ``catalog/models.yaml``) uses that
one instead (:mod:`sizer.engine.job`). Every default is stated as an assumption; a given batch is
never changed.
"""
from __future__ import annotations

# DeepSeek LLM (DeepSeek-AI 2024, arXiv:2401.02954, §3.1 eq. 1): B_opt = 0.2920 C^0.3271 tokens, fitted on
# runs of 1e17-3e20 FLOP; C counts non-embedding FLOP (their M D). Recalled, not read in ../shared/data.
DEEPSEEK_BATCH_COEFFICIENT = 0.2920  # [token FLOP^-0.3271]
DEEPSEEK_BATCH_EXPONENT = 0.3271  # [1]
DEEPSEEK_BATCH_SOURCE = ("DeepSeek LLM (DeepSeek-AI 2024, arXiv:2401.02954) §3.1 eq. 1: B_opt = 0.2920 C^0.3271 tokens "
                         "(C = 6 N_active D; coefficients recalled, not read in ../shared/data)")
# Bounds of the rule's answer [token]: GPT-3's smallest batch (0.5M, Brown et al. 2020 Table 2.1) and the
# largest batch of a published frontier pre-training run, DeepSeek-V3's 15,360 x 4,096 (arXiv:2412.19437 §4.2);
# the fit was made below 3e20 FLOP, so beyond these it is an extrapolation nobody ran
BATCH_TOKENS_FLOOR = 512 * 1024
BATCH_TOKENS_CEILING = 15360 * 4096
# Pre-training batch by size: GPT-3's 0.5M tokens below 1.3B and 1-2M to 6.7B (Brown et al. 2020, Table 2.1),
# Llama 2's 4M from 7B up (Touvron et al. 2023 §2.2)
BATCH_BY_SIZE = ((6.5e9, 4 * 1024 * 1024), (1e9, 2 * 1024 * 1024), (0.0, 512 * 1024))
BY_SIZE_SOURCE = "GPT-3 (Brown et al. 2020, Table 2.1), Llama 2 (Touvron et al. 2023 §2.2)"


def deepseek_llm_batch_tokens(compute: float) -> float:
    r"""The near-optimal pre-training batch for a compute budget, DeepSeek LLM's power law.

    .. math::

        B_{opt} = 0.2920 \, C^{0.3271}

    Parameters
    ----------
    compute : float
        Training compute C [FLOP], ``6 N_active D`` for a transformer.

    Returns
    -------
    float
        Tokens per optimizer step [token], unbounded.

    Examples
    --------
    >>> round(deepseek_llm_batch_tokens(1e20) / 1e6, 2)  # a 1.7B model on 10B tokens: about 1M tokens
    1.02

    References
    ----------
    [deepseek-llm]
    """
    if compute <= 0:
        raise ValueError("compute must be positive FLOP")
    tokens: float = DEEPSEEK_BATCH_COEFFICIENT * compute ** DEEPSEEK_BATCH_EXPONENT
    return tokens


def scaled_batch_tokens(compute: float) -> float:
    """:func:`deepseek_llm_batch_tokens` kept within :data:`BATCH_TOKENS_FLOOR` and :data:`BATCH_TOKENS_CEILING`.

    Parameters
    ----------
    compute : float
        Training compute [FLOP].

    Returns
    -------
    float
        Tokens per optimizer step [token].

    References
    ----------
    [deepseek-llm]
    """
    return min(max(deepseek_llm_batch_tokens(compute), BATCH_TOKENS_FLOOR), BATCH_TOKENS_CEILING)


def batch_tokens_by_size(params: float) -> int:
    """Pre-training tokens per step by model size (:data:`BATCH_BY_SIZE`).

    Parameters
    ----------
    params : float
        Parameters of the model [1].

    Returns
    -------
    int
        Tokens per optimizer step [token]: 0.5M below 1e9 parameters, 2M to 6.5e9, 4M from 6.5e9.

    References
    ----------
    [touvron]
    """
    return next(tokens for size, tokens in BATCH_BY_SIZE if params >= size)
