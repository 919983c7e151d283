"""The API's one OpenAPI 3.1 document, generated from the route groups' typed handlers.

Every HTTP function of template.yaml has its own powertools resolver. This loads each handler module (as the
local gateway does), takes the schema powertools generates from the handlers' request and response models,
and merges them into one document. It then adds what the handler signatures do not say:

- paths and path parameters as template.yaml spells them (the deployed API Gateway's routes);
- the success statuses the handler really answers (read from its `respond(...)` / `no_content()` calls);
- the security each route has in the template (JWT bearer, SigV4/IAM the way API Gateway's
  `x-amazon-apigateway-authtype: awsSigv4` declares it, none);
- the headers the service refuses a request without, as required (REQUIRED_HEADERS), though the handlers read
  them as optional so that their absence answers the service's own code;
- for each status the route can give, one schema and the codes behind it (`x-error-codes`), derived from the
  domain errors each route can raise (ROUTE_ERRORS) through the one mapping in `workspace_memory.api.errors`.

Summaries and descriptions are the route decorators' own (`summary=`, `description=`): a route without them
is refused.

`scripts.openapi.generate` builds the document; `scripts.openapi.route_errors` holds ROUTE_ERRORS and the
statuses they answer. `python -m scripts.openapi` writes functions/docs/openapi.json, which the docs function
serves; `python -m scripts.openapi --check` fails when that file is stale (tests/unit/api/test_openapi.py does the
same).
"""
