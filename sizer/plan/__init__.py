"""Planning answers built on the engine: how to lay a run out over many devices."""
