"""cli/: the buyer's examples of issue 42 as a new user types them: money as sizer prints it, an offer term as the
README spells it, a purchase of a GPU alone against a share of a server, and a ranking an empty cap hid."""
import csv
import json

import pytest

from tests.conftest import SHARED_DATA

DATA = SHARED_DATA  # ../shared/data beside the checkout (tests/conftest.py)


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("budget", ["2,000,000 USD", "$2M", "2M USD", "2 million USD", "2 million", "2000000"])
def test_budget_as_sizer_prints_money(cli, budget):
    # `--budget "2,000,000 USD"` was refused, though sizer prints money that way
    data = _json(cli("recommend", "--params", "7B", "--tokens", "2e12", "--budget", budget, "--json"))
    assert data["budget"] == {"value": pytest.approx(2e6), "unit": "USD"}


def test_a_budget_that_is_not_money_is_refused_naming_the_field(cli):
    result = cli("recommend", "--params", "7B", "--tokens", "2e12", "--budget", "2 GHz")
    assert result.exit_code == 2 and "budget" in result.output and "Traceback" not in result.output


def _l40s_reserved_1y() -> float:
    # cluster-and-purchase-prices.csv: AWS G6e (1x L40S), reserved "1-yr, no upfront (approx.)", Modal's blog
    with open(DATA / "cluster-and-purchase-prices.csv", newline="", encoding="utf-8") as rows:
        row = next(r for r in csv.DictReader(rows) if r["hardware"].startswith("AWS G6e") and r["term"].startswith("1-yr, no upfront"))
    return float(row["price"])


@pytest.mark.parametrize("term", ["reserved-1y", "Reserved 1 Year", "committed-1y"])
def test_term_as_the_readme_spells_it(cli, term):
    data = _json(cli("tco", "--device", "L40S", "--training-time", "30 d", "--term", term, "--json"))
    assert data["rent_price"]["value"] == pytest.approx(_l40s_reserved_1y())
    assert data["rent_price_kind"] == "reserved 1 year"


def test_a_gpu_alone_and_a_share_of_a_server_are_bought_like_for_like(cli):
    # the catalog's H100 SXM is a GPU alone (30,000 USD); its H100 NVL is one eighth of a Lenovo server (833,806 USD)
    sxm = _json(cli("tco", "--device", "H100 SXM", "--count", "8", "--training-time", "30 d", "--json"))["buy"]
    nvl = _json(cli("tco", "--device", "H100 NVL", "--count", "8", "--training-time", "30 d", "--json"))["buy"]
    assert sxm["price_scope"] == "gpu" and sxm["server_share"]["value"] > 0
    assert sxm["capital"]["value"] == pytest.approx(8 * 30000 + sxm["server_share"]["value"])
    assert nvl["price_scope"] == "system-share" and nvl["server_share"] is None
    table = cli("tco", "--device", "H100 SXM", "--count", "8", "--training-time", "30 d")
    assert "server share" in table.stdout and "network between nodes" in table.stdout


def test_an_empty_ranking_says_to_raise_max_devices(cli):
    # a 7B on 2T tokens within 30 days printed "showing the top 0" and nothing else: 128 H100s meet it
    result = cli("recommend", "--model", "llama-2-7b", "--tokens", "2e12", "--deadline", "30 days")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert "try --max-devices 128" in said, said
    data = _json(cli("recommend", "--model", "llama-2-7b", "--tokens", "2e12", "--deadline", "30 days",
                     "--max-devices", "128", "--kind", "gpu", "--json"))
    assert data["ranked"] and data["limited_by"] is None
