"""The deployable artifact: the layer's requirements from uv.lock, `sam build` for the template's architecture
and for this host's, and the checks that what is built is what the tests run (docs/deploy.md)."""
