"""Messages in users' words: help without "seed 004" or "spec §", a batch in sequences, a device named
"8480+", a count that is no number, an answer on one's own hardware that says its sequence length."""
from __future__ import annotations

import json
import re

import pytest

COMMANDS = ["", "peak", "compute", "time", "memory", "models", "plan", "inference", "cells", "k1", "complexity", "tco",
            "recommend", "sweep", "catalog", "catalog list", "calibrate", "validate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_is_in_users_words(cli, command):
    result = cli(*command.split(), "--help")
    assert result.exit_code == 0, result.output
    assert not re.search(r"seed \d|spec §|§", result.stdout), result.stdout


def test_batch_size_in_sequences_is_the_same_run_as_in_tokens(cli):
    base = ("time", "--model", "llama-2-7b", "--tokens", "2e10", "--seq-len", "4096", "--device", "H100 SXM",
            "--count", "64", "--json")
    sequences = cli(*base, "--batch-size", "1024 sequences")
    tokens = cli(*base, "--batch-size", str(1024 * 4096))
    assert sequences.exit_code == 0 and tokens.exit_code == 0, sequences.output + tokens.output
    a, b = json.loads(sequences.stdout), json.loads(tokens.stdout)
    assert a["batch_size"] == b["batch_size"] == 1024 and a["training_time"] == b["training_time"]


def test_a_batch_in_unknown_words_says_what_a_batch_looks_like(cli):
    result = cli("time", "--model", "llama-2-7b", "--tokens", "2e10", "--device", "H100 SXM", "--batch-size", "lots")
    assert result.exit_code == 2
    assert "'1536 sequences', '4M tokens' or '512 samples'" in result.output
    assert "Traceback" not in result.output


def test_a_device_named_with_a_plus_is_found(cli):
    result = cli("peak", "8480+", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["device"] == "Intel Xeon Platinum 8480+"


def test_a_count_that_is_no_number_does_not_ask_for_a_unit(cli):
    result = cli("compute", "--params", "seven", "--tokens", "2e10")
    assert result.exit_code == 2
    assert "known unit" not in result.output and "a number such as 1536, 7e9, 7B" in result.output


def test_have_answers_state_their_sequence_length(cli):
    result = cli("recommend", "--model", "llama-3-8b", "--tokens", "1e8", "--have", "1x RTX 4090", "--json")
    assert result.exit_code == 0, result.output
    said = {a["name"]: a["value"] for a in json.loads(result.stdout)["assumptions"]}
    assert said["sequence length"].startswith("8192 tokens"), said  # Llama 3's training context (Llama 3 paper §3.4)
    given = cli("recommend", "--model", "llama-3-8b", "--tokens", "1e8", "--seq-len", "2048", "--have", "1x RTX 4090", "--json")
    said = {a["name"]: a["value"] for a in json.loads(given.stdout)["assumptions"]}
    assert said["sequence length"] == "2048 tokens", said


def test_every_bad_option_is_named_at_once(cli):
    result = cli("time", "--params", "seven", "--tokens", "lots", "--batch-size", "x", "--device", "H100 SXM")
    assert result.exit_code == 2
    named = re.findall(r"(\w+): got ", result.output)
    assert named == ["params", "tokens", "batch_size"], result.output
