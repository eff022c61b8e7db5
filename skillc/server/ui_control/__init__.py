"""ui_control: scoped automation of live cards for agents (RUNTIME-CONTRACTS.md, "ui_control").

The "window" is one live card: its controls are the Render IR nodes of the card's document, and
the only actions are the card's own events (a tap, bubbling to the nearest handlers; load / error
on an image that binds them). Every action goes through :meth:`CardHost.event` (the Component VM,
as a user's tap does), and the api/call blocks of a follow-up message (or a reapplyApiCall) go
through the server's own call chain, consent included. There are no coordinates anywhere.

The agent loop: ``snapshot`` (a bounded tree and a ``snapshot_id``) -> ``find`` (a control id by
query, role, label or id) -> ``act`` (with the snapshot id: a control that changed since is
``stale_control`` and gets no event) -> ``wait_for`` (polls inside the call) -> ``snapshot``.

Scope: a card belongs to one user (``owner_of``); another caller gets ``denied``. Error codes
are data (``ok: false``, ``error_code``), never a tool error; only bad arguments are ``isError``.

The parts: ``models`` (the contract), ``tree`` (Render IR -> controls, and the digests that tell
a stale control), ``scope`` (the caller's cards and snapshots), ``observe`` (snapshot, find,
wait_for), ``act``, ``control`` (:class:`UiControl`, what the server builds) and ``tools`` (the
MCP tools).
"""

from skillc.server.ui_control.act import Audit, RunFollowUp
from skillc.server.ui_control.control import UiControl
from skillc.server.ui_control.models import (
    ACT_TOOL,
    FIND_TOOL,
    MAX_DEPTH,
    MAX_LABEL,
    MAX_MATCHES,
    MAX_NODES,
    MAX_SNAPSHOT_CALLERS,
    MAX_SNAPSHOTS,
    MAX_TEXT,
    MAX_WAIT_S,
    SNAPSHOT_TOOL,
    SUPPORTED_ACTIONS,
    WAIT_TOOL,
    UiActionRequest,
    UiActionResult,
    UiControlAuditRecord,
    UiControlNode,
    UiErrorCode,
    UiFindRequest,
    UiFindResult,
    UiFollowUp,
    UiRole,
    UiSnapshot,
    UiSnapshotRequest,
    UiWaitCondition,
    UiWaitKind,
    UiWaitResult,
)
from skillc.server.ui_control.scope import SNAPSHOT_KEY, STALE_HINT, CardsOf, OwnerOf, SkillOfCard, SnapshotKey
from skillc.server.ui_control.tools import CallerOf, ui_control_tools
from skillc.server.ui_control.tree import build_tree

__all__ = [
    "ACT_TOOL",
    "FIND_TOOL",
    "MAX_DEPTH",
    "MAX_LABEL",
    "MAX_MATCHES",
    "MAX_NODES",
    "MAX_SNAPSHOTS",
    "MAX_SNAPSHOT_CALLERS",
    "MAX_TEXT",
    "MAX_WAIT_S",
    "SNAPSHOT_KEY",
    "SNAPSHOT_TOOL",
    "STALE_HINT",
    "SUPPORTED_ACTIONS",
    "WAIT_TOOL",
    "Audit",
    "CallerOf",
    "CardsOf",
    "OwnerOf",
    "RunFollowUp",
    "SkillOfCard",
    "SnapshotKey",
    "UiActionRequest",
    "UiActionResult",
    "UiControl",
    "UiControlAuditRecord",
    "UiControlNode",
    "UiErrorCode",
    "UiFindRequest",
    "UiFindResult",
    "UiFollowUp",
    "UiRole",
    "UiSnapshot",
    "UiSnapshotRequest",
    "UiWaitCondition",
    "UiWaitKind",
    "UiWaitResult",
    "build_tree",
    "ui_control_tools",
]
