"""One forward pass of a served model on a device: weight and KV formats, the memory they take, prefill
and decode times on arrays, layers offloaded to the host, and what a mixture of experts adds to a decode.

Every time here is an evaluation of the one engine, :func:`sizer.engine.roofline.step_seconds` with the
forward-only ``INFERENCE`` pass: prefill is the layer graph at the prompt length, a decode step is the
layer graph of one token per sequence plus the KV cache it reads. The three rooms that answer serving
questions ask it: :mod:`sizer.serving`, :mod:`sizer.simulator` and :mod:`sizer.local`.
"""
