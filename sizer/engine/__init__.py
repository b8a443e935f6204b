"""The one time engine: a per-layer roofline evaluated on numpy arrays.

Every time sizer answers (``time``, ``recommend``, ``sweep``, ``tco``, HTTP, the validation
suite's predictions) comes from :func:`sizer.engine.roofline.step_seconds`, over a
:class:`~sizer.engine.layers.LayerTable` (a measured profile or a layer graph generated from an
architecture or a parameter count) and a :class:`~sizer.engine.devices.DeviceTable` (catalog
figures in SI magnitudes, converted once). Constants live in :mod:`sizer.engine.constants`.
"""
