"""Making and editing sets: packs, the builder, the one edit path, curation, merge, dedupe and
splits. May import the transport modules (``convert``, ``diff``), ``validation`` and below."""
