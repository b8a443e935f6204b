"""The built-in hardware catalog: YAML files beside this module, read by ``sizer.hardware.catalog``."""
