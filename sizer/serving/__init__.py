"""Serving a trained model: the answer of ``sizer inference`` (:mod:`sizer.serving.estimate`), its capacity
under latency objectives, the deployments ``sizer recommend --inference`` ranks, and the production defaults.

The arithmetic of one pass is :mod:`sizer.passes`; the discrete-event model under load is
:mod:`sizer.simulator`; a user's own machine under a local runtime is :mod:`sizer.local`.
"""
