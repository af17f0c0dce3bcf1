"""The validator: the rules, the streaming pass over a set, the process pool and the row index.
May import ``formats``, ``io`` and ``core``."""
