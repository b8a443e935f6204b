"""Serving a trained model: memory, time to first token, decode speed and cost (issue 11).

Every time here is an evaluation of the one engine, :func:`sizer.engine.roofline.step_seconds`
with the forward-only ``INFERENCE`` pass: prefill is the layer graph at the prompt length, a
decode step is the layer graph of one token per sequence plus the KV cache it reads.
"""
