"""What the devices are: the sourced catalog (schema, loading, lookup by name), precisions, and the
links and nodes that connect devices."""
