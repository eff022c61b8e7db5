"""The debug descriptor: how to reach a debugger for the served skills, printed by `skillc debug`
and served as the MCP resource :data:`DESCRIPTOR_URI` by the Debugger MCP and by the skills' MCP
(where plain `skillc serve` says a debugger is available and how to start one)."""

from __future__ import annotations

import json
import os
import platform
from typing import Literal

from mcp_types import ReadResourceResult, Resource, TextResourceContents
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from skillc import __version__

DESCRIPTOR_URI = "skillc://debugger/descriptor"
DebugState = Literal["unavailable", "available", "listening", "client_connected", "error"]


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class DebugUrls(_Wire):
    debugger_mcp: str  # http://host:port/__wsd_mcp
    skills_mcp: str  # http://host:port/mcp
    console: str  # the debug console page, with its launch token (?token=) when the server has one
    agent_trace: str  # where the console posts snapshots


class RuntimeVersions(_Wire):
    skillc: str = __version__
    python: str = Field(default_factory=platform.python_version)
    mcp: str | None = None
    quickjs: str | None = None
    chromium: str | None = None


class DebugDescriptor(_Wire):
    state: DebugState = "available"
    host: str = "127.0.0.1"
    port: int | None = None
    urls: DebugUrls | None = None
    pid: int = Field(default_factory=os.getpid)
    versions: RuntimeVersions = Field(default_factory=RuntimeVersions)
    skills: list[str] = Field(default_factory=list)  # the skill folders being debugged
    error: str | None = None  # set when state is "error"
    setup: str | None = None  # how to attach one, when none is listening yet

    def wire(self) -> dict[str, object]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")

    def with_address(self, host: str, port: int, console_path: str = "/", token: str | None = None) -> DebugDescriptor:
        """The descriptor once the server listens on ``host:port``; ``token``: the console's launch
        secret, which its URL carries (the console's routes refuse requests without it)."""
        shown = f"[{host}]" if ":" in host else host
        base = f"http://{shown}:{port}"
        query = f"?token={token}" if token else ""
        urls = DebugUrls(
            debugger_mcp=f"{base}/__wsd_mcp",
            skills_mcp=f"{base}/mcp",
            console=f"{base}{console_path}{query}",
            agent_trace=f"{base}/__agent_trace",
        )
        return self.model_copy(update={"host": host, "port": port, "urls": urls, "state": "listening"})


def runtime_versions(chromium: str | None = None) -> RuntimeVersions:
    from importlib.metadata import PackageNotFoundError, version

    def _v(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return RuntimeVersions(mcp=_v("mcp"), quickjs=_v("quickjs") or _v("quickjs-ng"), chromium=chromium)


def descriptor_resource(description: str) -> Resource:
    """The descriptor's ``resources/list`` entry (the same URI on the Debugger MCP and the skills' MCP)."""
    return Resource(
        uri=DESCRIPTOR_URI,
        name="debug-descriptor",
        title="skillc debug descriptor",
        description=description,
        mime_type="application/json",
    )


def descriptor_read(descriptor: DebugDescriptor) -> ReadResourceResult:
    text = json.dumps(descriptor.wire(), ensure_ascii=False, indent=2)
    return ReadResourceResult(
        contents=[TextResourceContents(uri=DESCRIPTOR_URI, mime_type="application/json", text=text)]
    )
