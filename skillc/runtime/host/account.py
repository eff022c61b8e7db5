"""``wx.getAccountInfoSync``: which mini program the skill belongs to.

WeChat answers with the app id of the mini program the skill's subpackage is in. skillc reads it
from the project the skill sits in (``appid`` of project.config.json, as WeChat DevTools does);
a skill folder outside any project answers with a placeholder of the same shape, so code that
slices or compares app ids still runs. skillc runs a development copy, never a released one:
``envVersion`` is ``develop`` and ``version`` (set by WeChat for a release only) is empty.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# "wx" and 16 hexadecimal digits, the form of a real app id; no real mini program has it.
PLACEHOLDER_APP_ID = "wx0000000000000000"


class MiniProgramAccount(BaseModel):
    appId: str
    envVersion: Literal["develop", "trial", "release"] = "develop"
    version: str = ""


class AccountInfo(BaseModel):
    """What ``wx.getAccountInfoSync()`` returns; ``plugin`` is empty: a skill is not a plugin."""

    miniProgram: MiniProgramAccount
    plugin: dict[str, str] = Field(default_factory=dict)


def account_info(app_id: str | None) -> AccountInfo:
    return AccountInfo(miniProgram=MiniProgramAccount(appId=app_id or PLACEHOLDER_APP_ID))
