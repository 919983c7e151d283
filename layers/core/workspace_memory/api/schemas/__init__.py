"""Request models of the public HTTP API (camelCase, unknown fields rejected), one module per context so a
function imports the models of its own routes only; the responses are in `api.models`. Nothing is re-exported
here: importing the package costs nothing."""
