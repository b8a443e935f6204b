"""A ``sizer calibrate`` file: per-device efficiencies fitted to measured runs, a field of the training requests
(:mod:`sizer.engine.calibration` fits, loads and saves them)."""
# No `from __future__ import annotations`: pydantic would evaluate each field's annotation from its text (compiled and
# eval'd; imported in every `sizer recommend`, for RecommendRequest); as objects they are read as they are.

from pydantic import BaseModel, ConfigDict, Field

from sizer.hardware.schema import Device


class DeviceCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    device_id: str
    device_name: str
    efficiency_scale: float = Field(gt=0, allow_inf_nan=False,
                                    description="kernels take this many times the default-efficiency time")
    step_overhead_s: float = Field(ge=0, allow_inf_nan=False)
    runs: int = Field(ge=1)
    median_abs_error: float = Field(ge=0, allow_inf_nan=False, description="of the fitted runs themselves")


class Calibration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use (start-up)

    created: str
    source: str
    devices: list[DeviceCalibration]

    def for_device(self, device: Device) -> DeviceCalibration | None:
        """The calibration entry of a device, matched by id or by name.

        Parameters
        ----------
        device : Device
            A catalog device.

        Returns
        -------
        DeviceCalibration or None
            The device's fitted scale and overhead, or None where it was not calibrated.
        """
        for entry in self.devices:
            if entry.device_id == device.id or entry.device_name == device.name:
                return entry
        return None
