"""The pieces that make the PostgreSQL store (segue.history.postgres) a full store for a
session: session_history over it."""
