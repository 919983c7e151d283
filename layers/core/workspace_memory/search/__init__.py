"""Searching entries: the pure hybrid engine, BM25 over what the caller may see, the search service
(`entry_search`) and its encrypted snapshot.

One search is one caller's request, so its vector maths runs on one thread: OpenBLAS's thread pool (one
thread per CPU the process sees) turned a 0.2 ms matrix-vector product into 15-35 ms on a busy machine. The
template sets `OPENBLAS_NUM_THREADS` for every function; this default covers processes that import the
engine themselves (the bench, the eval, the tests) before numpy is loaded.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
