"""What a client reads rather than calls: resources (the debug descriptor, each skill's files under
``skill://`` (SKILL.md listed), the ``ui://`` card views, a session's ``events://`` and its
``artefact://`` blobs), their templates, and one prompt per skill (its SKILL.md)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    BlobResourceContents,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    PaginatedRequestParams,
    Prompt,
    PromptMessage,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
)

from skillc.runtime.state import StateError
from skillc.server.artefacts import ArtefactStore, parse_uri, session_in_uri
from skillc.server.artefacts import resource_template as artefact_template
from skillc.server.catalog import Catalogue
from skillc.server.descriptor import DESCRIPTOR_URI, DebugDescriptor, descriptor_read, descriptor_resource
from skillc.server.events import EVENTS_URI_TEMPLATE, EventHub, EventUriError, parse_events_uri
from skillc.server.host_meta import view_resource_meta
from skillc.server.skill_docs import SKILL_MD_MIME, SkillDoc
from skillc.server.skill_files import SkillFile, is_text
from skillc.server.skill_server.served import ServedSkills
from skillc.server.skills_ext import SkillsExtension
from skillc.server.tools import APP_MIME_TYPE, HANDOFF_VIEW
from skillc.server.view import view_html


class SkillResources:
    """``descriptor()`` is asked at each read: `skillc debug` swaps in its live one after start-up."""

    def __init__(
        self,
        catalogue: Catalogue,
        skills: ServedSkills,
        events: EventHub,
        artefacts: ArtefactStore,
        *,
        session_of: Callable[[ServerRequestContext[Any]], str],
        verify_session: Callable[[str], bool],
        descriptor: Callable[[], DebugDescriptor],
        skill_files: SkillsExtension,
    ) -> None:
        self._catalogue = catalogue
        self._skills = skills
        self._events = events
        self._artefacts = artefacts
        self._session_of = session_of
        self._verify = verify_session  # whether a session capability is the running caller's
        self._descriptor = descriptor
        self._files = skill_files

    async def list_resources(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        resources = [
            descriptor_resource(
                "Whether a debugger is available, listening or connected for these skills, and how to attach one."
            )
        ]
        resources += [self._skill_md_resource(name, s.doc) for name, s in self._skills.by_name.items()]
        for uri, (skill, path) in self._catalogue.components.items():
            apis = [a.tool_name for a in self._catalogue.apis.values() if a.resource_uri == uri]
            card = "handoff card" if path == HANDOFF_VIEW else f"{path.split('/')[1]} card"
            resources.append(
                Resource(
                    uri=uri,
                    name=f"{skill}/{path.split('/')[1]}",
                    title=f"{skill} {card}",
                    description=f"The MCP Apps view that shows the results of {', '.join(apis) or 'its tools'} "
                    "as a card and takes taps.",
                    mime_type=APP_MIME_TYPE,
                )
            )
        return ListResourcesResult(resources=resources)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        try:
            return await self._read(ctx, str(params.uri))
        except StateError as err:
            # A read has no isError result: the fault is a JSON-RPC error that names its code
            # (SRV050/SRV051) and says to try again, never the driver's own text.
            uri = str(params.uri)
            message = f"{err.code} the state store could not be read for {uri}; try again (see /readyz)"
            raise MCPError(INTERNAL_ERROR, message, {"uri": uri, "code": err.code}) from None

    async def _read(self, _ctx: ServerRequestContext[Any], uri: str) -> ReadResourceResult:
        try:
            query = parse_events_uri(uri)
        except EventUriError as err:
            raise MCPError(INVALID_PARAMS, f"Bad events URI: {err}", {"uri": uri}) from None
        if query is not None:
            # The URI is the capability: readable iff its session verifies for this caller (a client
            # that never sends _meta still reads the URI its results named); any other id reads
            # as unknown, whether made up, another caller's, or from before the key.
            if not self._verify(query.session_id):
                raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
            page = self._events.page(query)
            text = json.dumps(page.wire(), ensure_ascii=False, separators=(",", ":"))
            return ReadResourceResult(contents=[TextResourceContents(uri=uri, mime_type="application/json", text=text)])
        if parse_uri(uri) is not None:
            # A session's artefact uri carries its session: read as that session when it verifies
            # for this caller, else as the request's own session (which sees only its refs and
            # the session-less ones).
            carried = session_in_uri(uri)
            reader = carried if carried is not None and self._verify(carried) else self._session_of(_ctx)
            blob = self._artefacts.blob_contents(uri, session_id=reader)
            if blob is None:  # unknown, expired, or another session's: all read the same
                raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
            return ReadResourceResult(contents=[blob])
        if uri == DESCRIPTOR_URI:
            return descriptor_read(self._descriptor())
        file = self._files.file(uri)
        if file is not None:
            return ReadResourceResult(contents=[_file_contents(file)])
        found = self._catalogue.components.get(uri)
        if found is None:
            raise MCPError(INVALID_PARAMS, f"Unknown resource: {uri}", {"uri": uri})
        skill, path = found
        # MCP Apps' _meta.ui and the same in OpenAI's keys (skillc/server/host_meta.py).
        meta = view_resource_meta(self._skills.by_name[skill].resource_domains, _view_description(skill, path))
        contents = TextResourceContents(uri=uri, mime_type=APP_MIME_TYPE, text=view_html(skill, path, uri), _meta=meta)
        return ReadResourceResult(contents=[contents])

    def _skill_md_resource(self, name: str, doc: SkillDoc) -> Resource:
        """SKILL.md as MCP Skills describes it: ``name`` and ``description`` from its front matter
        (when the skill is listed), its size as served."""
        file = self._files.file(doc.uri)
        front = next((e.frontmatter for e in self._files.listed if e.uri == doc.uri), None)
        return Resource(
            uri=doc.uri,
            name=front["name"] if front else f"{name}/SKILL.md",
            title=f"{doc.title}: SKILL.md",
            description=front["description"]
            if front
            else f"How and when to use the {name} tools (the skill's instructions for the model).",
            mime_type=SKILL_MD_MIME,
            size=len(file.data) if file is not None else len(doc.text.encode("utf-8")),
        )

    async def list_resource_templates(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListResourceTemplatesResult:
        events = ResourceTemplate(
            uri_template=EVENTS_URI_TEMPLATE,
            name="session-events",
            title="Session events",
            description="What ran in one session: console lines, trace (calls, consent, cards) and tool calls, "
            "paged by cursor; every tool result names its session's URI in _meta['skillc/events']. The id is "
            "the session capability (_meta['skillc/session']): only its holder's caller reads it.",
            mime_type="application/json",
        )
        return ListResourceTemplatesResult(resource_templates=[events, artefact_template()])

    async def list_prompts(
        self, _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        prompts = [
            Prompt(name=name, title=s.doc.title, description=s.doc.description)
            for name, s in self._skills.by_name.items()
        ]
        return ListPromptsResult(prompts=prompts)

    async def get_prompt(self, _ctx: ServerRequestContext[Any], params: GetPromptRequestParams) -> GetPromptResult:
        served = self._skills.by_name.get(params.name)
        if served is None:
            known = ", ".join(self._skills.by_name) or "none"
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {params.name} (prompts: {known})", {"name": params.name})
        doc = served.doc
        return GetPromptResult(
            description=doc.description,
            messages=[PromptMessage(role="user", content=TextContent(text=doc.text))],
        )


def _view_description(skill: str, path: str) -> str:
    card = "handoff card" if path == HANDOFF_VIEW else f"{path.split('/')[1]} card"
    return f"The {skill} {card}: a WeChat AI-mode card, rendered from the tool result and tappable."


def _file_contents(file: SkillFile) -> TextResourceContents | BlobResourceContents:
    """A skill file as read: text when it is UTF-8 text (byte for byte what its digest covers),
    else base64."""
    if is_text(file):
        return TextResourceContents(uri=file.uri, mime_type=file.mime_type, text=file.data.decode("utf-8"))
    return BlobResourceContents(uri=file.uri, mime_type=file.mime_type, blob=base64.b64encode(file.data).decode())
