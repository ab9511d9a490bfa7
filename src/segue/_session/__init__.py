"""The turn loop that ties the context engine, the store, the provider and the tools."""

from segue._session.admission import Cancellation
from segue._session.core import Session, SessionConfig, TurnResult

__all__ = ["Cancellation", "Session", "SessionConfig", "TurnResult"]
