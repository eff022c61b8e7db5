"""The device a card is rendered for, and the unit conversions that depend on it."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RPX_PER_SCREEN = 750  # 750rpx is always the full screen width


class Viewport(BaseModel):
    """Screen width and height in CSS px, color scheme, device pixel ratio.

    Frozen and hashable, so resolvers and caches can key on it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    width: int = Field(default=375, ge=1, le=10000)
    height: int = Field(default=667, ge=1, le=100000)
    color_scheme: Literal["light", "dark"] = "light"
    pixel_ratio: float = Field(default=2.0, gt=0, le=10)

    @property
    def orientation(self) -> Literal["portrait", "landscape"]:
        return "portrait" if self.height >= self.width else "landscape"

    def rpx(self, value: float) -> int:
        return rpx_to_px(value, self.width)

    # A card is as wide as the screen, and as tall as its content between the aspect ratios 4:1
    # and 1:1 of that width; its height is fixed after the first render and the rest is clipped.
    @property
    def card_min_height(self) -> int:
        return self.width // 4

    @property
    def card_max_height(self) -> int:
        return self.width


def rpx_to_px(value: float, width: float) -> int:
    """WeChat's rule, as wcsc's transformRPX computes it: floor(N / 750 * width + 0.0001) px.

    A non-zero length never vanishes: what floors to 0 becomes 1px (wcsc gives 0.5px only on
    iOS with a pixel ratio above 1, which no skillc host is). Negative lengths floor like wcsc
    does (-3rpx at 375 is -2px); the rare negative one that floors to 0 mirrors to -1px.
    """
    if value == 0:
        return 0
    px = math.floor(value / RPX_PER_SCREEN * width + 0.0001)
    if px == 0:
        return 1 if value > 0 else -1
    return px
