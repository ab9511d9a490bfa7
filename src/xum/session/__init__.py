"""The turn loop that ties the context engine, the store, the provider and the tools."""

from xum.session.admission import Cancellation
from xum.session.core import Session, SessionConfig, TurnResult

__all__ = ["Cancellation", "Session", "SessionConfig", "TurnResult"]
