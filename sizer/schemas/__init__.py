"""The request and response models of every question, in one place the core, ``api/`` and ``cli/`` share.

One module per question: :mod:`~sizer.schemas.training` (``sizer time`` and ``sizer memory``),
:mod:`~sizer.schemas.plan`, :mod:`~sizer.schemas.recommend`, :mod:`~sizer.schemas.owned` (``--have``),
:mod:`~sizer.schemas.serving` (``sizer inference`` and ``sizer recommend --inference``: the answers) and
:mod:`~sizer.schemas.formulas` (``peak``, ``cells``, ``k1``, ``complexity``, ``tco``); the bases
:class:`~sizer.schemas.base.RequestModel` and :class:`~sizer.schemas.base.WorkloadRequest` in
:mod:`~sizer.schemas.base`, the measurement field and its rescaling record in :mod:`~sizer.schemas.measured`, a
``sizer calibrate`` file in :mod:`~sizer.schemas.calibration`.

**Layering**: this package imports only the packages below it (choices, units, errors, results, hardware, formulas,
frameworks, workloads, launch); the engine, the planner and the serving rooms import it, never the other way round
(``tests/sizer/test_core_imports.py``). It imports nothing here, so that importing one module loads that one only.
"""
