"""sizer/schemas/formulas.py: the closed forms' requests, and their answers re-exported from sizer.formulas."""
import pytest

import sizer.formulas.peaks
import sizer.formulas.tco
from sizer.errors import InputError
from sizer.schemas import formulas


def test_the_answers_are_the_closed_forms_own():
    assert formulas.PeakResult is sizer.formulas.peaks.PeakResult
    assert formulas.TcoResult is sizer.formulas.tco.TcoResult
    assert all(hasattr(formulas, name) for name in formulas.__all__)


def test_a_derating_of_the_whole_peak_is_refused_naming_it():
    with pytest.raises(InputError) as refused:
        formulas.PeakRequest(device="Tesla P40", derating=1.0)
    assert refused.value.field == "derating"


def test_a_cost_rents_on_demand_unless_terms_are_given():
    assert formulas.TcoRequest(device="H100 SXM", training_time="14 d").terms == ["on-demand"]
    assert formulas.TcoRequest(device="H100 SXM", training_time="14 d", terms=["spot"]).terms == ["spot"]
