"""The runtime's contracts: every value that crosses a phase or leaves the runtime.

Field names are Python snake_case with the camelCase aliases of the AI-mode docs; dump with
``by_alias=True`` to get the wire form. These models are what the Component VM, the MCP server
and the debugger consume, so they change only with their docs (docs/runtime.md).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from skillc.diagnostics import Diagnostic


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        """The JSON form with the AI-mode key names."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class RiskLevel(StrEnum):
    """L0 read-only ... L4 irreversible. L2+ is audited; L3/L4 need the user's approval."""

    L0 = "L0"
    L1 = "L1"
    L2 = "L2"
    L3 = "L3"
    L4 = "L4"

    @property
    def rank(self) -> int:
        return int(self.value[1])

    @property
    def audited(self) -> bool:
        return self.rank >= 2

    @property
    def needs_approval(self) -> bool:
        return self.rank >= 3


class ContentBlock(BaseModel):
    """One block of ``content``; AI mode uses ``{type: 'text', text}``, other MCP types pass through."""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class AtomicApiResult(_Wire):
    """What an atomic API returns: ``content`` goes to the model, ``_meta`` only to the card."""

    is_error: bool = False
    content: list[ContentBlock]
    structured_content: dict[str, Any] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    handoff: Any = None
    api_calls: list[Any] | None = None

    @classmethod
    def error(cls, text: str) -> AtomicApiResult:
        return cls(is_error=True, content=[ContentBlock(type="text", text=text)])

    @property
    def text(self) -> str:
        return "\n".join(b.text for b in self.content if b.type == "text" and b.text is not None)

    def wire(self) -> dict[str, Any]:
        data = super().wire()
        data["isError"] = self.is_error  # always present, so a reader never guesses the default
        return data


# The user DID of a caller nobody signed in (``--anonymous``): L1+ APIs refuse it (RUN060),
# wx.login cannot log it in, and wx.request sends no identity for it.
ANONYMOUS_USER_DID = "did:skillc:anonymous"


class ApiCallContext(_Wire):
    """Who calls which API, for what. Storage and cards are scoped by (user_did, merchant_did,
    skill_scope): the skill id and a digest of the skill's resolved folder, so a copy of a skill
    (same name, another folder) sharing a state directory cannot read the original's storage.
    ``capability_token``: a token from an earlier ``wx.login`` the caller presents (``--token``)."""

    user_did: str
    agent_did: str
    merchant_did: str
    skill_id: str
    session_id: str
    api_name: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)
    capability_token: str | None = None
    skill_scope: str = Field(default="", description="the storage and card scope; skill_id when empty")
    # Set by the call chain only (a caller's value is dropped): the risk level the user approved
    # this call at, which the wx stand-ins (requestPayment, getLocation, ...) check theirs against.
    consent: RiskLevel | None = Field(default=None, description="the level the user approved; None: not approved")

    @property
    def scope(self) -> str:
        return self.skill_scope or self.skill_id

    @property
    def anonymous(self) -> bool:
        return self.user_did == ANONYMOUS_USER_DID


ConsoleLevel = Literal["log", "info", "warn", "error", "debug"]


class ConsoleEntry(_Wire):
    """One ``console.*`` call (or a runtime error shown as one), for the debugger."""

    level: ConsoleLevel
    text: str
    args: list[Any] = Field(default_factory=list)
    file: str | None = None
    line: int | None = None
    column: int | None = None
    timestamp: int = Field(description="milliseconds since the Unix epoch")


class CardAction(_Wire):
    """A card-facing side effect of an API call, applied by whoever shows the cards."""

    kind: Literal["expireAllCards"]
    component_paths: list[str] | None = None
    match: str | None = None


class AuditOutcome(StrEnum):
    OK = "ok"
    ERROR = "error"  # the API ran and returned isError, threw, or broke a limit
    TIMEOUT = "timeout"
    REFUSED = "refused"  # needed approval and did not get it
    INVALID = "invalid"  # arguments failed inputSchema; the API never ran


class AuditRecord(_Wire):
    """One line of the audit log: who called what, with which arguments (digest), and how it went."""

    time: str = Field(description="ISO 8601, UTC")
    user_did: str
    agent_did: str
    merchant_did: str
    skill_id: str
    session_id: str
    api_name: str
    risk: RiskLevel
    arguments_digest: str = Field(description="sha256 of the canonical JSON of the validated arguments")
    outcome: AuditOutcome
    detail: str | None = None
    duration_ms: float
    wx_api: str | None = Field(default=None, description="the wx stand-in used (wx.requestPayment); None: the call")


class ApprovalRequest(_Wire):
    """Handed to the approval callback before an L3/L4 API runs."""

    context: ApiCallContext
    risk: RiskLevel
    description: str


class Registration(_Wire):
    """An API that index.js registered, seen by executing it."""

    name: str
    skill_path: str
    file: str | None = None
    line: int | None = None
    is_function: bool = True


class LoadReport(_Wire):
    """What running index.js revealed: the registered APIs and the diagnostics about them."""

    registrations: list[Registration] = Field(default_factory=list)
    console: list[ConsoleEntry] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)


class ApiCallOutcome(_Wire):
    """Everything one call produced: the result for the agent and the evidence for the debugger."""

    api_name: str
    result: AtomicApiResult
    console: list[ConsoleEntry] = Field(default_factory=list)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    card_actions: list[CardAction] = Field(default_factory=list)
    risk: RiskLevel = RiskLevel.L0
    approved: bool | None = None
    audit: AuditRecord | None = None
    # One record per wx stand-in the call used (wx.requestPayment, wx.getLocation, ...); None when none.
    stand_in_audit: list[AuditRecord] | None = None
    duration_ms: float = 0.0
