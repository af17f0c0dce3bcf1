"""Hugging Face dataset folders: one data file per split and a README.md dataset card.

``datasets.load_dataset(folder)`` reads the folder: the card's YAML front matter declares the
splits (``configs``) and the columns (``dataset_info.features``), and each split is one JSON
Lines file (or Parquet file) under ``data/``. A row goes to the split its ``metadata.split``
names; a row without one goes to ``test`` (the cases of a golden set are held-out test data,
and promptfoo's Hugging Face reader looks there by default).

Arrow, under ``datasets``, needs every column to keep one type across all rows and files: a
column whose values change type (a string here, an object there) makes the loader fail. So a
column written as it is holds one type throughout; every other column travels as JSON text,
and the card lists those columns (``blueprint.jsonColumns``) so the import decodes them. The
set-level fields travel in the card under the ``blueprint`` key, which Hugging Face ignores.

A folder Blueprint did not write is read as other vendor files are: the id, input and expected
value come from the columns whose names say so (``question``, ``answer``, ...), the rest is
inferred and flagged, and every other column is kept in ``case.extensions.huggingface``.

The card is :mod:`.card`, the column types and the table :mod:`.columns`, the splits and data
files of a folder :mod:`.layout`, the columns of a folder Blueprint did not write
:mod:`.roles`, what writing a folder takes besides the table :mod:`.writing`, and the codec
:mod:`.codec`.
"""

from __future__ import annotations

from blueprint.formats.huggingface.card import CARD, CARD_FORMAT, Card, dump_front_matter, read_card
from blueprint.formats.huggingface.codec import DATA_FORMATS, HuggingfaceCodec
from blueprint.formats.huggingface.columns import (
    BLUEPRINT_COLUMNS,
    column_type,
    jsonable,
    merge,
    signature,
)
from blueprint.formats.huggingface.layout import (
    DATA_FOLDER,
    DEFAULT_SPLIT,
    SPLIT_KEYWORDS,
    SPLIT_NAME,
    Layout,
    layout_of,
    split_name,
)
from blueprint.formats.huggingface.roles import (
    EXPECTED_COLUMNS,
    ID_COLUMNS,
    INPUT_COLUMNS,
    Roles,
    from_roles,
    roles_of,
    to_roles,
)

__all__ = [
    "BLUEPRINT_COLUMNS",
    "CARD",
    "CARD_FORMAT",
    "DATA_FOLDER",
    "DATA_FORMATS",
    "DEFAULT_SPLIT",
    "EXPECTED_COLUMNS",
    "ID_COLUMNS",
    "INPUT_COLUMNS",
    "SPLIT_KEYWORDS",
    "SPLIT_NAME",
    "Card",
    "HuggingfaceCodec",
    "Layout",
    "Roles",
    "column_type",
    "dump_front_matter",
    "from_roles",
    "jsonable",
    "layout_of",
    "merge",
    "read_card",
    "roles_of",
    "signature",
    "split_name",
    "to_roles",
]
