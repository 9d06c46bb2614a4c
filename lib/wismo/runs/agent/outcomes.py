"""How a conversation ended: the named outcomes a trace records, and the exception a backend raises to end one."""

from __future__ import annotations

from wismo.core.errors import WismoError

ANSWERED = "answered"
TURN_BUDGET = "turn budget exhausted"
CALL_BUDGET = "tool-call budget exhausted"
TOKEN_BUDGET = "token budget exhausted"
# What local servers and small models really do; each ends the conversation, and the run goes on.
NO_USAGE = "no token usage reported"
BAD_ARGUMENTS = "tool-call arguments not a JSON object"
UNKNOWN_TOOL = "unknown tool requested"
BAD_CALL_ID = "call id missing or reused"
UNEXPECTED_ANSWER = "answer not the expected JSON"
TIMEOUT = "request timed out"
CONNECTION_FAILED = "server unreachable"
SERVER_ERROR = "server error"
# A conversation imported from traces whose last traced model call asked for tools: no answer was traced after them.
NO_TRACED_ANSWER = "no answer in the trace"

BUDGETS = (TURN_BUDGET, CALL_BUDGET, TOKEN_BUDGET)
REFUSED_CALLS = (BAD_ARGUMENTS, UNKNOWN_TOOL, BAD_CALL_ID)  # the last reply's calls were not run
FAILED_REQUESTS = (NO_USAGE, TIMEOUT, CONNECTION_FAILED, SERVER_ERROR)  # the last request got no usable answer
ALL = (ANSWERED, *BUDGETS, *REFUSED_CALLS, UNEXPECTED_ANSWER, *FAILED_REQUESTS, NO_TRACED_ANSWER)


class ConversationEnded(WismoError):
    """A backend's request failed in a way that ends this conversation only; the run goes on with the next."""

    def __init__(self, outcome: str, reason: str) -> None:
        super().__init__(reason)
        self.outcome = outcome
        self.reason = reason
