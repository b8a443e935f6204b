"""`sizer catalog list --prices` and ids as written."""


def test_catalog_list_prices_shows_rent_and_purchase_with_dates(cli):
    result = cli("catalog", "list", "--prices", "--kind", "gpu")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "accelerators have a dated rent price" in text
    assert "2026-08-26" in text or "2026-09-20" in text  # offers of ../shared/data/cluster-and-purchase-prices.csv
    assert "street" in text and "analyst estimate" in text


def test_commit_ids_are_printed_as_written(cli):
    """The issue: litgpt@2,685,705 and transformers@558,553 in `sizer models`."""
    result = cli("models")
    assert result.exit_code == 0
    assert "litgpt@2685705" in result.output.replace("\n", "") or "@2685705" in result.output
    assert "@2,685,705" not in result.output


def test_catalog_show_lists_offers_with_term_size_and_network(cli):
    result = cli("catalog", "show", "h100-sxm5-80gb")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "spot" in text and "8 per instance" in text and "between nodes" in text
