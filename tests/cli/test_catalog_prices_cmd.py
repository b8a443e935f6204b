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


def test_catalog_show_names_the_mac_an_apple_price_is_for(cli, monkeypatch):
    """Apple sells machines, not chips (../shared/data/prices-2026-12.csv: Mac Studio 2022 base, 1,999 USD)."""
    monkeypatch.setenv("COLUMNS", "400")
    result = cli("catalog", "show", "apple-m1-max-24c-gpu")
    text = " ".join(result.output.split())
    assert result.exit_code == 0 and "purchase price (costs use it)" in text
    assert "1,999 USD (Mac Studio" in text and "list, high confidence (2022-03-08)" in text


def test_catalog_show_says_each_quote_basis(cli, monkeypatch):
    """RTX 3070: a launch list price, Tom's Hardware's new retail and used eBay prices, an Amazon price-history median."""
    monkeypatch.setenv("COLUMNS", "400")
    text = " ".join(cli("catalog", "show", "rtx-3070").output.split())
    for basis in ("list", "street", "second-hand", "price-history median"):
        assert f", {basis}, " in text, basis


def test_tco_says_the_purchase_basis_beside_the_buy_side(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    text = " ".join(cli("tco", "--device", "rtx-3070", "--training-time", "10 h").output.split())
    # the newest list or street price of the new card: Tom's Hardware's retail price, October 2023
    assert "purchase price basis │ street, medium confidence, of 2023-10" in text
    given = " ".join(cli("tco", "--device", "rtx-3070", "--training-time", "10 h", "--purchase-price", "400 USD").output.split())
    assert "purchase price basis │ given (--purchase-price)" in given


def test_catalog_list_prices_names_prices_waiting_for_a_device(cli, monkeypatch):
    """A price file may price a device other work adds (../shared/data/prices-2026-12.csv rents the MI350X): each
    such id is listed, never dropped unseen."""
    from sizer.facade import awaiting_prices, load_catalog

    monkeypatch.setenv("COLUMNS", "400")
    text = " ".join(cli("catalog", "list", "--prices").output.split())
    waiting = awaiting_prices(load_catalog().devices)
    assert ("Prices waiting for a device the catalog lacks" in text) == bool(waiting)
    assert all(f"{device_id} ({', '.join(files)})" in text for device_id, files in waiting.items())
