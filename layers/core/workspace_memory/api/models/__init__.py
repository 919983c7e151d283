"""Response models of the public HTTP API: what every route answers, and the error envelope.

Routes return `Response[Model]`; powertools validates the model and serializes it by alias (camelCase), and
the same declarations will generate the OpenAPI document. A field that is left out of the JSON when absent is
declared so (`omitted_when_none`); every other optional field is sent as `null`. The worker's client parses
the automation routes' answers into these same models. Domain objects carry no wire shape: the `of`
constructors here are the only mapping from them to JSON.

One module per bounded context, so a handler imports (and builds at its cold start) only the models its
routes answer: `base` (the model bases, redaction findings), `envelope` (the error envelope) and `policy`
(the memory policy, which a stale-revision error carries) for every route; `workspaces`, `deletion`,
`document`, `entries`, `conversations` and `automation` for the route groups. Nothing is re-exported here:
import a model from its module.
"""
