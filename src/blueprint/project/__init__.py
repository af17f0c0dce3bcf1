"""A repository's sets: the configuration, discovery, ``blueprint check`` and git refs. May
import ``authoring`` and below."""
