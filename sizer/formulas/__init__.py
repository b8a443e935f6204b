"""The seeds' closed-form formulas: peaks (R = 2NC), training compute, memory cells, complexity,
K1, host-side needs and the cost of ownership. Plain functions with their equations and sources."""
