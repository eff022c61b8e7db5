"""Planners for the debug console's chat simulator: given the turn so far and the tools the skills'
MCP lists, decide what the simulated agent does next (call tools, or answer and end the turn).

- :class:`CommandPlanner` (the default, deterministic, no network): ``/call TOOL {json}`` calls
  exactly that tool; any other query is matched by terms (words, or character bigrams in Chinese
  and other scripts written without spaces) against the tools' names, descriptions, parameters and
  SKILL.md passages, and the best match is called with arguments filled from the query; no match
  answers with the list of tools. It always says which tool and arguments it chose and why.
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

from skillc.server.debugger.planner_terms import (
    ASKING_WORDS,
    description_text,
    is_spaceless,
    parameter_text,
    strip_filler,
    terms,
)

MAX_RESULT_TEXT = 4000  # of one tool result, as the planner reads it
PLANNER_TIMEOUT_S = 60.0


class PlannerError(Exception):
    """The planner could not decide (an endpoint down, an answer it cannot read)."""


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    input_schema: dict[str, Any]
    # The passages of the tool's SKILL.md that name it (planner_terms.guide_passages), "" if none.
    guide: str = ""


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
class Choice:
    """Why the term match chose a tool: the terms it shares with the query (``shared``, by where
    the tool's text has them in ``matched``), the arguments and how each was filled (``filled``),
    and the next best tools with their scores (``others``)."""

    tool: str
    arguments: dict[str, Any]
    score: int
    shared: list[str]
    matched: dict[str, list[str]]
    filled: dict[str, str]
    others: list[dict[str, Any]] = field(default_factory=list)

    def where(self) -> str:
        return "; ".join(f"{src}: {', '.join(found[:8])}" for src, found in self.matched.items())

    def note(self) -> str:
        return (
            f"term match: {self.tool} shares {self.score} term(s) with the query ({self.where()}); "
            f"arguments {json.dumps(self.arguments, ensure_ascii=False, sort_keys=True)}"
        )

    def reason(self) -> str:
        """What the simulated agent says in the chat before it calls the tool."""
        args = json.dumps(self.arguments, ensure_ascii=False, sort_keys=True)
        return f"Calling {self.tool} {args}: the query shares {', '.join(self.shared[:8])} with its {self.where()}."

    def wire(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "score": self.score,
            "shared": self.shared,
            "matched": self.matched,
            "filled": self.filled,
            "others": self.others,
        }


@dataclass(frozen=True)
class Decision:
    """Call these tools (and come back with their results), or answer with ``text`` and end the turn.
    ``note``: how the planner decided, for the trace; ``choice``: the term match's reasons."""

    calls: list[PlannedCall] = field(default_factory=list)
    text: str = ""
    note: str = ""
    choice: Choice | None = None


class Planner(Protocol):
    name: str

    async def step(self, messages: list[Message], tools: list[ToolInfo]) -> Decision: ...


# -- the deterministic planner ---------------------------------------------------------------------

_CALL = re.compile(r"^/call\s+(\S+)\s*(.*)$", re.DOTALL)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# Parameters that take the user's own words when the query does not say more.
_FREE_TEXT = frozenset({"keyword", "keywords", "query", "q", "search", "text", "term", "prompt"})
# Where a tool's terms come from, in the order the planner's reasons name them.
SOURCES = ("name", "description", "parameters", "SKILL.md")


def _tool_terms(tool: ToolInfo) -> dict[str, set[str]]:
    return {
        "name": terms(tool.name),
        "description": terms(description_text(tool.description)),
        "parameters": terms(parameter_text(tool.input_schema)),
        "SKILL.md": terms(tool.guide),
    }


def _free_text(query: str, verb: set[str]) -> str:
    """The user's own words: each word without what only asks (我要一杯拿铁 -> 拿铁), minus the words
    of the tool's name (the verb: "search drinks latte" -> latte); the whole query if nothing is left."""
    kept: list[str] = []
    for word in query.split():
        if any(is_spaceless(ch) for ch in word):
            word = strip_filler(word)
        elif word.casefold().strip(".,!?;:") in ASKING_WORDS:
            continue
        found = terms(word)
        if found and not found <= verb:
            kept.append(word)
    return " ".join(kept) or query.strip()


def _fill(tool: ToolInfo, query: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Arguments for ``tool`` from the query, and how each was filled: free-text parameters get the
    user's own words (:func:`_free_text`), required numbers the first number, enums a value the
    query names (required ones their first value), required booleans false."""
    props = tool.input_schema.get("properties")
    if not isinstance(props, dict):
        return {}, {}
    required = set(tool.input_schema.get("required") or [])
    number = _NUMBER.search(query)
    args: dict[str, Any] = {}
    how: dict[str, str] = {}
    for name, prop in props.items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        enum = prop.get("enum") if isinstance(prop, dict) else None
        if isinstance(enum, list) and enum:
            hit = next((v for v in enum if isinstance(v, str) and v.lower() in query.lower()), None)
            if hit is not None:
                args[name], how[name] = hit, "an enum value the query names"
            elif name in required:
                args[name], how[name] = enum[0], "required: the enum's first value"
        elif kind == "string" and (name.lower() in _FREE_TEXT or name in required):
            args[name] = _free_text(query, terms(tool.name))
            how[name] = "the query's own words, without the tool's name and the words that only ask"
        elif kind in ("number", "integer") and name in required:
            value = float(number.group()) if number else prop.get("minimum", 0)
            args[name] = int(value) if kind == "integer" else value
            how[name] = "the query's first number" if number else "required: the minimum"
        elif kind == "boolean" and name in required:
            args[name], how[name] = False, "required: false"
    return args, how


def _result_text(messages: list[Message]) -> str:
    results = [m for m in messages if m.role == "tool"]
    return "\n".join(f"{m.tool}: {m.text}" for m in results[-4:])


class CommandPlanner:
    """The default planner: ``/call TOOL {json}``, else the tool sharing most terms with the query
    (:mod:`skillc.server.debugger.planner_terms`), else no call. It says what it chose and why:
    ``Decision.note`` and ``Decision.choice`` (the trace), ``Decision.text`` (the chat)."""

    name = "command"

    async def step(self, messages: list[Message], tools: list[ToolInfo]) -> Decision:
        if messages and messages[-1].role == "tool":
            return Decision(text=_result_text(messages), note="tool results shown as the answer")
        query = next((m.text for m in reversed(messages) if m.role == "user"), "").strip()
        names = ", ".join(t.name for t in tools) or "none"
        command = _CALL.match(query)
        if command is not None:
            return self._command(command.group(1), command.group(2).strip(), tools, names)
        words = terms(query)
        scored = []
        for i, tool in enumerate(tools):
            by_source = _tool_terms(tool)
            shared = words & set().union(*by_source.values())
            scored.append((len(shared), i, tool, by_source, shared))
        scored.sort(key=lambda s: (-s[0], s[1]))
        if not scored or scored[0][0] == 0:
            return Decision(
                text=f"No tool matches {query!r}. Try `/call TOOL {{json}}` (tools: {names}).",
                note="term match: no tool shares a word or character pair with the query",
            )
        score, _i, tool, by_source, shared = scored[0]
        matched = {src: sorted(words & by_source[src]) for src in SOURCES if words & by_source[src]}
        arguments, how = _fill(tool, query)
        others = [{"tool": t.name, "score": n} for n, _j, t, _b, _s in scored[1:4] if n > 0]
        choice = Choice(tool.name, arguments, score, sorted(shared), matched, how, others)
        call = PlannedCall(id="call-1", tool=tool.name, arguments=arguments)
        return Decision(calls=[call], text=choice.reason(), note=choice.note(), choice=choice)

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
