#!/usr/bin/env python3
"""Example local driver: a simulated thermostat, standard library only.

The hub starts it as `python3 -u thermostat.py` (see thermostat.driver.json) and talks to it in
newline-delimited JSON: one message per stdin line in, one per stdout line out. stdout carries
nothing but protocol messages; logs go to stderr (the hub records them).

Try it by hand:
  printf '%s\n' '{"type":"COMMAND_EXECUTE","actionId":"a1","deviceId":"thermostat-1","command":"set_mode","params":{"mode":"heat"}}' \
    | THERMOSTAT_TICK_SECONDS=1 python3 -u thermostat.py
"""

import json
import os
import random
import sys
import threading

DEVICE_ID = "thermostat-1"
MODES = ("heat", "cool", "off")
AMBIENT = 16.0  # where the room drifts when the thermostat is off
MIN_TARGET, MAX_TARGET = 5.0, 35.0


def env_number(name, default, low, high):
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return min(high, max(low, value))


NAME = os.environ.get("THERMOSTAT_NAME") or "Living Room Thermostat"
TICK_SECONDS = env_number("THERMOSTAT_TICK_SECONDS", 5.0, 1.0, 300.0)

_out_lock = threading.Lock()
_state_lock = threading.Lock()
_stopping = threading.Event()

state = {
    "current_temperature": round(env_number("THERMOSTAT_START_TEMPERATURE", 19.5, -20.0, 45.0), 1),
    "target_temperature": 21.0,
    "mode": "heat",
    "humidity": 45,
    "hvac_action": "idle",
}


def log(message):
    print(f"[thermostat] {message}", file=sys.stderr, flush=True)


def send(message):
    """Writes one protocol message as one stdout line (the only thing that goes to stdout)."""
    line = json.dumps(message, separators=(",", ":"))
    with _out_lock:
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            # The hub is gone: nothing is left to do.
            _stopping.set()


def hvac_action(s):
    if s["mode"] == "heat" and s["current_temperature"] < s["target_temperature"]:
        return "heating"
    if s["mode"] == "cool" and s["current_temperature"] > s["target_temperature"]:
        return "cooling"
    return "idle"


def report(changes):
    send({"type": "STATE_UPDATE", "deviceId": DEVICE_ID, "state": changes})


def step():
    """One simulation step: the room moves toward the target (or toward ambient when off)."""
    with _state_lock:
        current, target, mode = state["current_temperature"], state["target_temperature"], state["mode"]
        if mode == "heat" and current < target:
            current = min(target, current + 0.5)
        elif mode == "cool" and current > target:
            current = max(target, current - 0.5)
        elif current != AMBIENT:
            # Idle or off: leak slowly toward the outside.
            current = current - 0.1 if current > AMBIENT else current + 0.1
        state["current_temperature"] = round(current, 1)
        state["humidity"] = max(30, min(70, state["humidity"] + random.choice((-1, 0, 0, 1))))
        state["hvac_action"] = hvac_action(state)
        snapshot = dict(state)
    report({k: snapshot[k] for k in ("current_temperature", "humidity", "hvac_action")})
    power = {"heating": 1800, "cooling": 1200}.get(snapshot["hvac_action"], 5)
    send({
        "type": "METRIC_UPDATE",
        "deviceId": DEVICE_ID,
        "metrics": {"temperature_c": snapshot["current_temperature"], "humidity_pct": snapshot["humidity"], "power_w": power},
    })


def simulate():
    while not _stopping.wait(TICK_SECONDS):
        step()


def execute(command, params):
    """Runs one command; returns the result, or raises ValueError with the reason."""
    if command == "set_target_temperature":
        value = params.get("temperature")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError('set_target_temperature needs {"temperature": number}')
        if not MIN_TARGET <= value <= MAX_TARGET:
            raise ValueError(f"temperature must be between {MIN_TARGET:g} and {MAX_TARGET:g}")
        with _state_lock:
            state["target_temperature"] = round(float(value) * 2) / 2  # half degrees
            state["hvac_action"] = hvac_action(state)
            changes = {k: state[k] for k in ("target_temperature", "hvac_action")}
    elif command == "set_mode":
        mode = params.get("mode")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        with _state_lock:
            state["mode"] = mode
            state["hvac_action"] = hvac_action(state)
            changes = {k: state[k] for k in ("mode", "hvac_action")}
    else:
        raise ValueError(f"unknown command {command}")
    report(changes)
    with _state_lock:
        return dict(state)


def handle(message):
    kind = message.get("type")
    if kind in ("ACTION", "COMMAND_EXECUTE"):
        action_id = message.get("actionId")
        if not isinstance(action_id, str):
            return
        try:
            if message.get("deviceId") != DEVICE_ID:
                raise ValueError(f"unknown device {message.get('deviceId')}")
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            result = execute(message.get("command"), params)
            send({"type": "ACTION_RESULT", "actionId": action_id, "ok": True, "result": result})
        except Exception as err:  # every failure becomes an answer, never a crash
            send({"type": "ACTION_RESULT", "actionId": action_id, "ok": False, "error": str(err)[:2000] or "error"})
    elif kind == "PING":
        send({"type": "PONG", "id": str(message.get("id", ""))})
    elif kind == "DRIVER_MESSAGE":
        log(f"message from the hub: {json.dumps(message.get('payload'))}")
    elif kind == "DRIVER_STATUS":
        log(f"hub status: {message.get('status')} {message.get('message', '')}")
    else:
        log(f"ignored a message of type {kind!r}")


def main():
    # A local process is registered by the hub when it starts: it never sends driver.register.
    with _state_lock:
        state["hvac_action"] = hvac_action(state)
        snapshot = dict(state)
    send({
        "type": "DEVICE_DISCOVERED",
        "device": {
            "id": DEVICE_ID,
            "name": NAME,
            "deviceClass": "climate",
            "attributes": {"minTemperature": MIN_TARGET, "maxTemperature": MAX_TARGET, "temperatureUnit": "°C",
                           "hvacModes": list(MODES)},
            "category": "thermostat",
            "commands": [
                {"name": "set_target_temperature", "label": "Set target temperature",
                 "params": {"temperature": {"type": "number", "minimum": MIN_TARGET, "maximum": MAX_TARGET}}},
                {"name": "set_mode", "label": "Set mode", "params": {"mode": {"type": "string", "enum": list(MODES)}}},
            ],
            "properties": {"unit": "celsius", "modes": list(MODES)},
            "state": snapshot,
        },
    })
    log(f"{NAME} ready (step {TICK_SECONDS:g} s)")
    threading.Thread(target=simulate, daemon=True).start()

    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            log(f"ignored a line that is not JSON: {line[:200]}")
            continue
        if isinstance(message, dict):
            handle(message)
        if _stopping.is_set():
            break
    # End of stdin: the hub closed the link (or is gone).
    _stopping.set()
    log("stdin closed; exiting")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
