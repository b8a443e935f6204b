"""Schemathesis over the whole catalog with many examples: the separate fuzz target (`make fuzz`).

tests/api/test_api_schema.py runs a few dozen examples per operation on a slice of the catalog in
every test run; this file runs SIZER_FUZZ_EXAMPLES per operation (skipped when it is not set)
against the app as served, with the same checks: no server error, documented status codes and
content types, and every 200 conforming to its response schema.
"""
from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance, status_code_conformance

from api.app import create_app

FUZZ_EXAMPLES = int(os.environ.get("SIZER_FUZZ_EXAMPLES", "0"))

# schemathesis' own read time-out (10 s) failed a correct answer that a loaded machine took longer to give: a bound
# on a hung service only, as the service's own limit is in the suite (tests/conftest.py)
REQUEST_BOUND_S = 600

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.skipif(FUZZ_EXAMPLES == 0, reason="the long schemathesis run: make fuzz (SIZER_FUZZ_EXAMPLES)")]

schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())


@schema.parametrize()
@settings(max_examples=max(FUZZ_EXAMPLES, 1), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
def test_no_server_errors_many_examples(case):
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance, content_type_conformance,
                                   response_schema_conformance], timeout=REQUEST_BOUND_S)
