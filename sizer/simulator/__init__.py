"""The discrete-event model of a serving engine under load: arrivals, requests, the continuous-batching
scheduler, the paged KV cache, the cost of one iteration and the metrics of a run (:mod:`sizer.simulator.simulate`
joins them). Load shapes and named length sets are in :mod:`sizer.simulator.traffic` and
:mod:`sizer.simulator.benchmark_lengths`. It answers no question itself: :mod:`sizer.serving` asks it.
"""
