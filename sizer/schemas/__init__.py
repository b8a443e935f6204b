"""The request and response models of every question, in one place the core, ``api/`` and ``cli/`` share.

One module per question: :mod:`~sizer.schemas.time_and_memory` (``sizer time`` and ``sizer memory``),
:mod:`~sizer.schemas.plan`, :mod:`~sizer.schemas.recommendation` (its answer in
:mod:`~sizer.schemas.recommendation_result`), :mod:`~sizer.schemas.owned_hardware`
(``--have``),
:mod:`~sizer.schemas.serving` (``sizer inference`` and ``sizer recommend --inference``: the answers; their requests
in :mod:`~sizer.schemas.serving_requests`) and
:mod:`~sizer.schemas.formulas` (``peak``, ``cells``, ``k1``, ``complexity``, ``tco``); the bases
:class:`~sizer.schemas.base.RequestModel` and :class:`~sizer.schemas.base.WorkloadRequest` in
:mod:`~sizer.schemas.base`, the measurement field in :mod:`~sizer.schemas.measurement` and its rescaling record in
:mod:`~sizer.schemas.rescaled`, a ``sizer calibrate`` file in :mod:`~sizer.schemas.calibration_file`.

**Layering**: this package imports only the packages below it (choices, units, errors, results, hardware, formulas,
frameworks, workloads, launch); the engine, the planner and the serving rooms import it, never the other way round
(``tests/sizer/test_core_imports.py``). The one exception is :mod:`~sizer.schemas.serving_requests`, with a place
of its own above the runtime registry and the simulator, since its fields hold their entries. It imports nothing here, so that importing one module loads that one only.
"""
