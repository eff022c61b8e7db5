"""The 15 tools of the Debugger MCP (DEBUGGER-PROTOCOL.md): their MCP ``Tool`` and their handlers.

Query tools read the newest snapshot in the :class:`SnapshotStore`; control tools send one command
through the :class:`ConsoleChannel` (command name = tool name, params = the tool's camelCase
arguments, plus ``commandId`` for render_page / render_widget / submit_chat_query). What each
command must answer:

- render_page / render_widget: ``{}`` (or ``{"target": RuntimeTargetInfo}``) once rendered; the console
  must also post a DOM snapshot carrying a ``commandId`` while the command runs (the params'
  ``commandId``, or the channel's own id, which it may return as ``commandId``). The result's
  target is that snapshot's; without one the command is ``RENDER_TIMEOUT``, never the old snapshot;
- submit_chat_query: ``{"requestId": str}`` once the streamed turn ended;
- set_viewport: ``{"viewport": {width, height}}`` (optional);
- get_computed_style: ``{"computedStyle": {name: value}}`` or ``[{name, value}]``;
- get_element_rect: ``{x, y, width, height}``;
- scroll_to: ``{uid, x, y, maxX, maxY, viewportWidth, viewportHeight}``;
- take_screenshot: ``{data: base64, width, height}``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from mcp.server.context import ServerRequestContext
from mcp_types import CallToolRequestParams, CallToolResult, ImageContent, TextContent, Tool, ToolAnnotations
from pydantic import BaseModel, ValidationError

from skillc.server.artefacts import ArtefactStore
from skillc.server.debugger import args as a
from skillc.server.debugger.channel import CHAT_TIMEOUT_S, COMMAND_TIMEOUT_S, ConsoleChannel
from skillc.server.debugger.errors import DebuggerError, ErrorCode
from skillc.server.debugger.snapshot import (
    ConsoleEntry,
    RenderTargets,
    RuntimeTargetInfo,
    SnapshotStore,
    Stored,
    ViewportSize,
)
from skillc.server.debugger.tree import find_node, render_tree
from skillc.server.registry import ToolRegistry, ToolSpec, error_result

MAX_SCREENSHOT_B64 = 8 * 1024 * 1024
CAPTURE_S_PER_MEGAPIXEL = 0.6
MIME_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
CONTROL = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True)
CONTROL_LOCAL = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

M = TypeVar("M", bound=BaseModel)
Handler = Callable[[Any], Awaitable[CallToolResult]]


def json_result(body: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text=json.dumps(body, ensure_ascii=False, indent=2))], structured_content=body
    )


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    schema.pop("title", None)
    schema["additionalProperties"] = False
    return schema


def _page(items: Sequence[Any], args: a.Paged) -> tuple[list[Any], dict[str, Any]]:
    size = args.size
    start = args.page_idx * size
    chunk = list(items[start : start + size])
    return chunk, {
        "total": len(items),
        "pageIdx": args.page_idx,
        "pageSize": size,
        "hasMore": start + size < len(items),
    }


def _summary(entry: ConsoleEntry) -> dict[str, Any]:
    return entry.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={"args", "stack"})


class DebuggerTools:
    """The registry of the 15 tools, over one store, one channel and the catalogue's render targets."""

    def __init__(
        self,
        store: SnapshotStore,
        channel: ConsoleChannel,
        targets: RenderTargets,
        *,
        command_timeout_s: float = COMMAND_TIMEOUT_S,
        chat_timeout_s: float = CHAT_TIMEOUT_S,
        artefacts: ArtefactStore | None = None,
    ) -> None:
        self.artefacts = artefacts if artefacts is not None else ArtefactStore()  # an empty store is falsy
        self.command_timeout_s = command_timeout_s
        self.chat_timeout_s = chat_timeout_s
        self.store = store
        self.channel = channel
        self.targets = targets
        self.registry = ToolRegistry()
        add = self._add
        add(
            "list_console_messages",
            "Page through the runtime console (API VM, card VM, page).",
            a.ListConsoleArgs,
            self.list_console_messages,
            READ_ONLY,
        )
        add(
            "get_console_message",
            "One full console entry (raw args, position, stack) by msgid.",
            a.GetConsoleArgs,
            self.get_console_message,
            READ_ONLY,
        )
        add(
            "get_log_snapshot",
            "The newest debug scene: runtime console, trace events, tool calls, debug context.",
            a.NoArgs,
            self.get_log_snapshot,
            READ_ONLY,
        )
        add(
            "list_render_targets",
            "The manifest's debuggable Pages and Widgets, and the current target.",
            a.ListTargetsArgs,
            self.list_render_targets,
            READ_ONLY,
        )
        add(
            "render_page",
            "Switch to the full-page view and force-render a route (even the same one).",
            a.RenderPageArgs,
            self.render_page,
            CONTROL,
        )
        add(
            "render_widget",
            "Switch to the card view and render a Widget with the given structuredContent.",
            a.RenderWidgetArgs,
            self.render_widget,
            CONTROL,
        )
        add(
            "submit_chat_query",
            "Submit a query through the console's chat box and wait for the turn to end.",
            a.ChatArgs,
            self.submit_chat_query,
            CONTROL,
        )
        add(
            "set_viewport",
            "Set the simulated device size of the current Page / Widget.",
            a.ViewportArgs,
            self.set_viewport,
            CONTROL_LOCAL,
        )
        add(
            "take_snapshot",
            "The uid text tree of the current target (uids feed the inspection tools).",
            a.SnapshotArgs,
            self.take_snapshot,
            READ_ONLY,
        )
        add(
            "get_computed_style",
            "An element's computed style (getComputedStyle) by snapshot uid.",
            a.StyleArgs,
            self.get_computed_style,
            READ_ONLY,
        )
        add(
            "get_element_rect",
            "An element's x, y, width, height in the simulated viewport, by uid.",
            a.UidArgs,
            self.get_element_rect,
            READ_ONLY,
        )
        add(
            "scroll_to",
            "Scroll a container of the current target to absolute coordinates; read back the range.",
            a.ScrollArgs,
            self.scroll_to,
            CONTROL_LOCAL,
        )
        add(
            "take_screenshot",
            "Capture the current target or one element as an image.",
            a.ScreenshotArgs,
            self.take_screenshot,
            READ_ONLY,
        )
        add(
            "list_agent_trace_events",
            "Page through simulator / MCP / runtime trace events.",
            a.TraceArgs,
            self.list_agent_trace_events,
            READ_ONLY,
        )
        add(
            "list_agent_tool_calls",
            "Page through the simulator's tool calls.",
            a.ToolCallArgs,
            self.list_agent_tool_calls,
            READ_ONLY,
        )

    def _add(
        self,
        name: str,
        description: str,
        model: type[M],
        run: Callable[[M], Awaitable[CallToolResult]],
        annotations: ToolAnnotations,
    ) -> None:
        tool = Tool(name=name, description=description, input_schema=_schema(model), annotations=annotations)

        async def handler(_ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
            try:
                parsed = model.model_validate(params.arguments or {})
            except ValidationError as err:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in err.errors()
                )
                return error_result(f"invalid arguments for {name}: {problems}")
            try:
                return await run(parsed)
            except DebuggerError as err:
                return err.result()

        self.registry.add(ToolSpec(tool, handler))

    # -- snapshot reads ------------------------------------------------------------------------------

    def _stored(self) -> Stored | None:
        return self.store.current

    async def list_console_messages(self, args: a.ListConsoleArgs) -> CallToolResult:
        stored = self._stored()
        if stored is None:
            return json_result(self.store.header())
        snap = stored.snapshot
        target: str = args.target
        if target == "current":
            target = {"page": "page", "widget": "widget"}.get(snap.mode, "app")
        query = args.query.lower() if args.query else None
        entries = [
            e
            for e in snap.console
            if (target == "all" or e.target == target)
            and (args.levels is None or e.level in args.levels)
            and (query is None or query in e.text.lower())
        ]
        chunk, paging = _page(entries, args)
        return json_result({**self.store.header(), **paging, "messages": [_summary(e) for e in chunk]})

    async def get_console_message(self, args: a.GetConsoleArgs) -> CallToolResult:
        stored = self._stored()
        if stored is None:
            return json_result(self.store.header())
        entry = next((e for e in stored.snapshot.console if e.msgid == args.msgid), None)
        if entry is None:
            return json_result({**self.store.header(), "found": False, "msgid": args.msgid})
        message = {**_summary(entry), "entry": entry.wire()}
        return json_result({**self.store.header(), "found": True, "message": message})

    async def get_log_snapshot(self, _args: a.NoArgs) -> CallToolResult:
        stored = self._stored()
        if stored is None:
            return json_result(self.store.header())
        snap = stored.snapshot
        scene = snap.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={"dom", "targets"})
        return json_result({**self.store.header(), "snapshot": scene})

    async def list_render_targets(self, args: a.ListTargetsArgs) -> CallToolResult:
        stored = self._stored()
        if stored is None:
            return json_result(self.store.header())
        snap = stored.snapshot
        body = self.store.header()
        if args.type in ("all", "page"):
            body["pages"] = [p.wire() for p in snap.targets.pages]
        if args.type in ("all", "widget"):
            body["widgets"] = [w.wire() for w in snap.targets.widgets]
        if snap.current_target is not None:
            body["currentTarget"] = snap.current_target.wire()
        return json_result(body)

    async def take_snapshot(self, args: a.SnapshotArgs) -> CallToolResult:
        stored = self._stored()
        if stored is None or stored.snapshot.current_target is None or stored.snapshot.dom is None:
            return json_result(self.store.header())  # no live Page / Widget: {"stored": false}
        snap = stored.snapshot
        current = snap.current_target
        assert current is not None and snap.dom is not None
        if args.target != "current" and args.target != current.type:
            raise DebuggerError(
                "TARGET_MISMATCH",
                f"the current target is a {current.type} ({current.id}), not a {args.target}",
                {"currentTarget": current.wire()},
            )
        tree = render_tree(snap.dom, verbose=args.verbose)
        body: dict[str, Any] = {
            "stored": True,
            "available": True,
            "target": current.wire(),
            "nodeCount": tree.node_count,
            "truncated": tree.truncated,
            "snapshotUpdatedAtMs": snap.updated_at_ms,
            "snapshot": tree.text,
        }
        if tree.selected_uid is not None:
            body["selectedUid"] = tree.selected_uid
        return CallToolResult(content=[TextContent(text=tree.text)], structured_content=body)

    async def list_agent_trace_events(self, args: a.TraceArgs) -> CallToolResult:
        stored = self._stored()
        if stored is None:
            return json_result(self.store.header())
        events = [
            e
            for e in stored.snapshot.trace_events
            if (args.category is None or e.category == args.category)
            and (args.event is None or e.event == args.event)
            and (args.request_id is None or e.request_id == args.request_id)
        ]
        chunk, paging = _page(events, args)
        rows = [
            {**e.wire(), "requestId": e.request_id, "payload": e.payload}  # both always present
            for e in chunk
        ]
        return json_result({**self.store.header(), **paging, "events": rows})

    async def list_agent_tool_calls(self, args: a.ToolCallArgs) -> CallToolResult:
        stored = self._stored()
        if stored is None:
            return json_result(self.store.header())
        query = args.query.lower() if args.query else None
        calls = [
            c
            for c in stored.snapshot.tool_calls
            if (args.tool_name is None or c.tool_name == args.tool_name)
            and (args.status is None or c.status == args.status)
            and (args.request_id is None or c.request_id == args.request_id)
            and (query is None or query in (c.query or "").lower() or query in (c.message or "").lower())
        ]
        chunk, paging = _page(calls, args)
        fields = ("requestId", "toolCallId", "serverId", "appKey", "message")
        rows = []
        for c in chunk:
            row = c.model_dump(by_alias=True, mode="json", exclude={"query"})
            for key in fields:
                row.setdefault(key, None)
            rows.append(row)
        return json_result({**self.store.header(), **paging, "toolCalls": rows})

    # -- console commands ----------------------------------------------------------------------------

    async def _command(
        self,
        name: str,
        params: dict[str, Any],
        *,
        failure: ErrorCode,
        timeout: ErrorCode = "COMMAND_TIMEOUT",
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """``name`` run by the console; ``failure`` is the tool's code for whatever else goes wrong."""
        timeout_s = self.command_timeout_s if timeout_s is None else timeout_s
        try:
            async with asyncio.timeout(timeout_s + 1.0):  # a channel that forgets its own deadline
                answer = await self.channel.command(name, params, timeout_s)
        except DebuggerError:
            raise
        except TimeoutError as err:
            raise DebuggerError(timeout, f"{name} did not finish within {timeout_s:g} s") from err
        except Exception as err:
            raise DebuggerError(failure, f"{name} failed in the console: {type(err).__name__}: {err}") from err
        if not isinstance(answer, dict):
            raise DebuggerError(failure, f"{name}: the console answered {type(answer).__name__}, not an object")
        return answer

    def _check_uid(self, uid: str) -> None:
        """An uid the newest snapshot does not have is ELEMENT_NOT_FOUND without asking the browser."""
        stored = self._stored()
        if stored is not None and stored.snapshot.dom is not None and find_node(stored.snapshot.dom, uid) is None:
            raise DebuggerError("ELEMENT_NOT_FOUND", f"no element uid={uid} in the current target's snapshot")

    async def _render(self, name: str, params: dict[str, Any]) -> CallToolResult:
        command_id = f"cmd-{uuid.uuid4().hex[:12]}"
        loop = asyncio.get_running_loop()
        started = loop.time()
        seq = self.store.seq
        answer = await self._command(
            name,
            {**params, "commandId": command_id},
            failure="RENDER_FAILED",
            timeout="RENDER_TIMEOUT",
        )
        # Only a DOM snapshot posted for this command counts, never the one from before it.
        stored = self.store.command_snapshot_since(seq)
        if stored is None:
            left = max(0.0, self.command_timeout_s - (loop.time() - started))
            wanted = answer.get("commandId") if isinstance(answer.get("commandId"), str) else command_id
            try:
                stored = await self.store.wait_for_command(str(wanted), left)
            except TimeoutError as err:
                raise DebuggerError(
                    "RENDER_TIMEOUT", f"{name}: no DOM snapshot carrying command {wanted} arrived"
                ) from err
        target = stored.snapshot.current_target
        if target is None and isinstance(answer.get("target"), dict):
            target = RuntimeTargetInfo.model_validate(answer["target"])
        if target is None or stored.snapshot.dom is None:
            raise DebuggerError("RENDER_FAILED", f"{name}: the console rendered no target")
        return json_result({"rendered": True, "target": target.wire()})

    async def render_page(self, args: a.RenderPageArgs) -> CallToolResult:
        route = args.url.split("?", 1)[0]
        known = [p.path for p in self.targets.pages]
        stored = self._stored()
        if stored is not None:
            known += [p.path for p in stored.snapshot.targets.pages if p.path not in known]
        if known and route not in known and route.lstrip("/") not in {k.lstrip("/") for k in known}:
            raise DebuggerError("TARGET_NOT_FOUND", f"no page {route} among the render targets ({', '.join(known)})")
        return await self._render("render_page", args.wire())

    async def render_widget(self, args: a.RenderWidgetArgs) -> CallToolResult:
        known = [w.widget_id for w in self.targets.widgets]
        stored = self._stored()
        if stored is not None:
            known += [w.widget_id for w in stored.snapshot.targets.widgets if w.widget_id not in known]
        if args.widget_id not in known:
            raise DebuggerError(
                "TARGET_NOT_FOUND",
                f"no widget {args.widget_id} among the render targets ({', '.join(known) or 'none'})",
            )
        return await self._render("render_widget", {**args.wire(), "structuredContent": args.structured_content})

    async def submit_chat_query(self, args: a.ChatArgs) -> CallToolResult:
        answer = await self._command(
            "submit_chat_query",
            {"query": args.query, "commandId": f"cmd-{uuid.uuid4().hex[:12]}"},
            timeout_s=self.chat_timeout_s,
            failure="CHAT_SUBMIT_FAILED",
            timeout="CHAT_TIMEOUT",
        )
        request_id = answer.get("requestId")
        if not isinstance(request_id, str) or not request_id:
            raise DebuggerError("CHAT_SUBMIT_FAILED", "the console ended the turn without a requestId")
        return json_result({"submitted": True, "completed": True, "query": args.query, "requestId": request_id})

    async def set_viewport(self, args: a.ViewportArgs) -> CallToolResult:
        answer = await self._command(
            "set_viewport",
            args.wire(),
            failure="VIEWPORT_FAILED",
        )
        try:
            viewport = ViewportSize.model_validate(answer.get("viewport") or args.wire())
        except ValidationError as err:
            raise DebuggerError("VIEWPORT_FAILED", f"the console answered a bad viewport: {err}") from err
        return json_result({"updated": True, "viewport": {"width": viewport.width, "height": viewport.height}})

    async def get_computed_style(self, args: a.StyleArgs) -> CallToolResult:
        self._check_uid(args.uid)
        answer = await self._command(
            "get_computed_style",
            args.wire(),
            failure="INSPECTION_FAILED",
        )
        raw = answer.get("computedStyle")
        pairs: list[dict[str, str]]
        if isinstance(raw, dict):
            pairs = [{"name": str(k), "value": str(v)} for k, v in raw.items()]
        elif isinstance(raw, list) and all(isinstance(p, dict) and "name" in p for p in raw):
            pairs = [{"name": str(p["name"]), "value": str(p.get("value", ""))} for p in raw]
        else:
            raise DebuggerError("INSPECTION_FAILED", "the console answered no computedStyle")
        if args.properties is not None:
            wanted = set(args.properties)
            pairs = [p for p in pairs if p["name"] in wanted]
        return json_result({"uid": args.uid, "computedStyle": pairs})

    async def get_element_rect(self, args: a.UidArgs) -> CallToolResult:
        self._check_uid(args.uid)
        answer = await self._command(
            "get_element_rect",
            args.wire(),
            failure="INSPECTION_FAILED",
        )
        try:
            rect = {k: float(answer[k]) for k in ("x", "y", "width", "height")}
        except (KeyError, TypeError, ValueError) as err:
            raise DebuggerError("INSPECTION_FAILED", f"the console answered no rect ({err})") from err
        return json_result({"uid": args.uid, **rect})

    async def scroll_to(self, args: a.ScrollArgs) -> CallToolResult:
        if args.uid is not None:
            self._check_uid(args.uid)
        answer = await self._command(
            "scroll_to",
            args.wire(),
            failure="SCROLL_FAILED",
        )
        keys = ("x", "y", "maxX", "maxY", "viewportWidth", "viewportHeight")
        try:
            numbers = {k: float(answer[k]) for k in keys}
            uid = str(answer.get("uid") or args.uid)
        except (KeyError, TypeError, ValueError) as err:
            raise DebuggerError("SCROLL_FAILED", f"the console answered no scroll position ({err})") from err
        return json_result({"scrolled": True, "uid": uid, **numbers})

    def _capture_s(self) -> float:
        """Extra time for a large device frame: loading and encoding 100 megapixels (9999 x 9999) takes
        seconds on an idle two-core machine, and the ordinary 15 s must not fail it on a busy one."""
        stored = self._stored()
        target = stored.snapshot.current_target if stored is not None else None
        viewport = target.viewport if target is not None else None
        if viewport is None:
            return 0.0
        return viewport.width * viewport.height / 1e6 * CAPTURE_S_PER_MEGAPIXEL

    async def take_screenshot(self, args: a.ScreenshotArgs) -> CallToolResult:
        if args.uid is not None:
            self._check_uid(args.uid)
        answer = await self._command(
            "take_screenshot",
            args.command(),
            failure="SCREENSHOT_FAILED",
            timeout_s=self.command_timeout_s + self._capture_s(),
        )
        data = answer.get("data")
        if not isinstance(data, str) or not data:
            raise DebuggerError("SCREENSHOT_FAILED", "the console captured no image")
        if len(data) > MAX_SCREENSHOT_B64:
            raise DebuggerError(
                "SCREENSHOT_FAILED",
                f"the image is {len(data)} base64 characters, over the limit of {MAX_SCREENSHOT_B64} (8 MiB); "
                "use a smaller viewport, an element uid, or jpeg/webp with a lower quality",
            )
        try:
            base64.b64decode(data, validate=True)
            width, height = int(answer["width"]), int(answer["height"])
        except (binascii.Error, KeyError, TypeError, ValueError) as err:
            raise DebuggerError("SCREENSHOT_FAILED", f"the console answered a bad image ({err})") from err
        mime = MIME_TYPES[args.format]
        meta: dict[str, Any] = {
            "captured": True,
            "format": args.format,
            "mimeType": mime,
            "width": width,
            "height": height,
        }
        if args.uid is not None:
            meta["uid"] = args.uid
        if args.as_ref:
            # The image stays out of the agent's context until it reads the ref.
            name = f"screenshot-{args.uid or 'target'}.{args.format}"
            ref = self.artefacts.put(base64.b64decode(data), mime=mime, display_name=name)
            meta["ref"] = ref.wire()
            return CallToolResult(content=[TextContent(text=json.dumps(meta, indent=2))], structured_content=meta)
        return CallToolResult(
            content=[ImageContent(data=data, mime_type=mime), TextContent(text=json.dumps(meta, indent=2))],
            structured_content=meta,
        )
