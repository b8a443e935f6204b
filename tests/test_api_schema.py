"""Property-based tests of the HTTP service from its own OpenAPI document (schemathesis).

Whatever schemathesis generates from the document, valid or not, the service must answer
without a server error, with a documented status code and content type, and a 200 must match
the response schema. Bounded: MAX_EXAMPLES fuzzed bodies per operation, on top of the
explicit examples and schemathesis' coverage phase.
"""
from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (content_type_conformance, response_schema_conformance,
                                               status_code_conformance)

from api.app import create_app

MAX_EXAMPLES = 25

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
def test_no_server_errors(case):
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance, content_type_conformance,
                                   response_schema_conformance])
