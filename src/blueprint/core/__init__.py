"""The model of a golden set: rows, case profiles, oracle types and the admissibility map, the
issue codes, the errors, and the published schemas. Imports nothing else of Blueprint's."""
