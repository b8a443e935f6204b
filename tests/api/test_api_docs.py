"""The API's own pages, /docs and /redoc, work offline (issue 12 item 9).

Swagger UI and ReDoc used to load from a CDN, so /docs was blank without internet. Now every
script, stylesheet and icon the pages name is served by this application, from the package.
"""
from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from api.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# src="..." and href="..." in a page; a URL with a scheme or starting with // leaves this server.
ASSET = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")
FOREIGN = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_api_page_names_no_url_outside_this_server(client, page):
    html = client.get(page).text
    assets = ASSET.findall(html)
    assert assets, f"{page} names no script or stylesheet: {html[:300]}"
    assert not [url for url in assets if FOREIGN.match(url)], assets
    assert "cdn" not in html.lower()


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_every_asset_of_an_api_page_is_served_here(client, page):
    for url in ASSET.findall(client.get(page).text):
        response = client.get(url)
        assert response.status_code == 200, url
        assert len(response.content) > 1000, url  # the real bundle, not an empty placeholder


def test_docs_loads_the_swagger_ui_bundle_and_points_it_at_the_openapi_document(client):
    html = client.get("/docs").text
    script = next(url for url in ASSET.findall(html) if url.endswith("swagger-ui-bundle.js"))
    assert "SwaggerUIBundle" in client.get(script).text
    assert "'/openapi.json'" in html
