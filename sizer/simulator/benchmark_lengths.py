"""Request lengths as serving benchmarks draw them (issue 38): spread, filtered and cut as the benchmark's code does,
so that p90 and p99 differ from p50 for the reasons they do.

* vLLM's ShareGPT sample (``vllm bench serve --dataset-name sharegpt``, also SGLang's ``bench_serving``): every
  conversation's first prompt and reply, a pair skipped when either has under 4 tokens, the prompt over 1,024 or both
  over 2,048 tokens; the reply's length is the answer's ``max_tokens``. The spread of prompts and replies is taken from
  ShareGPT-derived sets that state it (log-normal): prompts as AccelMark's ``sharegpt_standard_v1`` (p50 / p75 =
  280 / 580 tokens, :math:`\\sigma = 1.08`), replies as Sarathi-Serve's ShareGPT4 set (median / p90 = 415 / 834,
  :math:`\\sigma = 0.545`); prompt and reply drawn independently. Their medians are set so that the *filtered* means
  are those the run reports (:func:`sharegpt_as_sampled`).
* vLLM's random dataset: ``--random-range-ratio r`` draws lengths uniformly within :math:`\\pm r` of the length asked
  (:class:`Uniform`; ``r = 0``, the default, gives fixed lengths).

.. math:: \\sigma = \\ln(q_a / q_b) / (z_a - z_b), \\qquad \\text{median} \\leftarrow \\text{median} \\cdot
          \\bar{x}_{target} / \\bar{x}_{filtered}

>>> d = sharegpt_as_sampled(217.0, 200.0)
>>> [round(m) for m in d.means()], d.max_prompt, d.max_total
([217, 200], 1024, 2048)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sizer.memo import registered_cache
from sizer.simulator.traffic import (
    VLLM_SHAREGPT_MAX_PROMPT,
    VLLM_SHAREGPT_MAX_TOTAL,
    VLLM_SHAREGPT_MIN,
    Z90,
    Distribution,
    LogNormal,
    vllm_sharegpt,
)

RANDOM_SOURCE = ("vLLM's random dataset: lengths uniform within +-range_ratio of the length asked (serving-tails.csv rows "
                 "'random fixed lengths; +-50% (range_ratio 0.5)'; vllm benchmarks/benchmark_dataset.py RandomDataset, "
                 "recalled, verified: false)")


@dataclass(frozen=True)
class Uniform:
    """Token counts uniform on whole tokens from ``low`` to ``high`` (both included) [tokens]."""

    low: int
    high: int

    @property
    def median(self) -> float:
        """The median [tokens]."""
        return (self.low + self.high) / 2

    @property
    def mean(self) -> float:
        """The mean [tokens]."""
        return (self.low + self.high) / 2

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` token counts [tokens], int64.

        Parameters
        ----------
        rng : numpy.random.Generator
            The seeded random source.
        n : int
            Counts to draw [1].

        Returns
        -------
        numpy.ndarray
            ``n`` token counts [tokens].
        """
        return rng.integers(self.low, self.high + 1, n).astype(np.int64)


def lognormal_around(median: float, sigma: float) -> LogNormal:
    """The log-normal of this median and shape, as :class:`~sizer.simulator.traffic.LogNormal` (median and p90).

    Parameters
    ----------
    median : float
        Its median [tokens].
    sigma : float
        Its shape :math:`\\sigma` [1].

    Returns
    -------
    LogNormal
        The law.
    """
    return LogNormal(median, median * math.exp(Z90 * sigma))


@registered_cache()
def sharegpt_as_sampled(mean_prompt: float, mean_output: float, name: str = "sharegpt-as-sampled") -> Distribution:
    """vLLM's ShareGPT sample with these filtered means [tokens]: the spread of :data:`SHAREGPT_SOURCE`, filtered as
    vLLM's benchmark filters it, the medians set (a few fixed-point steps on a fixed sample) so that the filtered
    means are the ones asked.

    Parameters
    ----------
    mean_prompt, mean_output : float
        The run's mean prompt and answer [tokens] (its token totals over its requests).
    name : str
        The set's name.

    Returns
    -------
    Distribution
        Prompt and reply laws with the benchmark's filters; InputError-free: means beyond what the filters keep
        (a mean prompt over 1,024 tokens) raise ValueError.
    """
    if not (VLLM_SHAREGPT_MIN <= mean_prompt < VLLM_SHAREGPT_MAX_PROMPT and VLLM_SHAREGPT_MIN <= mean_output
            and mean_prompt + mean_output < VLLM_SHAREGPT_MAX_TOTAL):
        raise ValueError(f"means {mean_prompt:.0f} / {mean_output:.0f} are beyond what vLLM's ShareGPT filter keeps")
    med_p, med_o = mean_prompt, mean_output
    dist = vllm_sharegpt(name, med_p, med_o)
    for _ in range(12):
        got_p, got_o = dist.means()
        if abs(got_p / mean_prompt - 1) < 0.002 and abs(got_o / mean_output - 1) < 0.002:
            break
        med_p, med_o = med_p * mean_prompt / got_p, med_o * mean_output / got_o
        dist = vllm_sharegpt(name, med_p, med_o)
    return dist


def random_dataset(input_len: int, output_len: int, range_ratio: float = 0.0) -> Distribution:
    """vLLM's random dataset: lengths uniform within ``range_ratio`` of those asked (0: fixed).

    Parameters
    ----------
    input_len, output_len : int
        ``--random-input-len`` and ``--random-output-len`` [tokens].
    range_ratio : float
        ``--random-range-ratio`` [1], from 0 to below 1.

    Returns
    -------
    Distribution
        Uniform prompt and answer laws.

    >>> d = random_dataset(2048, 512, 0.5)
    >>> (d.prompt.low, d.prompt.high), d.means()
    ((1024, 3072), (2048.0, 512.0))
    """
    if not 0.0 <= range_ratio < 1.0:
        raise ValueError(f"range ratio {range_ratio} is not in [0, 1)")

    def law(length: int) -> Uniform:
        return Uniform(max(1, int(length * (1 - range_ratio))), max(1, int(length * (1 + range_ratio))))
    return Distribution(f"random-{input_len}-{output_len}-r{range_ratio:g}", law(input_len), law(output_len),
                        RANDOM_SOURCE, "vLLM's random dataset")
