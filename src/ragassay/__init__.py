"""ragassay: measure a RAG system question by question — found, grounded, right — and say why."""

__version__ = "0.1.0"
