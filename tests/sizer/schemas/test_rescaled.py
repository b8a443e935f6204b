"""sizer/schemas/rescaled.py: the record of how an answer was rescaled, apart from the request field."""
import subprocess
import sys

from sizer.schemas.rescaled import Rescaled


def test_the_rescaling_record_says_what_it_was_rescaled_by():
    assert {"basis", "given", "factor", "statement"} <= set(Rescaled.model_fields)


def test_the_record_writes_what_it_holds():
    rescaled = Rescaled(basis="mfu", given="0.4", factor=1.25, sizer=None, statement="at the given MFU 0.4")
    assert rescaled.model_dump() == {"basis": "mfu", "given": "0.4", "factor": 1.25, "sizer": None,
                                     "measured_on": None, "statement": "at the given MFU 0.4"}


def test_a_training_recommendation_does_not_make_the_record():
    # the request with the measured field, and the planner that answers it, leave the answer's record unmade
    # (sizer.measured imports it where a measurement or an MFU is given)
    code = ("import sys, sizer.schemas.recommendation, sizer.plan.recommend; "
            "print('sizer.schemas.rescaled' in sys.modules)")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"
