"""`sizer tco`: buy against rent for a training run."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from . import output
from .common import (
    BatchSize,
    CatalogOption,
    CountOption,
    DeviceOption,
    Epochs,
    JsonOption,
    Optimizer,
    Params,
    PrecisionOption,
    PricingOption,
    Samples,
    SeqLen,
    TermOption,
    Tokens,
    load,
    workload_request,
)


def tco(device: DeviceOption = ..., count: CountOption = 1,
        training_time: Annotated[Optional[str], typer.Option("--training-time", help="Length of the run, e.g. '14 d'; else estimated from the workload.")] = None,
        params: Params = None, samples: Samples = None, epochs: Epochs = "1", tokens: Tokens = None,
        precision: PrecisionOption = "fp32", optimizer: Optimizer = "adam", batch_size: BatchSize = None, seq_len: SeqLen = None,
        rent_price: Annotated[Optional[str], typer.Option("--rent-price", help="Per device, e.g. '2.5 USD/hour'.")] = None,
        cloud: Annotated[Optional[str], typer.Option("--cloud", help="Cloud provider for the rent price (AWS, GCP, Lambda, ...); the cheapest of any if left out.")] = None,
        term: TermOption = None,
        purchase_price: Annotated[Optional[str], typer.Option("--purchase-price", help="Per device, e.g. '30000 USD'.")] = None,
        pricing: PricingOption = "rent",
        lifetime: Annotated[Optional[str], typer.Option("--lifetime", help="Amortisation period of bought hardware (default 3 years).")] = None,
        pue: Annotated[Optional[float], typer.Option("--pue", help="Power usage effectiveness of the site (default 1.5).")] = None,
        electricity_price: Annotated[Optional[str], typer.Option("--electricity-price", help="e.g. '0.15 USD/kWh' (the default).")] = None,
        utilisation: Annotated[Optional[float], typer.Option("--utilisation", help="Average power as a fraction of TDP (default 1).")] = None,
        host_share: Annotated[Optional[str], typer.Option("--host-share", help="Capital for hosts, network, racks, e.g. '20000 USD'.")] = None,
        catalog: CatalogOption = None, json: JsonOption = False) -> None:
    """Total cost of ownership: cloud rent against purchase (amortised) plus energy."""
    from sizer import facade

    request = workload_request(facade.TcoRequest, device=device, count=count, training_time=training_time, params=params,
                               samples=samples, epochs=epochs, tokens=tokens, precision=precision, optimizer=optimizer,
                               batch_size=batch_size, seq_len=seq_len, rent_price=rent_price, cloud=cloud, purchase_price=purchase_price, terms=term,
                               pricing=pricing, lifetime=lifetime, pue=pue, electricity_price=electricity_price, utilisation=utilisation,
                               host_share=host_share)
    result = facade.estimate_cost(request, load(catalog))
    if json:
        return output.emit_json(result)
    if result.rent is not None and result.rent.price_basis == "buy":
        rent_name = "rent (amortised purchase, no rent price)"
    else:
        rent_name = "rent"
    rent = output.rng(result.rent) if result.rent is not None else (
        "not asked for (--pricing buy)" if result.pricing == "buy" else
        next((a.source for a in result.assumptions if a.name == "rent price"), "no rent price known"))
    rows = [("training time", output.rng(result.training_time)), (rent_name, rent),
            ("rent price", output.qty(result.rent_price)), ("rent price basis", result.rent_label)]
    if result.buy:
        # amortised capital + energy = total; the whole capital is shown apart, not as a part of it
        rows += [("buy: amortised capital", output.rng(result.buy.amortised_capital)),
                 ("buy: energy", output.rng(result.buy.energy)), ("buy: total", output.rng(result.buy.total)),
                 ("capital (whole, not in the total)", output.qty(result.buy.capital)),
                 ("purchase price basis", _purchase_said(result.buy)),
                 ("price of", {"gpu": "the device alone: server share added", "system-share": "a share of a whole "
                               "machine, host included", "given": "given, a device's whole cost"}[result.buy.price_scope]),
                 ("server share (in the capital)", output.qty(result.buy.server_share) if result.buy.server_share else "none"),
                 ("energy used", output.rng(result.buy.energy_used))]
    else:  # no price, or a price but no TDP to count energy with (the assumptions say which)
        no_tdp = next((a.source for a in result.assumptions if a.name == "energy" and a.value == "unknown"), None)
        rows.append(("buy", no_tdp or "no purchase price known: give --purchase-price"))
    output.key_values(f"Cost: {result.count} x {result.device}", rows)
    output.assumptions(result.assumptions)


def _purchase_said(buy) -> str:
    """The purchase price's basis beside the buy side: list, street, ... and its date, or 'given'."""
    if buy.purchase_basis == "given":
        return "given (--purchase-price)"
    system = f", {buy.system}" if buy.system else ""
    return f"{buy.purchase_basis}{system}, {buy.price_confidence} confidence, of {buy.price_date}"


def register(app: typer.Typer) -> None:
    app.command()(tco)
