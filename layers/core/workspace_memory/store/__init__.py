"""The storage vocabulary the domain talks through: the ports, the single-table key layout, the
conditional changes a transaction is made of, which of them are judged, what a refused one reports,
the document head as the domain reads it and page cursors. Adapters (`workspace_memory.adapters`)
implement the ports."""
