"""One router per resource, mirroring the CLI's command modules."""
