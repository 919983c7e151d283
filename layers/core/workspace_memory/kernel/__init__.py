"""The kernel: leaf modules every context uses (time, ids, errors, the domain's terms, sealed text,
settings and the local servers' loopback guard). Of the other contexts, only the store's ports are
imported here (by sealed, for the `Cipher` port)."""
