"""HTTP plumbing shared by the route-group handlers: the resolver, request and response models, and the one
mapping of domain errors to statuses and envelopes."""
