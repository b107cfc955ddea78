"""extractor stage of memdir."""
