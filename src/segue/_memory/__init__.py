"""Workspace memories: the hot set given to the model, and the context notes (R14, R15)."""
