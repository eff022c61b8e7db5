"""Planners for the debug console's chat simulator: given the turn so far and the tools the skills'
MCP lists, decide what the simulated agent does next (call tools, or answer and end the turn).

- :class:`CommandPlanner` (the default, deterministic, no network): ``/call TOOL {json}`` calls
  exactly that tool; any other query is matched by keywords against the tools' names,
  descriptions and parameter descriptions, and the best match is called with arguments filled
  from the query; no match answers with the list of tools. It always says how it decided.
- :class:`OpenAIPlanner`: any OpenAI-compatible ``/chat/completions`` endpoint with tool calling
  (``--planner-url``, ``--planner-model``, the key from an environment variable).

Adding a planner is one class with ``name`` and ``step``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import httpx

MAX_RESULT_TEXT = 4000  # of one tool result, as the planner reads it
PLANNER_TIMEOUT_S = 60.0


class PlannerError(Exception):
    """The planner could not decide (an endpoint down, an answer it cannot read)."""


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class PlannedCall:
    id: str
    tool: str
    arguments: dict[str, Any]


@dataclass
class Message:
    """One message of the turn, in the chat-completions shape (role, text, the assistant's calls,
    the tool result's call id)."""

    role: Literal["user", "assistant", "tool"]
    text: str
    calls: list[PlannedCall] = field(default_factory=list)
    call_id: str | None = None
    tool: str | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "text": self.text}
        if self.calls:
            out["toolCalls"] = [{"id": c.id, "name": c.tool, "arguments": c.arguments} for c in self.calls]
        if self.tool is not None:
            out["toolName"] = self.tool
            out["toolCallId"] = self.call_id
        return out


@dataclass(frozen=True)
class Decision:
    """Call these tools (and come back with their results), or answer with ``text`` and end the turn.
    ``note``: how the planner decided, for the trace."""

    calls: list[PlannedCall] = field(default_factory=list)
    text: str = ""
    note: str = ""


class Planner(Protocol):
    name: str

    async def step(self, messages: list[Message], tools: list[ToolInfo]) -> Decision: ...


# -- the deterministic planner ---------------------------------------------------------------------

_CALL = re.compile(r"^/call\s+(\S+)\s*(.*)$", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# Parameters that take the user's own words when the query does not say more.
_FREE_TEXT = frozenset({"keyword", "keywords", "query", "q", "search", "text", "term", "prompt"})
_STOP = frozenset({"a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "me", "i", "my", "is", "e", "g"})


def _tokens(text: str) -> set[str]:
    """Lower-case words, camelCase split; CJK runs as their characters' bigrams (no spaces there)."""
    out: set[str] = set()
    for word in _WORD.findall(_CAMEL.sub(" ", text).lower()):
        if word[0] >= "\u3040":
            out.update({word} if len(word) == 1 else {word[i : i + 2] for i in range(len(word) - 1)})
        elif word not in _STOP and len(word) > 1:
            out.add(word)
            if len(word) > 3 and word.endswith("s"):
                out.add(word[:-1])  # drinks ~ drink
    return out


def _tool_words(tool: ToolInfo) -> set[str]:
    text = f"{tool.name} {tool.description}"
    props = tool.input_schema.get("properties")
    if isinstance(props, dict):
        for name, prop in props.items():
            text += f" {name}"
            if isinstance(prop, dict) and isinstance(prop.get("description"), str):
                text += f" {prop['description']}"
    return _tokens(text)


def _fill(tool: ToolInfo, query: str) -> dict[str, Any]:
    """Arguments for ``tool`` from the query: free-text parameters get the words left once the
    tool's name (the verb: searchDrinks) and stop words are taken out, required numbers the first
    number, enums a value the query names (required ones their first value)."""
    props = tool.input_schema.get("properties")
    if not isinstance(props, dict):
        return {}
    required = set(tool.input_schema.get("required") or [])
    verb = _tokens(tool.name)
    rest = " ".join(w for w in query.split() if _tokens(w) and not _tokens(w) <= verb) or query
    number = _NUMBER.search(query)
    args: dict[str, Any] = {}
    for name, prop in props.items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        enum = prop.get("enum") if isinstance(prop, dict) else None
        if isinstance(enum, list) and enum:
            hit = next((v for v in enum if isinstance(v, str) and v.lower() in query.lower()), None)
            if hit is not None or name in required:
                args[name] = hit if hit is not None else enum[0]
        elif kind == "string" and (name.lower() in _FREE_TEXT or name in required):
            args[name] = rest.strip()
        elif kind in ("number", "integer") and name in required:
            value = float(number.group()) if number else prop.get("minimum", 0)
            args[name] = int(value) if kind == "integer" else value
        elif kind == "boolean" and name in required:
            args[name] = False
    return args


def _result_text(messages: list[Message]) -> str:
    results = [m for m in messages if m.role == "tool"]
    return "\n".join(f"{m.tool}: {m.text}" for m in results[-4:])


class CommandPlanner:
    """The default planner: ``/call TOOL {json}``, else a keyword match, else no call."""

    name = "command"

    async def step(self, messages: list[Message], tools: list[ToolInfo]) -> Decision:
        if messages and messages[-1].role == "tool":
            return Decision(text=_result_text(messages), note="tool results shown as the answer")
        query = next((m.text for m in reversed(messages) if m.role == "user"), "").strip()
        names = ", ".join(t.name for t in tools) or "none"
        command = _CALL.match(query)
        if command is not None:
            return self._command(command.group(1), command.group(2).strip(), tools, names)
        words = _tokens(query)
        scored = sorted(
            ((len(words & _tool_words(t)), i, t) for i, t in enumerate(tools)),
            key=lambda s: (-s[0], s[1]),
        )
        if not scored or scored[0][0] == 0:
            return Decision(
                text=f"No tool matches {query!r}. Try `/call TOOL {{json}}` (tools: {names}).",
                note="keyword match: no tool shares a word with the query",
            )
        score, _i, tool = scored[0]
        shared = sorted(words & _tool_words(tool))
        call = PlannedCall(id="call-1", tool=tool.name, arguments=_fill(tool, query))
        note = f"keyword match: {tool.name} shares {score} word(s) with the query ({', '.join(shared[:8])})"
        return Decision(calls=[call], note=note)

    def _command(self, name: str, raw: str, tools: list[ToolInfo], names: str) -> Decision:
        if name not in {t.name for t in tools}:
            return Decision(text=f"There is no tool {name} (tools: {names}).", note="/call of an unknown tool")
        try:
            arguments = json.loads(raw) if raw else {}
        except ValueError as err:
            return Decision(text=f"The arguments of /call {name} are not JSON: {err}.", note="/call with bad JSON")
        if not isinstance(arguments, dict):
            return Decision(text=f"The arguments of /call {name} must be a JSON object.", note="/call with bad JSON")
        return Decision(calls=[PlannedCall(id="call-1", tool=name, arguments=arguments)], note=f"/call {name}")


# -- an OpenAI-compatible endpoint -----------------------------------------------------------------

SYSTEM_PROMPT = (
    "You are the agent of a WeChat mini-program AI mode chat. Answer the user's request by calling the "
    "skill tools you are given; call a tool whenever one fits, then answer briefly."
)


def _wire_message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.call_id, "content": m.text[:MAX_RESULT_TEXT]}
    out: dict[str, Any] = {"role": m.role, "content": m.text or None}
    if m.calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.tool, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
            }
            for c in m.calls
        ]
    return out


def chat_completions_url(base: str) -> str:
    """``https://host/v1`` -> ``https://host/v1/chat/completions``; a full URL stays as it is."""
    base = base.rstrip("/")
    return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


class OpenAIPlanner:
    """Tool calling through an OpenAI-compatible chat-completions endpoint."""

    name = "openai"

    def __init__(
        self, url: str, model: str, *, api_key: str | None = None, timeout_s: float = PLANNER_TIMEOUT_S
    ) -> None:
        self.url = chat_completions_url(url)
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s

    async def step(self, messages: list[Message], tools: list[ToolInfo]) -> Decision:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, *(_wire_message(m) for m in messages)],
        }
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                }
                for t in tools
            ]
            body["tool_choice"] = "auto"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s) as client:
                response = await client.post(self.url, json=body, headers=headers)
        except httpx.HTTPError as err:
            raise PlannerError(f"{self.url}: {type(err).__name__}: {err}") from err
        if response.status_code != 200:
            raise PlannerError(f"{self.url} answered HTTP {response.status_code}: {response.text[:300]}")
        try:
            message = response.json()["choices"][0]["message"]
            calls = [
                PlannedCall(
                    id=str(c.get("id") or f"call-{i + 1}"),
                    tool=str(c["function"]["name"]),
                    arguments=_arguments(c["function"].get("arguments")),
                )
                for i, c in enumerate(message.get("tool_calls") or [])
            ]
        except (ValueError, KeyError, IndexError, TypeError) as err:
            raise PlannerError(f"{self.url} answered no chat completion ({type(err).__name__}: {err})") from err
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        return Decision(calls=calls, text=text, note=f"{self.model} at {self.url}")


def _arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments: a JSON object, usually as a string (the wire format), never anything else."""
    value = json.loads(raw) if isinstance(raw, str) and raw.strip() else (raw or {})
    if not isinstance(value, dict):
        raise ValueError("a tool call's arguments must be a JSON object")
    return value
