"""Serving costs honour pricing (rent, buy, any) in sizer inference and recommend --inference, offline and
under load: one price basis per ranked cost column, each row with its basis and date."""
import pytest

from sizer.schemas.serving_requests import InferenceRequest
from sizer.serving.estimate import estimate_inference
from sizer.serving.recommend_devices import InferenceRecommendRequest, recommend_inference


@pytest.mark.parametrize("pricing", ["rent", "buy"])
def test_recommend_inference_ranks_one_basis(catalog, pricing):
    """The issue: recommend --inference --pricing buy was silently ignored, and an amortised MI250X
    ("0.153 USD (bought)") ranked above rents in one column."""
    result = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", pricing=pricing, kinds=["gpu", "accelerator"]),
                                 catalog)
    priced = [r for r in result.ranked if r.cost_per_million_tokens is not None]
    assert priced
    for row in priced:
        assert row.price_basis == pricing == row.cost_per_million_tokens.price_basis
        assert row.price.price_basis == pricing and row.price.date and row.price.source
    assert all(r.cost_per_million_tokens is None for r in result.ranked[len(priced):])  # unpriced come last
    if pricing == "rent":
        assert "mi250x" not in {r.device for r in priced}  # no rent price: not ranked among rents
    assert any(a.name == "price" and pricing in a.value for a in result.assumptions)


def test_recommend_inference_any_puts_rents_before_purchases(catalog):
    result = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", pricing="any",
                                                           kinds=["gpu", "accelerator"]), catalog)
    bases = [r.price_basis for r in result.ranked if r.price_basis is not None]
    assert "rent" in bases and "buy" in bases and bases == sorted(bases, key=lambda b: b == "buy")


def test_recommend_inference_under_load_honours_buy(catalog):
    result = recommend_inference(InferenceRecommendRequest(model="llama-2-7b", pricing="buy", rate=2,
                                                           kinds=["accelerator"], max_devices=2), catalog)
    priced = [r for r in result.ranked if r.cost_per_million_tokens is not None]
    assert priced and all(r.price_basis == "buy" and r.price.kind in ("list", "street", "price-history median", "analyst estimate", "second-hand")
                          for r in priced)


def test_sizer_inference_prices_by_the_asked_basis(catalog):
    rent = estimate_inference(InferenceRequest(model="llama-2-7b", device="mi250x"), catalog)
    assert rent.cost_per_million_tokens is None  # no rent price for the MI250X
    bought = estimate_inference(InferenceRequest(model="llama-2-7b", device="mi250x", pricing="buy"), catalog)
    assert bought.cost_per_million_tokens.price_basis == "buy"
    rented = estimate_inference(InferenceRequest(model="llama-2-7b", device="h100-sxm5-80gb", count=2), catalog)
    assert rented.cost_per_million_tokens.price_basis == "rent"
