"""Reading and writing safely: atomic outputs, locks, limits, and bounded JSON, YAML and TOML
readers. May import ``core``."""
