"""The training answers, beside the engine that computes them: ``sizer time`` (:mod:`sizer.training.time_answer`),
``sizer memory`` (:mod:`sizer.training.memory_answer`), and the requests' entries that resolve a job, a device and
its node and call them (:mod:`sizer.training.estimates`). The engine (:mod:`sizer.engine`) holds no answer text;
:mod:`sizer.plan` ranks devices and counts on these answers.
"""
