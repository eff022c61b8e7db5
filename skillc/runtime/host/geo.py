"""WGS-84 to GCJ-02, the coordinates ``wx.getLocation({type: 'gcj02'})`` answers in.

Maps of mainland China use GCJ-02, an obfuscated offset of WGS-84 that is public only as this
approximation (the one every open implementation uses; accurate to a few metres). Outside the
mainland both systems are the same, so the coordinates pass through unchanged.
"""

from __future__ import annotations

import math

_A = 6378245.0  # the Krasovsky 1940 ellipsoid GCJ-02 is defined on
_EE = 0.00669342162296594323


def _outside_mainland(lat: float, lon: float) -> bool:
    return not (72.004 <= lon <= 137.8347 and 0.8293 <= lat <= 55.8271)


def _lat_offset(x: float, y: float) -> float:
    pi = math.pi
    ret = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * math.sqrt(abs(x))
    ret += (20.0 * math.sin(6.0 * x * pi) + 20.0 * math.sin(2.0 * x * pi)) * 2.0 / 3.0
    ret += (20.0 * math.sin(y * pi) + 40.0 * math.sin(y / 3.0 * pi)) * 2.0 / 3.0
    ret += (160.0 * math.sin(y / 12.0 * pi) + 320.0 * math.sin(y * pi / 30.0)) * 2.0 / 3.0
    return ret


def _lon_offset(x: float, y: float) -> float:
    pi = math.pi
    ret = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * math.sqrt(abs(x))
    ret += (20.0 * math.sin(6.0 * x * pi) + 20.0 * math.sin(2.0 * x * pi)) * 2.0 / 3.0
    ret += (20.0 * math.sin(x * pi) + 40.0 * math.sin(x / 3.0 * pi)) * 2.0 / 3.0
    ret += (150.0 * math.sin(x / 12.0 * pi) + 300.0 * math.sin(x / 30.0 * pi)) * 2.0 / 3.0
    return ret


def wgs84_to_gcj02(lat: float, lon: float) -> tuple[float, float]:
    """(latitude, longitude) in GCJ-02."""
    if _outside_mainland(lat, lon):
        return lat, lon
    d_lat = _lat_offset(lon - 105.0, lat - 35.0)
    d_lon = _lon_offset(lon - 105.0, lat - 35.0)
    rad = lat / 180.0 * math.pi
    magic = 1 - _EE * math.sin(rad) ** 2
    root = math.sqrt(magic)
    d_lat = (d_lat * 180.0) / ((_A * (1 - _EE)) / (magic * root) * math.pi)
    d_lon = (d_lon * 180.0) / (_A / root * math.cos(rad) * math.pi)
    return lat + d_lat, lon + d_lon
