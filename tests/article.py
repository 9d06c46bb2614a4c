"""The article's study as the tests drive it through the agent loop: one order's prompt, and a conversation with a
design wismo serves, as wismo evaluate holds it (the scripted backend told the design's investigation)."""

from wismo.accounting.tokens.conversation import Prompt
from wismo.domain import prompts
from wismo.mcp.servers import designs
from wismo.runs.agent.backends import conversing
from wismo.runs.agent.loop import Budgets, run_case


def prompt(order_id: str) -> Prompt:
    """What a conversation about one order opens with: wismo's instructions and the article's question."""
    return Prompt(prompts.INSTRUCTIONS, prompts.question(order_id))


async def converse(backend, conn, tools, order_id, budgets=None, **kw):
    """One conversation about `order_id` with the design `conn` serves."""
    how = designs.get(conn.design).investigation
    chosen = conversing(backend, how, {"orderId": order_id}, True)
    return await run_case(chosen, conn, tools, order_id, prompt(order_id), budgets or Budgets(), **kw)
