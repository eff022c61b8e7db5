"""The chat simulator behind submit_chat_query: the deterministic planner (``/call``, keyword match,
no match), an OpenAI-compatible planner against a local HTTP server that speaks the
chat-completions wire format, and whole turns against a real ``skillc serve`` on loopback (tool
calls through /mcp, consent, the card a call mounts, everything recorded under the requestId).
The console page's chat and render endpoints run in-process against the same server."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from skillc.runtime.config import RuntimeConfig
from skillc.server.consent import ConsentPolicy
from skillc.server.debugger.chat import ChatError, ChatSimulator
from skillc.server.debugger.console_feed import ConsoleFeed
from skillc.server.debugger.console_page import ConsolePage
from skillc.server.debugger.planner import (
    CommandPlanner,
    Message,
    OpenAIPlanner,
    PlannerError,
    ToolInfo,
    chat_completions_url,
)
from skillc.server.runner import ServeHandle, ServeOptions
from tests.conftest import COFFEE, FIXTURES

ORDER_SKILL = FIXTURES / "runtime-lifecycle" / "order-skill"
SEARCH = ToolInfo(
    "searchDrinks",
    "Search the café menu by keyword (drink name, flavour or category) and list matching drinks.",
    {
        "type": "object",
        "properties": {
            "keyword": {"type": "string", "description": 'Words from the user, e.g. "latte"'},
            "category": {"type": "string", "enum": ["coffee", "tea"]},
        },
    },
)
PAY = ToolInfo(
    "payOrder",
    "Pay a confirmed order and return the pickup code.",
    {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]},
)


def plan(query: str, tools: list[ToolInfo] | None = None) -> Any:
    return asyncio.run(CommandPlanner().step([Message(role="user", text=query)], tools or [SEARCH, PAY]))


# -- the deterministic planner --------------------------------------------------------------------


def test_slash_call_calls_exactly_that_tool() -> None:
    decision = plan('/call searchDrinks {"keyword": "latte"}')
    assert [(c.tool, c.arguments) for c in decision.calls] == [("searchDrinks", {"keyword": "latte"})]
    assert decision.note == "/call searchDrinks"
    assert plan("/call payOrder").calls[0].arguments == {}


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("/call nope {}", "There is no tool nope (tools: searchDrinks, payOrder)."),
        ("/call searchDrinks {bad", "The arguments of /call searchDrinks are not JSON: Expecting property name"),
        ("/call searchDrinks [1]", "The arguments of /call searchDrinks must be a JSON object."),
        ("what is the weather", "No tool matches 'what is the weather'. Try `/call TOOL {json}`"),
    ],
)
def test_what_the_planner_cannot_call_it_answers(query: str, text: str) -> None:
    decision = plan(query)
    assert decision.calls == []
    assert decision.text.startswith(text)


def test_keyword_match_says_what_it_matched_and_fills_the_arguments() -> None:
    decision = plan("search drinks latte")
    assert [c.tool for c in decision.calls] == ["searchDrinks"]
    # The tool's own name words are the verb; what is left is the user's keyword.
    assert decision.calls[0].arguments == {"keyword": "latte"}
    assert decision.note == (
        "term match: searchDrinks shares 4 term(s) with the query (name: drink, drinks, search; "
        'description: drink, drinks, search; parameters: latte); arguments {"keyword": "latte"}'
    )
    pay = plan("pay my order o-17")
    assert [(c.tool, c.arguments) for c in pay.calls] == [("payOrder", {"orderId": "o-17"})]


def test_after_the_results_the_planner_answers_with_them() -> None:
    messages = [
        Message(role="user", text="latte"),
        Message(role="tool", text="3 drinks", call_id="call-1", tool="searchDrinks"),
    ]
    decision = asyncio.run(CommandPlanner().step(messages, [SEARCH]))
    assert decision.calls == [] and decision.text == "searchDrinks: 3 drinks"


# -- an OpenAI-compatible endpoint ----------------------------------------------------------------


class FakeCompletions:
    """A chat-completions endpoint on loopback: answers from a script, records every request."""

    def __init__(self, answers: list[tuple[int, Any]]) -> None:
        self.answers = answers
        self.requests: list[tuple[dict[str, str], Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                fake.requests.append((dict(self.headers.items()), json.loads(self.rfile.read(length))))
                status, body = fake.answers.pop(0) if fake.answers else (500, {"error": "script ended"})
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_abc", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }
    return {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": message}]}


def _answer(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {"id": "chatcmpl-2", "object": "chat.completion", "choices": [{"index": 0, "message": message}]}


@pytest.fixture
def completions() -> Iterator[FakeCompletions]:
    fake = FakeCompletions([])
    yield fake
    fake.close()


def test_openai_planner_speaks_the_wire_format(completions: FakeCompletions) -> None:
    completions.answers += [(200, _tool_call("searchDrinks", {"keyword": "latte"})), (200, _answer("Here."))]
    planner = OpenAIPlanner(completions.url, "test-model", api_key="sk-test")
    first = asyncio.run(planner.step([Message(role="user", text="a latte please")], [SEARCH]))
    assert [(c.id, c.tool, c.arguments) for c in first.calls] == [("call_abc", "searchDrinks", {"keyword": "latte"})]
    history = [
        Message(role="user", text="a latte please"),
        Message(role="assistant", text="", calls=first.calls),
        Message(role="tool", text="3 drinks", call_id="call_abc", tool="searchDrinks"),
    ]
    second = asyncio.run(planner.step(history, [SEARCH]))
    assert second.calls == [] and second.text == "Here."

    headers, body = completions.requests[0]
    assert headers["Authorization"] == "Bearer sk-test"
    assert body["model"] == "test-model" and body["tool_choice"] == "auto"
    assert body["tools"][0] == {
        "type": "function",
        "function": {"name": "searchDrinks", "description": SEARCH.description, "parameters": SEARCH.input_schema},
    }
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    sent = completions.requests[1][1]["messages"]
    assert sent[2]["tool_calls"][0]["function"] == {"name": "searchDrinks", "arguments": '{"keyword": "latte"}'}
    assert sent[3] == {"role": "tool", "tool_call_id": "call_abc", "content": "3 drinks"}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ((500, {"error": "down"}), 'answered HTTP 500: {"error": "down"}'),
        ((200, b"not json"), "answered no chat completion (JSONDecodeError"),
        ((200, {"choices": []}), "answered no chat completion (IndexError"),
        ((200, {"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}), "(KeyError"),
    ],
)  # fmt: skip
def test_openai_planner_failures_are_named(completions: FakeCompletions, answer: Any, message: str) -> None:
    completions.answers.append(answer)
    with pytest.raises(PlannerError) as err:
        asyncio.run(OpenAIPlanner(completions.url, "m").step([Message(role="user", text="x")], [SEARCH]))
    assert message in str(err.value)
    assert "Authorization" not in completions.requests[0][0]  # no key, no header


def test_openai_planner_unreachable() -> None:
    planner = OpenAIPlanner("http://127.0.0.1:9/v1", "m", timeout_s=2)
    with pytest.raises(PlannerError, match=r"^http://127.0.0.1:9/v1/chat/completions: ConnectError"):
        asyncio.run(planner.step([Message(role="user", text="x")], []))


def test_chat_completions_url() -> None:
    assert chat_completions_url("https://api.example.com/v1/") == "https://api.example.com/v1/chat/completions"
    assert chat_completions_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"


# -- whole turns against a running skillc serve ---------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    state = tmp_path_factory.mktemp("chat-state")
    options = ServeOptions(paths=(COFFEE, ORDER_SKILL), port=0, runtime=RuntimeConfig(state_dir=state))
    with ServeHandle.start(options) as handle:
        yield handle


def _mcp(handle: ServeHandle) -> str:
    return f"{handle.url}/mcp" if not handle.url.endswith("/mcp") else handle.url


def test_a_turn_calls_the_tool_through_mcp_and_records_it(served: ServeHandle) -> None:
    sim = ChatSimulator(lambda: _mcp(served), CommandPlanner())
    turn = asyncio.run(sim.turn('/call searchDrinks {"keyword": "latte"}'))
    assert turn.completed and turn.request_id.startswith("req-")
    [call] = turn.tool_calls
    assert (call.tool_name, call.status, call.app_key, call.request_id) == (
        "searchDrinks",
        "succeeded",
        "coffee-skill",
        turn.request_id,
    )
    assert call.requires_user_approval is False and call.is_mini_app is True
    events = [(e.category, e.event) for e in turn.trace_events]
    assert events == [
        ("simulator", "turn_start"),
        ("mcp", "tools_list"),
        ("simulator", "planner_decision"),
        ("mcp", "tools_call"),
        ("mcp", "tools_call_result"),
        ("runtime", "card_mounted"),
        ("simulator", "planner_decision"),
        ("simulator", "turn_end"),
    ]
    assert {e.request_id for e in turn.trace_events} == {turn.request_id}
    listed = turn.trace_events[1].payload
    assert listed["protocolVersion"] == "2026-07-28"  # a fresh auto client negotiates the modern era
    assert "skillc_card_event" not in str(listed)  # the app-only tool is not the model's
    card = turn.outcomes[0].card
    assert card is not None and card["componentPath"] == "components/drink-list/index"
    assert [m.role for m in turn.messages] == ["user", "assistant", "tool", "assistant"]
    assert turn.messages[-1].text.startswith("searchDrinks: ")


def test_an_l3_tool_without_consent_is_rejected(served: ServeHandle) -> None:
    sim = ChatSimulator(lambda: _mcp(served), CommandPlanner())
    turn = asyncio.run(sim.turn('/call payOrder {"orderId": "o-1"}'))
    [call] = turn.tool_calls
    assert call.status == "rejected" and call.requires_user_approval is True
    # The simulator shows cards, so the server asks in the card; the console draws no control.
    assert "the debug console cannot ask the user: nothing ran; use --approve TOOL" in (call.message or "")


def test_a_turn_with_the_openai_planner(served: ServeHandle, completions: FakeCompletions) -> None:
    completions.answers += [(200, _tool_call("searchDrinks", {"keyword": "mocha"})), (200, _answer("Two mochas."))]
    sim = ChatSimulator(lambda: _mcp(served), OpenAIPlanner(completions.url, "m"))
    turn = asyncio.run(sim.turn("any mocha?"))
    assert [c.tool_name for c in turn.tool_calls] == ["searchDrinks"]
    assert turn.messages[-1].text == "Two mochas."
    tools_sent = {t["function"]["name"] for t in completions.requests[0][1]["tools"]}
    assert {"searchDrinks", "confirmOrder", "payOrder", "showOrder"} <= tools_sent
    tool_message = completions.requests[1][1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_abc"


def test_turn_errors(served: ServeHandle, completions: FakeCompletions) -> None:
    with pytest.raises(ChatError) as empty:
        asyncio.run(ChatSimulator(lambda: _mcp(served), CommandPlanner()).turn("  "))
    assert empty.value.code == "CHAT_SUBMIT_FAILED"
    with pytest.raises(ChatError) as not_ready:
        asyncio.run(ChatSimulator(lambda: None, CommandPlanner()).turn("hi"))
    assert not_ready.value.code == "CHAT_NOT_READY"
    with pytest.raises(ChatError) as down:
        asyncio.run(ChatSimulator(lambda: "http://127.0.0.1:9/mcp", CommandPlanner()).turn("hi"))
    assert down.value.code == "CHAT_SUBMIT_FAILED" and "tools/list at http://127.0.0.1:9/mcp failed" in str(down.value)
    completions.answers.append((503, {"error": "busy"}))
    with pytest.raises(ChatError, match=r"the planner failed: .* answered HTTP 503"):
        asyncio.run(ChatSimulator(lambda: _mcp(served), OpenAIPlanner(completions.url, "m")).turn("hi"))


def test_one_turn_at_a_time(served: ServeHandle, completions: FakeCompletions) -> None:
    # The planner's endpoint answers slowly enough for a second query to arrive mid-turn.
    sim = ChatSimulator(lambda: _mcp(served), OpenAIPlanner(completions.url, "m"))
    completions.answers.append((200, _answer("done")))

    async def both() -> tuple[Any, Any]:
        first = asyncio.create_task(sim.turn("one"))
        while not sim.busy:
            await asyncio.sleep(0.001)
        second = await asyncio.gather(sim.turn("two"), return_exceptions=True)
        return await first, second[0]

    first, second = asyncio.run(both())
    assert first.completed
    assert isinstance(second, ChatError) and second.code == "CHAT_BUSY"


def test_a_runaway_planner_is_stopped(served: ServeHandle) -> None:
    class Loop(CommandPlanner):
        async def step(self, messages: list[Message], tools: list[ToolInfo]) -> Any:
            return await super().step([Message(role="user", text="/call showOrder {}")], tools)

    turn = asyncio.run(ChatSimulator(lambda: _mcp(served), Loop(), max_rounds=2).turn("go"))
    assert len(turn.tool_calls) == 2
    assert turn.messages[-1].text == "(stopped: too many rounds of tool calls)"


# -- the console page's endpoints ----------------------------------------------------------------


def _page(served: ServeHandle) -> tuple[ConsolePage, list[tuple[str, Any]]]:
    sent: list[tuple[str, Any]] = []
    feed = ConsoleFeed(lambda event, data: sent.append((event, data)))
    server = served.prepared.server
    server.console_observers.append(feed.add)
    packages = [s.package for s in server.catalogue.skills]
    chat = ChatSimulator(lambda: _mcp(served), CommandPlanner())
    return ConsolePage(packages, cards=server.cards, chat=chat, feed=feed), sent


def test_the_chat_endpoint_returns_the_turn_its_console_and_its_card(served: ServeHandle) -> None:
    page, sent = _page(served)
    try:
        with TestClient(_app(page)) as client:
            res = client.post("/__debug/api/chat", json={"query": '/call searchDrinks {"keyword": "latte"}'}).json()
            assert res["ok"] is True and res["requestId"].startswith("req-")
            assert [c["toolName"] for c in res["toolCalls"]] == ["searchDrinks"]
            assert {e["requestId"] for e in res["traceEvents"]} == {res["requestId"]}
            [card] = res["cards"]
            assert card["widgetId"] == "drink-list" and "<html" in card["html"].lower()
            assert card["structuredContent"]["keyword"] == "latte"
            # The API VM's console.log, with its file and line, reached the page.
            [line] = [c for c in res["console"] if "searchDrinks took" in c["text"]]
            assert line["target"] == "app" and line["source"] == "api-vm"
            assert (line["url"], line["lineNumber"]) == ("coffee-skill/index.js", 11)
            assert sent[-1][0] == "console" and line in sent[-1][1]
            assert line in client.get("/__debug/api/console").json()["console"]

            bad = client.post("/__debug/api/chat", json={"q": 1})
            assert bad.status_code == 400 and bad.json()["error"]["code"] == "CHAT_SUBMIT_FAILED"
    finally:
        served.prepared.server.console_observers.clear()


def test_a_render_with_structured_content_runs_the_cards_javascript(served: ServeHandle) -> None:
    page, _sent = _page(served)
    try:
        with TestClient(_app(page)) as client:
            body = {"widgetId": "order-card", "structuredContent": {"title": "Order o-9"}, "width": 320}
            res = client.post("/__debug/api/render", json=body).json()
            assert res["ok"] is True and res["cardId"]
            assert "Order o-9" in res["html"]
            lines = [(c["text"], c["target"], c["source"], c["url"]) for c in res["console"]]
            path = "order-skill/components/order-card/index.js"
            assert lines == [
                ("created", "widget", "card-vm", path),
                ("attached", "widget", "card-vm", path),
                ("input waiting", "widget", "card-vm", path),
                ("result waiting", "widget", "card-vm", path),
            ]
            # An empty structuredContent is the preview: template data, no JavaScript.
            preview = client.post("/__debug/api/render", json={"widgetId": "drink-list"}).json()
            assert preview["ok"] is True and preview["console"] == [] and "cardId" not in preview
            missing = client.post("/__debug/api/render", json={"widgetId": "nope"}).json()
            assert missing["error"]["code"] == "TARGET_NOT_FOUND"
    finally:
        served.prepared.server.console_observers.clear()


def _app(page: ConsolePage) -> Any:
    from starlette.applications import Starlette

    return Starlette(routes=page.routes())


def test_consent_policy_is_the_servers(tmp_path: Path) -> None:
    """The simulator has no consent of its own: --approve-all on the server approves its L3 calls."""
    options = ServeOptions(
        paths=(COFFEE,),
        port=0,
        runtime=RuntimeConfig(state_dir=tmp_path),
        consent=ConsentPolicy(approve_all=True),
    )
    with ServeHandle.start(options) as handle:
        sim = ChatSimulator(lambda: _mcp(handle), CommandPlanner())
        turn = asyncio.run(sim.turn('/call confirmOrder {"drinkId": "d01"}'))
    [call] = turn.tool_calls
    assert call.status == "succeeded" and call.requires_user_approval is True


def test_the_feed_gives_the_lines_since_a_mark_when_full() -> None:
    from skillc.runtime.contracts import ConsoleEntry as Line
    from skillc.server.debugger import console_feed

    feed = ConsoleFeed()
    line = Line(level="log", text="x", timestamp=1)
    feed.add("s", "api-vm", [line] * console_feed.MAX_LINES)
    mark = feed.total
    feed.add("s", "card-vm", [line, line])
    assert [e["source"] for e in feed.since(mark)] == ["card-vm", "card-vm"]
    assert feed.since(feed.total) == [] and len(feed.since(0)) == console_feed.MAX_LINES
