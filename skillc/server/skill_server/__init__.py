"""The MCP server of ``skillc serve``: one low-level ``mcp.server.Server`` for every served skill.

The low-level server (not ``MCPServer``) because the result must be exactly the skill's: its
``content``, its ``structuredContent``, the card in ``_meta``, and an ``isError`` result for
every failure (bad arguments, a JavaScript exception, a deadline, a refusal) instead of a
protocol error. Each skill has its own :class:`ApiRuntime` and :class:`CardHost`; calls run
concurrently on their worker threads.

The parts: ``server`` (:class:`SkillServer`: tools/list, tools/call, the MCP handlers), ``served``
(the skills and which skill a card belongs to), ``tool_list`` (the tools listed and who answers
each), ``api_calls`` (a skill API's call: consent, card, console, result), ``card_tools`` (the
app-only tools a card view calls), ``consent_card`` (consent asked in the card, and
``skillc_consent``, the user's answer), ``resources`` (resources and prompts), ``client_log`` (console
lines as MCP log notifications), ``ui_control_wiring`` (ui_control on this server) and ``answer``
(the record of the tools/call being answered).
"""

from skillc.server.skill_server.api_calls import shows_cards
from skillc.server.skill_server.server import EVENTS_META, ConsoleObserver, SkillServer

__all__ = ["EVENTS_META", "ConsoleObserver", "SkillServer", "shows_cards"]
