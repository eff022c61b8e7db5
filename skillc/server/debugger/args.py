"""The tools' arguments as pydantic models: the ``inputSchema`` each tool advertises is generated
from its model, and a call's arguments are validated by it (bad arguments are an ``isError`` result
naming the problem, before any command reaches the console)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 50


class Args(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    def wire(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Paged(Args):
    page_idx: int = Field(default=0, ge=0, description="Page number, from 0.")
    page_size: int = Field(
        default=DEFAULT_PAGE_SIZE, ge=1, description=f"Items per page; at most {MAX_PAGE_SIZE} (larger is capped)."
    )

    @property
    def size(self) -> int:
        return min(self.page_size, MAX_PAGE_SIZE)


class NoArgs(Args):
    pass


class ListConsoleArgs(Paged):
    target: Literal["current", "page", "widget", "app", "all"] = Field(
        default="current", description="current: by the console's mode (Page / Widget / App)."
    )
    levels: list[Literal["log", "info", "warn", "error", "debug", "eval"]] | None = Field(
        default=None, description="Only these levels (all when omitted)."
    )
    query: str | None = Field(default=None, description="Case-insensitive substring of the message text.")


class GetConsoleArgs(Args):
    msgid: str = Field(description="A msgid from list_console_messages.")


class ListTargetsArgs(Args):
    type: Literal["all", "page", "widget"] = "all"


class RenderPageArgs(Args):
    url: str = Field(description='A route with an optional query, e.g. "/pages/weather/index?city=beijing".')

    @field_validator("url")
    @classmethod
    def _route(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("url must be a route starting with '/'")
        return value


class RenderWidgetArgs(Args):
    widget_id: str = Field(description="A widgetId from list_render_targets.")
    structured_content: dict[str, Any] = Field(
        default_factory=dict, description="The card's structuredContent (default {})."
    )


class ChatArgs(Args):
    query: str = Field(min_length=1, description="The user's message.")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must not be blank")
        return value


class ViewportArgs(Args):
    width: int = Field(ge=1, le=9999)
    height: int = Field(ge=1, le=9999)


class SnapshotArgs(Args):
    target: Literal["current", "page", "widget"] = "current"
    verbose: bool = Field(default=False, description="Every collected attribute and details like focusable=false.")


class StyleArgs(Args):
    uid: str = Field(description="A uid from take_snapshot.")
    properties: list[str] | None = Field(default=None, description="CSS property names (all when omitted).")


class UidArgs(Args):
    uid: str = Field(description="A uid from take_snapshot.")


class ScrollArgs(Args):
    uid: str | None = Field(default=None, description="The container; omitted: the largest scrollable one.")
    x: float | None = Field(default=None, ge=0, description="Absolute scrollLeft; omitted keeps it.")
    y: float | None = Field(default=None, ge=0, description="Absolute scrollTop; omitted keeps it.")

    @field_validator("x", "y")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value


class ScreenshotArgs(Args):
    uid: str | None = Field(default=None, description="One element; omitted: the current target.")
    format: Literal["png", "jpeg", "webp"] = "png"
    quality: int | None = Field(default=None, ge=0, le=100, description="jpeg and webp only.")
    as_ref: bool = Field(
        default=False,
        description="Answer an artefact ref (artefact://sha256/<hex>, read with resources/read) instead of the image.",
    )

    def command(self) -> dict[str, Any]:
        """What the console is asked for (how the answer travels is the server's business)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={"as_ref"})

    @model_validator(mode="after")
    def _quality(self) -> ScreenshotArgs:
        if self.quality is not None and self.format == "png":
            raise ValueError("quality applies to jpeg and webp only")
        return self


class TraceArgs(Paged):
    category: str | None = Field(default=None, description="simulator, mcp, runtime...")
    event: str | None = None
    request_id: str | None = None


class ToolCallArgs(Paged):
    tool_name: str | None = None
    status: str | None = None
    request_id: str | None = None
    query: str | None = Field(default=None, description="Case-insensitive substring of the turn's query or message.")
