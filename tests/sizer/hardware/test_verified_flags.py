"""The catalog's ``verified`` flag is true only for a figure read in its source: an assumed host memory,
a derived estimate or a figure carried over from another part is not."""


def test_assumed_and_estimated_figures_are_unverified(catalog):
    wrong = [(d.id, path) for d in catalog for path, s in d.sourced_fields().items()
             if s.verified and any(w in f"{s.source} {s.note or ''}".lower()
                                   for w in ("assumed", "derived estimate", "guess", "not obtainable"))]
    assert not wrong


def test_no_source_says_it_could_not_be_obtained(catalog):
    """A source is a place a reader can go: "snapshot not obtainable" was replaced by the row's URL."""
    cited = [s.source for d in catalog for s in (*d.sourced_fields().values(), *d.cloud_prices, *d.purchase_prices)]
    assert not [c for c in cited if "not obtainable" in c]


def test_purchase_quotes_are_verified_only_where_read_with_confidence(catalog):
    # the purchase prices in ../shared/data are news, analyst or retailer quotes: a quote is verified only where
    # its row was read in the cited source with medium or high confidence (prices-2026-12.csv, whose rows carry
    # the source's own words); a low-confidence quote never is
    quotes = [q for d in catalog for q in (*d.purchase_prices, *filter(None, [d.purchase_price]))]
    assert not any(q.verified and q.confidence == "low" for q in quotes)
    assert all("source text:" in (q.note or "") for q in quotes if q.verified)
