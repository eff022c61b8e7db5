"""Runtime configuration: limits, the wx.request allow list, identity, and where state lives."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from skillc.runtime.contracts import RiskLevel

STATE_DIR_ENV = "SKILLC_STATE_DIR"
STATE_URL_ENV = "SKILLC_STATE_URL"
STATE_FILE = "state.sqlite3"
IDENTITY_KEY_FILE = "identity.key"


class PoolSettings(BaseModel):
    """A PostgreSQL process's connection pool (``serve --state-pool-min/-max/-timeout``): each
    worker of each instance holds up to ``max_size`` connections, so instances x workers x
    max_size must fit the server's max_connections (checked when `skillc serve` starts)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_size: int = Field(default=1, ge=0, le=1000, description="connections kept open")
    max_size: int = Field(default=10, ge=1, le=1000, description="connections at most")
    # Exhaustion answers at once with SRV051 instead of queueing a call behind a stuck store.
    timeout_s: float = Field(default=1.5, gt=0, le=600, description="how long a statement waits for a free connection")


def default_state_dir() -> Path:
    """``$SKILLC_STATE_DIR``, else ``$XDG_STATE_HOME/skillc``, else ``~/.local/state/skillc``."""
    explicit = os.environ.get(STATE_DIR_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "skillc"


class Identity(BaseModel):
    """The DIDs the runtime answers with when a call does not name its own."""

    model_config = ConfigDict(frozen=True)

    user_did: str = "did:example:user"
    agent_did: str = "did:example:agent"
    merchant_did: str = "did:example:merchant"


class DeviceInfo(BaseModel):
    """What ``wx.getDeviceInfo`` answers (the keys of the mini-program API)."""

    model_config = ConfigDict(frozen=True)

    brand: str = "skillc"
    model: str = "skillc runtime"
    system: str = "skillc"
    platform: str = "devtools"
    memory_size: int = Field(default=4096, alias="memorySize")
    benchmark_level: int = Field(default=1, alias="benchmarkLevel")
    abi: str = "skillc"


class AppBaseInfo(BaseModel):
    """What ``wx.getAppBaseInfo`` answers: a WeChat that supports AI mode."""

    model_config = ConfigDict(frozen=True)

    sdk_version: str = Field(default="3.16.1", alias="SDKVersion")
    version: str = "8.0.74"
    language: str = "zh_CN"
    theme: str = "light"
    enable_debug: bool = Field(default=False, alias="enableDebug")
    host: dict[str, str] = Field(default_factory=lambda: {"appId": "skillc"})


class _Profile(BaseModel):
    """The profile file's keys are WeChat's (camelCase); an unknown key is a mistake, not an extra."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class PhoneProfile(_Profile):
    """The user's phone number, as ``wx.getPhoneNumber`` answers it."""

    pure_phone_number: str = Field(pattern=r"^[0-9]{5,15}$", description="the number without its country code")
    country_code: str = Field(default="86", pattern=r"^[0-9]{1,4}$")

    @property
    def phone_number(self) -> str:
        # WeChat: "foreign numbers carry their country code"; a mainland number is the bare one.
        return self.pure_phone_number if self.country_code == "86" else f"+{self.country_code}{self.pure_phone_number}"


class AddressProfile(_Profile):
    """One delivery address, as ``wx.chooseAddress`` answers it; ``default`` marks the one it picks."""

    user_name: str = Field(min_length=1)
    tel_number: str = Field(min_length=1)
    province_name: str = Field(min_length=1)
    city_name: str = Field(min_length=1)
    county_name: str = ""
    street_name: str = ""
    detail_info: str = Field(min_length=1)
    postal_code: str = ""
    national_code: str = ""
    default: bool = False


class LocationProfile(_Profile):
    """Where the user is, in WGS-84 (``wx.getLocation`` converts to GCJ-02 when asked)."""

    latitude: float = Field(ge=-90, le=90)
    longitude: float = Field(ge=-180, le=180)
    speed: float = Field(default=0.0, ge=-1, description="m/s; -1 when unknown")
    accuracy: float = Field(default=65.0, ge=0, description="metres")
    altitude: float = 0.0
    vertical_accuracy: float = Field(default=0.0, ge=0)
    horizontal_accuracy: float = Field(default=65.0, ge=0)


class UserProfile(_Profile):
    """What the host knows about the user (``--profile FILE``): the answers of the wx stand-ins
    ``getPhoneNumber``, ``chooseAddress``, ``getLocation`` and ``getFuzzyLocation``."""

    description: str | None = None
    phone: PhoneProfile | None = None
    addresses: list[AddressProfile] = Field(default_factory=list)
    location: LocationProfile | None = None

    @property
    def address(self) -> AddressProfile | None:
        """The address ``chooseAddress`` picks: the default one, else the first."""
        return next((a for a in self.addresses if a.default), self.addresses[0] if self.addresses else None)


DeadlineMode = Literal["auto", "interrupt", "process"]


class RuntimeConfig(BaseModel):
    """Every knob of the API VM. The defaults are the AI-mode limits."""

    model_config = ConfigDict(frozen=True)

    state_dir: Path = Field(default_factory=default_state_dir)
    # Where storage, cards, audit and logins live (docs/deploy.md, "The state store"): a
    # postgresql:// URL or a SQLite file; unset, the SQLite file in state_dir.
    state_url: str | None = Field(default_factory=lambda: os.environ.get(STATE_URL_ENV) or None)
    # The PostgreSQL connection pool of each process (serve --state-pool-min/-max/-timeout).
    state_pool: PoolSettings = Field(default_factory=PoolSettings)
    timeout_s: float = Field(default=300.0, gt=0, description="shared by middleware and handler")
    memory_limit: int = Field(default=64 << 20, ge=4 << 20)
    # 2-4 MB: deep enough for real recursion, well inside a glibc thread's 8 MB stack.
    stack_size: int = Field(default=4 << 20, ge=1 << 20, le=4 << 20)
    workers: int = Field(default=2, ge=1)
    deadline_mode: DeadlineMode = "auto"
    allowed_hosts: tuple[str, ...] = ()
    request_timeout_s: float = Field(default=30.0, gt=0)
    request_max_bytes: int = Field(default=5 << 20, gt=0)
    storage_key_max_bytes: int = 1 << 20
    storage_total_max_bytes: int = 10 << 20
    max_console_entries: int = 500
    max_console_text: int = 8192
    # Cards (docs/security.md, "Limits (cards and rendering)"): what one card's data may cost.
    card_max_data_index: int = Field(default=100_000, ge=0, description="largest array index a setData path may name")
    card_max_render_nodes: int = Field(default=20_000, ge=1, description="Render IR nodes per card")
    card_max_template_expansions: int = Field(default=10_000, ge=1, description="<template is> expansions per render")
    card_max_for_number: int = Field(default=20_000, ge=0, description="largest n for wx:for over a number")
    card_max_data_bytes: int = Field(default=1 << 20, ge=1024, description="a card's data as JSON (UTF-8 bytes)")
    card_max_actions: int = Field(default=20, ge=0, description="actions (and follow-up api/calls) per event")
    # Dynamic cards (scope.dynamic, docs/runtime.md "Dynamic cards"): timers that run on their own.
    card_max_timers: int = Field(default=8, ge=0, description="live setTimeout/setInterval timers per card")
    card_timer_min_interval_ms: int = Field(
        default=1000, ge=1, description="shortest setInterval, and setTimeout inside a timer callback"
    )
    value_depth: int = Field(default=64, ge=2, le=1000, description="how deep arguments and results may nest")
    card_table_max_age_days: float = Field(default=7.0, gt=0, description="older expired, evicted rows are pruned")
    card_table_max_rows: int = Field(default=2_000, ge=1, description="card rows kept per skill")
    card_table_max_bytes: int = Field(default=16 << 20, ge=1 << 20, description="card rows kept per skill, in bytes")
    card_table_prune_every: int = Field(default=200, ge=1, description="calls between two prunings")
    risk_overrides: dict[str, RiskLevel] = Field(default_factory=dict, description="API name -> risk level")
    default_risk: RiskLevel = RiskLevel.L0
    identity: Identity = Field(default_factory=Identity)
    # wx.login's capability tokens (docs/security.md, "Identity"): their lifetime and signing key.
    login_ttl_s: float = Field(default=7200.0, gt=0, le=366 * 86400, description="how long a wx.login token is valid")
    identity_key_file: Path | None = Field(
        default=None,
        description="the HMAC key of tokens [state_dir/identity.key; on PostgreSQL, a key kept in the store]",
    )
    device: DeviceInfo = Field(default_factory=DeviceInfo)
    app: AppBaseInfo = Field(default_factory=AppBaseInfo)
    profile: UserProfile | None = Field(default=None, description="the user's phone, addresses and location")
    storage_seed: dict[str, Any] | None = Field(
        default=None, description="keys written into each caller's storage before its first call (--storage FILE)"
    )

    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE

    @property
    def identity_key_path(self) -> Path:
        return self.identity_key_file or self.state_dir / IDENTITY_KEY_FILE
