"""`make demo`: a scripted scenario, end to end, against the local stack, over HTTP.

Uses the stack already answering `GET $API/v1/health` (API defaults to http://127.0.0.1:$GATEWAY_PORT, port
3000); otherwise starts one in this process (`LocalStack`, as `make dev` does, so MOTO_PORT, GATEWAY_PORT,
TEMPORAL_PORT, TEMPORAL_UI_PORT and LOCAL_STATE_DIR apply; the worker polls in a thread), runs the scenario
and stops it.

The scenario: Alice sets up a shared workspace with the policy `auto`; saves a document; a turn remembers a
line (committed through the fence); a turn writes a working note and a later turn of the same session sees
it; Alice opens a key session for her agent runtime, which admits a capture under it, Alice clears the memory
first, and the stale capture is refused (`policy`); with the policy `read_only` a turn's edit becomes a
proposal that Alice applies herself.

Exit 0 when every step answered as expected; 1 (saying what was expected) otherwise.
"""
