"""The telecom user's tools (dual control): what only the customer can do on their own phone."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from agentgym.envs.usersim.domain import (
    DB,
    Tool,
    ToolError,
)
from agentgym.envs.usersim.domains.telecom.data_model import (
    _line_of,
    _mobile_data_works,
    _speed_mbps,
)


def _my_phone(db: DB, context: Mapping[str, Any]) -> dict[str, Any]:
    """The user's own phone: the device of the scenario's ``context["phone_number"]``."""
    device: dict[str, Any] = db["devices"][context["phone_number"]]
    return device


def _status_bar(db: DB, phone: str) -> dict[str, Any]:
    device, line = db["devices"][phone], _line_of(db, phone)
    if device["airplane_mode"]:
        signal = "none, airplane mode icon shown"
    elif device["sim_status"] == "missing":
        signal = "No SIM"
    elif device["sim_status"] == "locked_pin":
        signal = "SIM locked, PIN required"
    elif device["registration"] != "ok":
        signal = "No service"
    elif line["status"] != "active" or (device["abroad"] and not line["roaming_enabled"]):
        signal = "Emergency calls only"
    else:
        signal = "4 bars" + (f", roaming in {device['country']}" if device["abroad"] else "")
    if _mobile_data_works(db, phone):
        data = {"5g": "5G", "4g": "4G", "3g_only": "3G"}[device["network_mode"]] + " icon"
    else:
        data = "no mobile data icon"
    icons = [n for n in ("data_saver", "wifi_calling") if device[n]]
    return {"signal": signal, "mobile_data": data, "other_icons": icons}


def check_status_bar(db: DB, context: Mapping[str, Any]) -> dict[str, Any]:
    return _status_bar(db, _my_phone(db, context)["phone_number"])


def check_network_settings(db: DB, context: Mapping[str, Any]) -> dict[str, Any]:
    device = _my_phone(db, context)
    return {
        "airplane_mode": device["airplane_mode"],
        "mobile_data": device["mobile_data"],
        "data_roaming": device["data_roaming"],
        "preferred_network_mode": device["network_mode"],
        "data_saver": device["data_saver"],
        "apn": "default" if device["apn"] == "correct" else "custom (edited)",
        "sim_card": {"active": "detected", "missing": "not detected", "locked_pin": "locked"}[
            device["sim_status"]
        ],
    }


def run_speed_test(db: DB, context: Mapping[str, Any]) -> dict[str, Any]:
    speed = _speed_mbps(db, _my_phone(db, context)["phone_number"])
    if speed == 0.0:
        return {"result": "no connection"}
    return {"download_mbps": speed, "rating": "fast" if speed >= 10.0 else "very slow"}


def _set_setting(db: DB, context: Mapping[str, Any], on: bool, setting: str) -> str:
    _my_phone(db, context)[setting] = bool(on)
    return f"{setting.replace('_', ' ')} is now {'on' if on else 'off'}"


def reset_apn_settings(db: DB, context: Mapping[str, Any]) -> str:
    _my_phone(db, context)["apn"] = "correct"
    return "APN settings restored to the defaults"


def reseat_sim(db: DB, context: Mapping[str, Any]) -> str:
    device = _my_phone(db, context)
    if device["sim_status"] == "missing":
        device["sim_status"] = "active"
    return f"SIM card taken out and put back; SIM status: {device['sim_status']}"


def set_network_mode(db: DB, context: Mapping[str, Any], mode: str) -> str:
    if mode not in ("5g", "4g", "3g_only"):
        raise ToolError(f"network mode {mode!r} does not exist: choose 5g, 4g or 3g_only")
    _my_phone(db, context)["network_mode"] = mode
    return f"preferred network mode is now {mode}"


def reboot_device(db: DB, context: Mapping[str, Any]) -> str:
    _my_phone(db, context)["registration"] = "ok"
    return "the phone restarted"


_ON = {"on": {"type": "boolean", "description": "true to turn it on, false to turn it off"}}


def _setter(name: str, field: str, on: bool) -> Tool:
    """A switch of the phone's settings, triggered by "turn on"/"turn off" and its words."""
    words = field.replace("_", " ")
    verbs = ("turn on", "switch on", "enable") if on else ("turn off", "switch off", "disable")
    return Tool(
        name,
        f"Turn {words} on or off on your phone.",
        _ON,
        functools.partial(_set_setting, setting=field),
        writes=True,
        triggers=tuple((verb, words) for verb in verbs),
        trigger_arguments={"on": on},
    )


USER_TOOLS: tuple[Tool, ...] = (
    Tool(
        "check_status_bar",
        "Look at your phone's status bar: signal, mobile data icon, other icons.",
        {},
        check_status_bar,
        triggers=(("check", "status bar"),),
    ),
    Tool(
        "check_network_settings",
        "Open your phone's mobile network settings and read them.",
        {},
        check_network_settings,
        triggers=(("check", "network settings"),),
    ),
    Tool(
        "run_speed_test",
        "Run a speed test of your phone's mobile data.",
        {},
        run_speed_test,
        triggers=(("speed test",),),
    ),
    _setter("set_airplane_mode", "airplane_mode", False),
    _setter("set_mobile_data", "mobile_data", True),
    _setter("set_data_roaming", "data_roaming", True),
    _setter("set_data_saver", "data_saver", False),
    Tool(
        "reset_apn_settings",
        "Reset your phone's APN (data connection) settings to the defaults.",
        {},
        reset_apn_settings,
        writes=True,
        triggers=(("reset", "apn"),),
    ),
    Tool(
        "reseat_sim",
        "Take the SIM card out of your phone and put it back in.",
        {},
        reseat_sim,
        writes=True,
        triggers=(("reseat", "sim"), ("take out", "sim", "put it back")),
    ),
    Tool(
        "set_network_mode",
        "Set your phone's preferred network mode: 5g, 4g or 3g_only.",
        {"mode": {"type": "string", "description": "5g, 4g or 3g_only"}},
        set_network_mode,
        writes=True,
        triggers=(("network mode", "5g"),),
        trigger_arguments={"mode": "5g"},
    ),
    Tool(
        "reboot_device",
        "Restart your phone.",
        {},
        reboot_device,
        writes=True,
        triggers=(("restart", "phone"), ("reboot", "phone")),
    ),
)
