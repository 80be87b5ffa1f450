"""The chunking default: one definition, read by the schema, the configs, the importers and
the command line. A module that imports nothing, so the CLI reads it at start-up without
loading pydantic."""

DEFAULT_CHUNK_SIZE = 400  # characters per chunk
DEFAULT_OVERLAP = 80  # characters shared by neighbouring chunks
