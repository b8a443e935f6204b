"""What `sizer recommend --inference` answers: a ranked deployment, offline or under load, the
devices that cannot serve and why. Shared by the offline ranking (:mod:`sizer.serving.recommend_devices`)
and the search under load (:mod:`sizer.serving.load_search`), so neither imports the other back."""
from __future__ import annotations

from sizer.runtimes.formats import WeightFormat


def unsupported_reason(fmt: WeightFormat) -> str:
    """Why a device cannot serve ``fmt``: no peak for a format that quantises activations, else no usable precision.

    Parameters
    ----------
    fmt : WeightFormat
        The weight format tried.

    Returns
    -------
    str
        The reason, for a rejected device.
    """
    return (f"no {fmt.compute} peak in the catalog ({fmt.name} quantises activations too)" if fmt.activations
            else "no usable precision in the catalog")


def node_reason(per_node: int) -> str:
    """Why a device that fits only on more devices than one node holds cannot serve (tensor parallelism stays
    inside a node).

    Parameters
    ----------
    per_node : int
        Devices in one node of this device [1].

    Returns
    -------
    str
        The reason, for a rejected device.
    """
    return (f"does not fit within one node of {per_node} in any format searched (tensor parallelism stays inside a "
            "node; runtimes span nodes with pipeline parallelism, not searched here)")
