"""sizer/workloads/listing.py: the built-in architectures as a list, with parameter counts that
match the published configs (../shared/data/model-configs.csv and the configs it cites)."""
import csv
from pathlib import Path

import pytest

from sizer.workloads.listing import list_models

SHARED = next(p for p in (Path(__file__).resolve().parents[4] / "shared" / "data", Path("/work/shared/data")) if p.is_dir())


@pytest.fixture(scope="module")
def models():
    return {m.name: m for m in list_models()}


def test_llama_2_7b_parameters_worked_out_from_its_config(models):
    # Llama-2-7b config.json (model-configs.csv): vocab 32000, hidden 4096, 32 layers, SwiGLU FFN 11008,
    # untied embeddings. 2 x 32000 x 4096 embeddings + 32 x (4 x 4096^2 attention + 3 x 4096 x 11008 MLP
    # + 2 x 4096 norms) + 4096 final norm = 6,738,415,616: Hugging Face's count, exact
    per_layer = 4 * 4096 ** 2 + 3 * 4096 * 11008 + 2 * 4096
    assert models["llama-2-7b"].params_total == 2 * 32000 * 4096 + 32 * per_layer + 4096
    assert models["llama-2-7b"].params_active == models["llama-2-7b"].params_total  # dense
    assert models["llama-2-7b"].context == 4096


def test_a_mixture_of_experts_lists_total_and_active(models):
    # Mixtral 8x7B: 46.7B parameters, 12.9B active per token (Mistral AI; model-configs.csv);
    # rtol 0.5 % for the published figures' three digits
    mixtral = models["mixtral-8x7b"]
    assert mixtral.params_total == pytest.approx(46.7e9, rel=5e-3)
    assert mixtral.params_active == pytest.approx(12.9e9, rel=5e-3)


def test_contexts_are_the_published_max_positions(models):
    with open(SHARED / "model-configs.csv", newline="", encoding="utf-8") as handle:
        rows = {row["name"]: row for row in csv.DictReader(handle)}
    checked = 0
    for model in models.values():
        row = rows.get(model.display_name)
        if row and row["max_position"]:
            # RoBERTa's config says 514 positions: 512 tokens plus its 2-position padding offset (fairseq)
            offset = 2 if row["hf_model_type"] == "roberta" else 0
            assert model.context == int(row["max_position"]) - offset, model.name
            checked += 1
    assert checked >= 30


def test_every_model_is_listed_once_in_name_order_with_a_source():
    listed = list_models()
    names = [m.name for m in listed]
    assert names == sorted(names) and len(set(names)) == len(names) and len(names) >= 20
    for m in listed:
        assert m.source.strip() and 0 < m.params_active <= m.params_total and m.context > 0, m.name


def test_the_list_is_a_fresh_copy():
    first = list_models()
    first.clear()
    assert list_models()
