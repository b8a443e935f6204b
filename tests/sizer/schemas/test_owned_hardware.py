"""sizer/schemas/owned_hardware.py: the answer on the hardware one has (`--have`)."""
from sizer.schemas.owned_hardware import OwnedOption, OwnedResult


def test_the_answer_holds_one_option_per_hardware_set():
    schema = OwnedResult.model_json_schema()
    assert schema["properties"]["options"]["type"] == "array"
    assert "OwnedOption" in schema["$defs"]
    assert set(OwnedOption.model_fields) >= {"suggestions"}
