"""Agent turns: ingress (`service`), admission, the authority a turn holds and its fence, recall,
capture, the framing of what the model is given, working notes and the contract with the workflow."""
