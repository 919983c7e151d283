"""Searching entries: the pure hybrid engine, BM25 over what the caller may see, the search service
(`entry_search`) and its encrypted snapshot."""
