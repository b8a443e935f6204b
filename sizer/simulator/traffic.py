"""Load and request lengths for serving under traffic (issue 16).

A load is an open Poisson stream of ``rate`` requests per second, or ``users`` in a closed loop
(each sends its next request when its last answer ends, after an optional think time). Lengths
are fixed, a named distribution, or a trace of ``prompt_len,output_len[,arrival_s]`` rows.

Named distributions are log-normal, fitted to a published median and 90th percentile:

.. math:: \\mu = \\ln m, \\quad \\sigma = (\\ln p_{90} - \\ln m) / z_{0.9}, \\quad z_{0.9} = 1.2816

>>> d = LENGTH_DISTRIBUTIONS["azure-conv"]
>>> round(d.prompt.median), round(d.output.median)
(1020, 129)
>>> LENGTH_DISTRIBUTIONS["sharegpt-vllm-sample"].label
'sharegpt-vllm-sample (the ShareGPT sample vLLM and SGLang benchmarks report; mean 202 in / 179 out, log-normal, drawn as the benchmark filters it)'
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from sizer.choices import entry_named
from sizer.datafile import read_text
from sizer.errors import InputError, WrittenByName
from sizer.memo import registered_cache

Z90 = 1.2815515655446004  # standard normal quantile at 0.9
MAX_TRACE_ROWS = 100_000
MAX_LENGTH = 1_000_000  # tokens of a sampled prompt or answer (the log-normal tail is cut here)
_VIDUR = "serving-under-load.csv: microsoft/vidur@7d47513 data/processed_traces/"
_SARATHI = "serving-under-load.csv: microsoft/sarathi-serve sharegpt_8k_filtered_stats_llama2_tokenizer.csv"


@dataclass(frozen=True)
class LogNormal:
    """Token counts, log-normal with this median and 90th percentile [tokens]."""

    median: float
    p90: float

    @property
    def sigma(self) -> float:
        """The log-normal's shape :math:`\\sigma = \\ln(p_{90} / \\text{median}) / z_{0.9}` [1]."""
        return float(np.log(self.p90 / self.median) / Z90)

    @property
    def mean(self) -> float:
        """:math:`e^{\\mu + \\sigma^2/2}` [tokens]."""
        return float(self.median * np.exp(self.sigma ** 2 / 2))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` token counts drawn from the log-normal, rounded to whole tokens within 1 and :data:`MAX_LENGTH`.

        Parameters
        ----------
        rng : numpy.random.Generator
            The seeded random source.
        n : int
            Counts to draw [1].

        Returns
        -------
        numpy.ndarray
            ``n`` token counts [tokens], int64.
        """
        x = rng.lognormal(np.log(self.median), self.sigma, n)
        return np.clip(np.rint(x), 1, MAX_LENGTH).astype(np.int64)


@dataclass(frozen=True)
class AtMean:
    """Token counts all at a published mean, where a set's spread is not in the data [tokens]."""

    mean: float

    @property
    def median(self) -> float:
        """The median [tokens]: the mean, every count being the same."""
        return self.mean

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` copies of the mean, rounded to a whole token (at least one).

        Parameters
        ----------
        rng : numpy.random.Generator
            Unused (the counts are fixed); taken so every distribution samples alike.
        n : int
            Counts to draw [1].

        Returns
        -------
        numpy.ndarray
            ``n`` token counts [tokens], int64.
        """
        return np.full(n, max(1, round(self.mean)), dtype=np.int64)


class LengthLaw(Protocol):
    """Token counts of one side (prompt or answer) of a length set."""

    @property
    def median(self) -> float:
        """The median [tokens]."""

    @property
    def mean(self) -> float:
        """The mean [tokens], before any filter of the set."""

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


@dataclass(frozen=True)
class Distribution(WrittenByName):
    """A named length set: its prompt and answer laws, and the filters its benchmark applies to each drawn pair.

    ``max_prompt``, ``max_total`` and ``min_tokens`` reject a pair and draw again (vLLM's ShareGPT sampling skips
    such conversations); ``output_cap`` cuts an answer (``max_tokens``: generation stops there)."""

    name: str
    prompt: LengthLaw
    output: LengthLaw
    source: str
    what: str = ""  # what the set is, in a few words
    max_prompt: int | None = None  # longest prompt kept [tokens]
    max_total: int | None = None  # longest prompt + answer kept [tokens]
    min_tokens: int = 1  # shortest prompt and answer kept [tokens]
    output_cap: int | None = None  # answers stop here [tokens]

    @property
    def filtered(self) -> bool:
        """Whether a pair can be rejected or cut (the means are then the filtered sample's, not the laws')."""
        return (self.max_prompt is not None or self.max_total is not None or self.min_tokens > 1
                or self.output_cap is not None)

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` (prompt, answer) pairs drawn as the benchmark draws them: pairs outside the filters drawn again,
        answers cut at the cap.

        Parameters
        ----------
        rng : numpy.random.Generator
            The seeded random source.
        n : int
            Pairs [1].

        Returns
        -------
        tuple of (numpy.ndarray, numpy.ndarray)
            Prompt and answer lengths [tokens], ``n`` each, int64.
        """
        if not self.filtered:
            return self.prompt.sample(rng, n), self.output.sample(rng, n)
        prompts, outputs, kept = [], [], 0
        for _ in range(100):  # each round keeps most draws; the bound only guards a filter that keeps none
            p, o = self.prompt.sample(rng, 2 * n), self.output.sample(rng, 2 * n)
            ok = (p >= self.min_tokens) & (o >= self.min_tokens)
            if self.max_prompt is not None:
                ok &= p <= self.max_prompt
            if self.max_total is not None:
                ok &= p + o <= self.max_total
            prompts.append(p[ok])
            outputs.append(o[ok])
            kept += int(ok.sum())
            if kept >= n:
                break
        if kept < n:
            raise ValueError(f"length set {self.name}: its filters keep almost no draw")
        out = np.concatenate(outputs)[:n]
        if self.output_cap is not None:
            out = np.minimum(out, self.output_cap)
        return np.concatenate(prompts)[:n], out

    def means(self) -> tuple[float, float]:
        """Mean prompt and answer [tokens]: the laws' own, or, with filters, those of a fixed sample of 20,000 pairs.

        Returns
        -------
        tuple of (float, float)
            Mean prompt and answer lengths [tokens].
        """
        if not self.filtered:
            return self.prompt.mean, self.output.mean
        return _filtered_means(self)

    @property
    def label(self) -> str:
        """The name, what it is and its means, as listed to users."""
        prompt, output = self.means()
        if isinstance(self.prompt, AtMean):
            how = "every request at the means"
        elif isinstance(self.prompt, LogNormal):
            how = "log-normal" + (", drawn as the benchmark filters it" if self.filtered else "")
        else:
            how = "spread as the benchmark draws it"
        return f"{self.name} ({self.what}; mean {prompt:,.0f} in / {output:,.0f} out, {how})"


@registered_cache()
def _filtered_means(distribution: Distribution) -> tuple[float, float]:
    p, o = distribution.sample(np.random.default_rng(12345), 20_000)
    return float(p.mean()), float(o.mean())


Z75 = 0.6744897501960817  # standard normal quantile at 0.75
# vllm-project/vllm benchmarks/benchmark_dataset.py, ShareGPTDataset.sample -> is_valid_sequence: a pair is skipped when
# prompt or reply has under 4 tokens, the prompt over 1,024 or prompt + reply over 2,048 (recalled from the code, not
# verified against a pinned commit)
VLLM_SHAREGPT_MIN, VLLM_SHAREGPT_MAX_PROMPT, VLLM_SHAREGPT_MAX_TOTAL = 4, 1024, 2048
# serving-tails.csv, AccelMark sharegpt_standard_v1 (from shibing624/sharegpt_gpt4): input tokens p50 280, p75 580
SHAREGPT_PROMPT_SIGMA = math.log(580 / 280) / Z75
# serving-under-load.csv, microsoft/sarathi-serve sharegpt_8k_filtered_stats (openchat ShareGPT4): output median 415, p90 834
SHAREGPT_REPLY_SIGMA = math.log(834 / 415) / Z90
SHAREGPT_SOURCE = ("spread of a ShareGPT-derived set's prompts (serving-tails.csv: AccelMark sharegpt_standard_v1 input "
                   "p50/p75 280/580, sigma 1.08) and replies (serving-under-load.csv: Sarathi-Serve ShareGPT4 output "
                   "median/p90 415/834, sigma 0.545), independent, taken for vLLM's ShareGPT V3 sample (verified: false); "
                   "pairs filtered as vLLM's benchmark_dataset.py does (prompt or reply < 4, prompt > 1024, both > 2048 "
                   "tokens skipped; recalled, verified: false); medians set so that the filtered means are the run's")


def vllm_sharegpt(name: str, median_prompt: float, median_output: float, what: str = "ShareGPT as vLLM's benchmark "
                  "samples it", source: str = "") -> Distribution:
    """vLLM's ShareGPT sample with these medians [tokens]: prompts and replies log-normal with the spread of
    :data:`SHAREGPT_SOURCE`, pairs filtered as vLLM's benchmark filters them
    (:func:`sizer.simulator.benchmark_lengths.sharegpt_as_sampled` sets the medians from the filtered means).

    Parameters
    ----------
    name : str
        The set's name.
    median_prompt, median_output : float
        Medians before the filter [tokens].
    what : str
        What the set is, in a few words.
    source : str
        Where its means come from, put before :data:`SHAREGPT_SOURCE`.

    Returns
    -------
    Distribution
        The set.
    """
    return Distribution(name, LogNormal(median_prompt, median_prompt * math.exp(Z90 * SHAREGPT_PROMPT_SIGMA)),
                        LogNormal(median_output, median_output * math.exp(Z90 * SHAREGPT_REPLY_SIGMA)),
                        (source + "; " if source else "") + SHAREGPT_SOURCE, what,
                        max_prompt=VLLM_SHAREGPT_MAX_PROMPT, max_total=VLLM_SHAREGPT_MAX_TOTAL,
                        min_tokens=VLLM_SHAREGPT_MIN)


_VLLM_BLOG = ("serving-under-load.csv: vllm-project/vllm-project.github.io@c3a01c4 _posts/2024-09-05-perf-update.md "
              "(500 ShareGPT prompts, fixed seed, Llama 3 tokenizer): mean input 202, mean output 179")
_MLPERF = ("serving-under-load.csv: MLPerf Inference llama2-70b OpenOrca subset, inputs capped at 1024: reference mean "
           "output 294.45; mean input about 628 recalled from the MLCommons dataset notes (not verified)")

LENGTH_DISTRIBUTIONS: dict[str, Distribution] = {d.name: d for d in (
    # medians 138.4 / 154.3: benchmark_lengths.sharegpt_as_sampled(202, 179) (filtered means 202 / 179), a test keeps them
    vllm_sharegpt("sharegpt-vllm-sample", 138.4, 154.3, "the ShareGPT sample vLLM and SGLang benchmarks report",
                  _VLLM_BLOG),
    Distribution("sharegpt-multiturn-8k", LogNormal(1730, 5696), LogNormal(415, 834),
                 _SARATHI + " (openchat ShareGPT4, Llama-2 tokenizer): median/p90 prompt 1730/5696, output 415/834",
                 "Sarathi-Serve's long multi-turn ShareGPT4 conversations up to 8k tokens"),
    Distribution("azure-conv", LogNormal(1020, 2734.5), LogNormal(129, 424),
                 _VIDUR + "splitwise_conv.csv (Azure LLM inference trace 2023, conversation): median/p90 prompt "
                 "1020/2734.5, output 129/424", "Azure LLM inference trace 2023, conversation"),
    Distribution("azure-code", LogNormal(1469, 5187.6), LogNormal(13, 55),
                 _VIDUR + "splitwise_code.csv (Azure LLM inference trace 2023, code): median/p90 prompt 1469/5187.6, "
                 "output 13/55", "Azure LLM inference trace 2023, code"),
    Distribution("arxiv-summarization", LogNormal(2730, 3702), LogNormal(167, 372),
                 _VIDUR + "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv: median/p90 prompt 2730/3702, "
                 "output 167/372", "arXiv papers to summarise"),
    Distribution("mlperf-openorca", AtMean(628), AtMean(294.45), _MLPERF, "MLPerf Inference llama2-70b's OpenOrca subset"),
)}
# A name two sets answer to: refused with both, rather than one chosen silently
AMBIGUOUS_LENGTHS = {"sharegpt": ("sharegpt-vllm-sample", "sharegpt-multiturn-8k")}


def length_sets() -> str:
    """Every named length set with what it is and its means, one per line (``--lengths`` lists these).

    Returns
    -------
    str
        One line per set of :data:`LENGTH_DISTRIBUTIONS`.
    """
    return "\n".join(d.label for d in LENGTH_DISTRIBUTIONS.values())


@dataclass(frozen=True)
class Lengths:
    """Where request lengths come from: fixed, a named distribution, or trace rows."""

    prompt_len: int | None = None
    output_len: int | None = None
    distribution: Distribution | None = None
    # prompts, outputs, arrivals [s]: the arrivals only where the request asked for them (trace_arrivals)
    trace: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None
    unused_arrivals: bool = False  # the trace had an arrival column the request did not ask to replay

    @property
    def label(self) -> str:
        """Where the lengths come from, in words (a trace's size, a set's label, or the fixed lengths)."""
        if self.trace is not None:
            return f"trace of {len(self.trace[0])} requests"
        if self.distribution is not None:
            return self.distribution.label
        return f"fixed {self.prompt_len} in / {self.output_len} out"

    @property
    def source(self) -> str:
        """Where a named set's lengths were published; "given" for fixed lengths or a trace."""
        return self.distribution.source if self.distribution else "given"

    def mean(self) -> tuple[float, float]:
        """Mean prompt and output tokens.

        Returns
        -------
        tuple of (float, float)
            Mean prompt and output lengths [tokens].
        """
        if self.trace is not None:
            return float(self.trace[0].mean()), float(self.trace[1].mean())
        if self.distribution is not None:
            return self.distribution.means()
        assert self.prompt_len is not None and self.output_len is not None  # fixed lengths carry both
        return float(self.prompt_len), float(self.output_len)

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` (prompt, output) pairs; a trace repeats in order.

        Parameters
        ----------
        rng : numpy.random.Generator
            The seeded random source (a named distribution draws from it).
        n : int
            Requests [1].

        Returns
        -------
        tuple of (numpy.ndarray, numpy.ndarray)
            Prompt and output lengths [tokens], ``n`` each.
        """
        if self.trace is not None:
            idx = np.arange(n) % len(self.trace[0])
            return self.trace[0][idx], self.trace[1][idx]
        if self.distribution is not None:
            return self.distribution.sample(rng, n)
        return np.full(n, self.prompt_len, dtype=np.int64), np.full(n, self.output_len, dtype=np.int64)


def length_distribution(name: str, field: str = "lengths") -> Distribution:
    """The named length set (:data:`LENGTH_DISTRIBUTIONS`: the vLLM ShareGPT sample, the long multi-turn ShareGPT set,
    the Azure traces, arXiv summarisation, MLPerf's OpenOrca).

    Parameters
    ----------
    name : str
        The set's name, any case, ``_`` or ``-``.
    field : str
        The request field named in the error.

    Returns
    -------
    Distribution
        The set's prompt and output distributions and their source; InputError listing the sets for an
        unknown or ambiguous name.
    """
    key = name.strip().lower().replace("_", "-") if isinstance(name, str) and len(name) <= 40 else None
    if key in AMBIGUOUS_LENGTHS:
        raise InputError(field, name, "one of " + " or ".join(LENGTH_DISTRIBUTIONS[k].label for k in AMBIGUOUS_LENGTHS[key])
                         + ": 'sharegpt' names both")
    if key not in LENGTH_DISTRIBUTIONS:
        raise InputError(field, name, "one of " + "; ".join(d.label for d in LENGTH_DISTRIBUTIONS.values()))
    return LENGTH_DISTRIBUTIONS[key]


def parse_trace(text: str, field: str = "trace", max_rows: int = MAX_TRACE_ROWS,
                max_tokens: int = MAX_LENGTH) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Rows ``prompt_len,output_len[,arrival_s]`` (a header line is skipped) as arrays; arrivals
    are None unless every row has one, and must not decrease.

    Parameters
    ----------
    text : str
        The CSV text.
    field : str
        The request field named in an error.
    max_rows : int
        Rows at most [1].
    max_tokens : int
        Longest prompt or output accepted [tokens].

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray, numpy.ndarray or None)
        Prompt lengths [tokens], output lengths [tokens] (int64) and arrival times [s] (None unless every
        row has one); InputError naming the row for a malformed one.

    >>> p, o, a = parse_trace("prompt_len,output_len\\n100,20\\n50,5\\n")
    >>> p.tolist(), o.tolist(), a
    ([100, 50], [20, 5], None)
    """
    prompts: list[int] = []
    outputs: list[int] = []
    arrivals: list[float | None] = []
    for i, row in enumerate(_csv_rows(text, field)):
        if not row or not "".join(row).strip():
            continue
        if i == 0 and not row[0].strip().replace(".", "", 1).isdigit():
            continue  # header
        if len(prompts) >= max_rows:
            raise InputError(field, f"{max_rows}+ rows", f"a trace of at most {max_rows:,} rows")
        if len(row) not in (2, 3):
            raise InputError(field, ",".join(row)[:60], f"rows of prompt_len,output_len[,arrival_s] (row {i + 1})")
        if not all(cell.isascii() and "_" not in cell for cell in row):  # int() takes "٣" and "1_0"; a trace is ASCII CSV
            raise InputError(field, ",".join(row)[:60], f"numbers in ASCII digits (row {i + 1})")
        try:
            p, o = int(row[0]), int(row[1])
            a = float(row[2]) if len(row) == 3 else None
        except ValueError:
            raise InputError(field, ",".join(row)[:60], f"whole token counts and an arrival in seconds (row {i + 1})") from None
        if not (1 <= p <= max_tokens and 1 <= o <= max_tokens):
            raise InputError(field, ",".join(row)[:60], f"lengths from 1 to {max_tokens:,} tokens (row {i + 1})")
        if a is not None and not (np.isfinite(a) and 0 <= a <= 1e7):
            raise InputError(field, row[2][:30], f"an arrival from 0 to 1e7 s (row {i + 1})")
        prompts.append(p)
        outputs.append(o)
        arrivals.append(a)
    if not prompts:
        raise InputError(field, "(empty)", "at least one row prompt_len,output_len[,arrival_s]")
    times = None
    if all(a is not None for a in arrivals):
        times = np.asarray(arrivals, dtype=float)
        if np.any(np.diff(times) < 0):
            raise InputError(field, "arrival_s", "arrival times that do not decrease")
    return np.asarray(prompts, dtype=np.int64), np.asarray(outputs, dtype=np.int64), times


def _csv_rows(text: str, field: str) -> Iterator[list[str]]:
    """The rows of CSV ``text``; a row the csv module refuses (a field over its 131,072-character limit,
    a NUL byte) is an InputError naming ``field`` and the row, not a ``_csv.Error``."""
    reader = csv.reader(io.StringIO(text))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise InputError(field, f"row {reader.line_num}", f"valid CSV rows ({error})") from None
        yield row


def load_trace(path: str, field: str = "trace") -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """A trace file read through the guarded loader (size limit, regular file, UTF-8) and :func:`parse_trace`.

    Parameters
    ----------
    path : str
        The CSV file's path.
    field : str
        The request field named in an error.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray, numpy.ndarray or None)
        Prompt and output lengths [tokens] and arrival times [s] or None, as :func:`parse_trace`.
    """
    return parse_trace(read_text(path, field), field)


@dataclass(frozen=True)
class Load:
    """An open Poisson stream (``rate`` [1/s]) or a closed loop of ``users`` with ``think_time`` [s]; ``burst``: the
    users are a benchmark's prompts all sent at t = 0, one each."""

    rate: float | None = None
    users: int | None = None
    think_time: float = 0.0
    burst: bool = False

    @property
    def label(self) -> str:
        """The load in words: a Poisson rate, a burst, or users in a closed loop with their think time."""
        if self.rate is not None:
            return f"{self.rate:.4g} requests/s, Poisson arrivals"
        if self.burst:
            return f"a burst of {self.users} prompts at t = 0"
        think = f", {self.think_time:g} s think time" if self.think_time else ""
        return f"{self.users} users in a closed loop{think}"


def trace_rate(arrivals: np.ndarray) -> float:
    """A trace's own mean rate [1/s]: its arrivals over its span, one mean gap added so that the trace repeats
    at the same rate (inf where every request arrives at once).

    Parameters
    ----------
    arrivals : numpy.ndarray
        Arrival times [s], not decreasing.

    Returns
    -------
    float
        Requests per second [1/s].

    >>> trace_rate(np.array([0.0, 1.0, 2.0, 3.0]))
    1.0
    """
    n = len(arrivals)
    span = float(arrivals[-1] - arrivals[0])
    return math.inf if span <= 0 else (n - 1) / span  # = n over the span and one mean gap


def arrivals_label(load: Load, lengths: Lengths) -> str:
    """The load in words with where its arrivals come from: Poisson at the rate, or a trace's arrival times replayed
    at the rate (where asked), and a trace's arrival column left unused said so.

    Parameters
    ----------
    load : Load
        The load: a rate [1/s] or users.
    lengths : Lengths
        Where the lengths (and any replayed arrivals) come from.

    Returns
    -------
    str
        One phrase, e.g. "2 requests/s, Poisson arrivals".

    >>> arrivals_label(Load(rate=2.0), Lengths(trace=(np.array([1, 2]), np.array([1, 1]), np.array([0.0, 10.0]))))
    "2 requests/s, the trace's 2 arrival times (its own 0.1 requests/s) with every gap scaled to it"
    """
    trace = lengths.trace
    if load.rate is not None and trace is not None and trace[2] is not None:
        return (f"{load.rate:.4g} requests/s, the trace's {len(trace[2])} arrival times (its own "
                f"{trace_rate(trace[2]):.4g} requests/s) with every gap scaled to it")
    if load.rate is not None and lengths.unused_arrivals:
        return (f"{load.label} (the trace's arrival_s column is not used: trace_arrivals, --trace-arrivals on the "
                "command line, replays it at this rate)")
    return load.label


def poisson_arrivals(rate: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` arrival times [s] of a Poisson stream of ``rate`` [1/s] (exponential gaps).

    Parameters
    ----------
    rate : float
        Mean arrivals per second [1/s].
    n : int
        Arrivals [1].
    rng : numpy.random.Generator
        The seeded random source.

    Returns
    -------
    numpy.ndarray
        Increasing arrival times [s], from the first gap on.
    """
    return np.cumsum(rng.exponential(1.0 / rate, n))


# A request's named length set, found where the request is built; the field holds the Distribution (written as its
# name).
if TYPE_CHECKING:
    LengthsName = Distribution
else:
    LengthsName = entry_named(Distribution, length_distribution)
