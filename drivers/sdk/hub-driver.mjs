// Home Control Service driver SDK: one small module, no dependencies for stdio drivers.
//
// A driver talks to the hub either as a local process (newline-delimited JSON on stdin/stdout,
// launched by the hub from a `*.driver.json` manifest) or as an external program over the driver
// WebSocket (`ws://hub:port/driver`). The messages are the same on both; this module hides the
// difference. See docs/drivers.md for the protocol and drivers/sdk/README.md for a quick start.

import os from 'node:os';
import process from 'node:process';
import readline from 'node:readline';

/** The protocol version this SDK speaks (the `protocolVersion` of `driver.register`). */
export const PROTOCOL_VERSION = 1;
/** The hub refuses messages larger than this (WebSocket close 1009; a stdout line is discarded). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** The hub's limit on `ACTION_RESULT.error`. */
const MAX_ERROR_LENGTH = 2000;
const MAX_ID_LENGTH = 200;

const WS_OPEN = 1;

/**
 * @typedef {'debug' | 'info' | 'warn' | 'error'} LogLevel
 * @typedef {(level: LogLevel, message: string, extra?: unknown) => void} LogFunction
 * @typedef {{ debug?: (...args: unknown[]) => void, info?: (...args: unknown[]) => void, warn?: (...args: unknown[]) => void, error?: (...args: unknown[]) => void }} LoggerObject
 *
 * @typedef {object} Device
 * @property {string} id The driver's own id of the device (1–200 characters), stable across restarts.
 * @property {string} name
 * @property {string} [category]
 * @property {Array<string | { name: string, label?: string, params?: object }>} [commands]
 * @property {Record<string, unknown>} [properties]
 * @property {string[]} [capabilities]
 * @property {Record<string, unknown>} [state]
 *
 * @typedef {object} ActionRequest
 * @property {'ACTION' | 'COMMAND_EXECUTE'} type
 * @property {string} actionId
 * @property {string} deviceId
 * @property {string} command
 * @property {Record<string, unknown>} params
 */

/** Writes `[driverKey] level message` to stderr (stdout belongs to the protocol). */
function defaultLogger(driverKey) {
  const debug = Boolean(process.env.HUB_DRIVER_DEBUG);
  return (level, message, extra) => {
    if (level === 'debug' && !debug) return;
    const tail = extra === undefined ? '' : ` ${extra instanceof Error ? extra.stack ?? extra.message : safeStringify(extra)}`;
    process.stderr.write(`[${driverKey}] ${level}: ${message}${tail}\n`);
  };
}

/** @returns {LogFunction} */
function toLogFunction(log, driverKey) {
  if (log === false) return () => {};
  if (typeof log === 'function') return log;
  if (log && typeof log === 'object') {
    return (level, message, extra) => {
      const fn = log[level] ?? log.info;
      if (typeof fn !== 'function') return;
      if (extra === undefined) fn.call(log, message);
      else fn.call(log, message, extra);
    };
  }
  return defaultLogger(driverKey);
}

function safeStringify(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function checkId(what, id) {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw new TypeError(`${what} must be a string of 1 to ${MAX_ID_LENGTH} characters`);
  }
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function errorText(err) {
  const text = err instanceof Error ? err.message || err.name : typeof err === 'string' ? err : safeStringify(err);
  return (text || 'driver error').slice(0, MAX_ERROR_LENGTH);
}

/** Copies a device description, state included, so later edits by the caller don't leak in. */
function copyDevice(device) {
  const copy = { ...device };
  if (isObject(device.state)) copy.state = { ...device.state };
  return copy;
}

/**
 * Creates a driver.
 *
 * @param {object} options
 * @param {string} [options.driverKey] The driver type (`^[A-Za-z0-9_.:-]{1,100}$`). Default: the
 *   environment variable HCS_DRIVER_KEY, which the hub sets for local processes (a local process is
 *   registered under its manifest's driverKey whatever it says; the SDK only uses it in logs).
 * @param {string} [options.instanceId] This instance (WebSocket only). Default `<driverKey>@<hostname>`:
 *   stable, so a restarted driver replaces its old connection instead of running beside it.
 * @param {'stdio' | { url: string }} [options.transport] Default `'stdio'`.
 * @param {string} [options.name] Display name sent with the registration (WebSocket).
 * @param {string} [options.version] Version sent with the registration (WebSocket).
 * @param {string} [options.token] Driver token sent with the registration (WebSocket), for a hub
 *   with DRIVER_AUTH=token: the token an admin issued for this driverKey.
 * @param {false | LogFunction | LoggerObject} [options.log] Where SDK logs go. Default: stderr
 *   (debug lines only when the environment variable HUB_DRIVER_DEBUG is set); `false` silences.
 * @param {false | { initialDelayMs?: number, maxDelayMs?: number }} [options.reconnect] WebSocket
 *   reconnection with capped exponential backoff (default 500 ms doubling up to 30 s); `false` disables.
 * @param {number} [options.maxQueue] Messages held while the WebSocket is down (default 1000; the
 *   oldest are dropped first).
 * @param {number} [options.heartbeatTimeoutMs] WebSocket with the `ws` package only: reconnect when
 *   nothing (not even a ping) came from the hub for this long. 0 (default) disables. Set it above
 *   twice the hub's DRIVER_PING_INTERVAL_MS.
 * @param {boolean} [options.redirectConsole] stdio only: send console.log/info/debug to stderr so
 *   a stray log line cannot corrupt the protocol. Default true.
 * @param {boolean} [options.exitOnStdinEnd] stdio only: exit (after pending actions answer) when
 *   the hub closes stdin. Default true.
 */
export function createDriver(options = {}) {
  if (!isObject(options)) throw new TypeError('createDriver(options): options must be an object');
  // A local process gets its driverKey from the hub in HCS_DRIVER_KEY.
  const driverKey = options.driverKey ?? process.env.HCS_DRIVER_KEY;
  if (typeof driverKey !== 'string' || !/^[A-Za-z0-9_.:-]{1,100}$/.test(driverKey)) {
    throw new TypeError('driverKey must be 1 to 100 letters, digits, or _ . : -');
  }
  const transport = options.transport ?? 'stdio';
  const isStdio = transport === 'stdio';
  if (!isStdio && !(isObject(transport) && typeof transport.url === 'string')) {
    throw new TypeError("transport must be 'stdio' or { url: 'ws://host:port/driver' }");
  }
  const instanceId = options.instanceId ?? `${driverKey}@${os.hostname() || 'localhost'}`;
  checkId('instanceId', instanceId);
  if (!isStdio && instanceId.startsWith('local:')) {
    throw new TypeError('instanceId must not start with "local:": the hub reserves it for local driver processes');
  }
  const log = toLogFunction(options.log, driverKey);
  const reconnect = options.reconnect === false ? null : { initialDelayMs: 500, maxDelayMs: 30_000, ...(options.reconnect ?? {}) };
  const maxQueue = options.maxQueue ?? 1000;
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 0;

  /** Devices this driver announced, with their latest state: re-announced after a reconnect. */
  const known = new Map();
  /** Removals made while disconnected, sent after the next registration. */
  const pendingRemovals = new Set();
  /** Other messages made while disconnected. */
  const queue = [];

  /** @type {((request: ActionRequest) => unknown) | undefined} */
  let actionHandler;
  const messageHandlers = new Set();
  const statusHandlers = new Set();
  const closeHandlers = new Set();
  const inflightActions = new Set();

  let started = false;
  let closed = false;
  // WebSocket state
  let socket;
  let registered = false;
  let attempt = 0;
  let reconnectTimer;
  let heartbeatTimer;
  let lastHeard = 0;
  let WebSocketImpl;
  let startWaiter;
  let droppedWhileDown = 0;
  // stdio state
  let lines;

  // ---------------------------------------------------------------- outgoing

  /** Serializes and writes one message now; returns false when it could not be written. */
  function write(message) {
    let text;
    try {
      text = JSON.stringify(message);
    } catch (err) {
      log('error', `message ${message.type} is not serializable; dropped`, err);
      return false;
    }
    if (Buffer.byteLength(text) > MAX_MESSAGE_BYTES) {
      log('error', `message ${message.type} is larger than ${MAX_MESSAGE_BYTES} bytes; dropped`);
      return false;
    }
    if (isStdio) {
      if (closed) return false;
      try {
        process.stdout.write(`${text}\n`);
        return true;
      } catch (err) {
        log('error', 'writing to stdout failed', err);
        return false;
      }
    }
    if (!socket || socket.readyState !== WS_OPEN || !registered) return false;
    try {
      socket.send(text);
      return true;
    } catch (err) {
      log('warn', 'WebSocket send failed', err);
      return false;
    }
  }

  function enqueue(message) {
    if (queue.length >= maxQueue) {
      queue.shift();
      if (droppedWhileDown++ === 0) log('warn', `send queue full (${maxQueue}); dropping the oldest messages until the hub is back`);
    }
    queue.push(message);
  }

  /**
   * Device lifecycle and state go into `known` as well as out: while the WebSocket is down they are
   * not queued one by one, the reconnect re-announces each device with its latest state instead.
   */
  function sendDeviceMessage(message) {
    if (isStdio || (registered && socket?.readyState === WS_OPEN)) write(message);
  }

  function sendOther(message) {
    if (isStdio || (registered && socket?.readyState === WS_OPEN)) {
      write(message);
      return;
    }
    if (!closed) enqueue(message);
  }

  // ---------------------------------------------------------------- incoming

  function handle(message) {
    if (!isObject(message) || typeof message.type !== 'string') {
      log('warn', 'ignored a message without a type', message);
      return;
    }
    switch (message.type) {
      case 'ACTION':
      case 'COMMAND_EXECUTE':
        runAction(message);
        return;
      case 'PING':
        write(message.id === undefined ? { type: 'PONG' } : { type: 'PONG', id: String(message.id) });
        return;
      case 'DRIVER_MESSAGE':
        for (const handler of messageHandlers) {
          try {
            const out = handler(message.payload, message);
            if (out && typeof out.then === 'function') out.then(undefined, (err) => log('error', 'DRIVER_MESSAGE handler failed', err));
          } catch (err) {
            log('error', 'DRIVER_MESSAGE handler failed', err);
          }
        }
        return;
      case 'DRIVER_STATUS':
        onDriverStatus(message);
        return;
      default:
        log('debug', `ignored a message of unknown type ${message.type}`);
    }
  }

  function runAction(message) {
    const { actionId, deviceId, command, type } = message;
    if (typeof actionId !== 'string') {
      log('warn', `${type} without an actionId; ignored`);
      return;
    }
    const params = isObject(message.params) ? message.params : {};
    const finish = (result) => {
      let reply = result.ok
        ? { type: 'ACTION_RESULT', actionId, ok: true, ...(result.value === undefined ? {} : { result: result.value }) }
        : { type: 'ACTION_RESULT', actionId, ok: false, error: result.error };
      if (reply.ok) {
        let problem;
        try {
          if (Buffer.byteLength(JSON.stringify(reply)) > MAX_MESSAGE_BYTES) problem = `result of ${command} is larger than ${MAX_MESSAGE_BYTES} bytes`;
        } catch (err) {
          problem = `result of ${command} is not JSON-serializable: ${errorText(err)}`;
        }
        if (problem) {
          log('error', problem);
          reply = { type: 'ACTION_RESULT', actionId, ok: false, error: problem.slice(0, MAX_ERROR_LENGTH) };
        }
      }
      // An answer can only reach the connection that asked: after a reconnect the hub has
      // already failed the action (DRIVER_DISCONNECTED), so a stale answer is not queued.
      if (!write(reply)) log('debug', `ACTION_RESULT for ${actionId} not delivered (disconnected)`);
    };

    if (!actionHandler) {
      finish({ ok: false, error: `driver ${driverKey} has no action handler` });
      return;
    }
    let outcome;
    try {
      outcome = actionHandler({ type, actionId, deviceId, command, params });
    } catch (err) {
      log('debug', `${command} on ${deviceId} failed: ${errorText(err)}`);
      finish({ ok: false, error: errorText(err) });
      return;
    }
    if (outcome && typeof outcome.then === 'function') {
      const tracked = Promise.resolve(outcome).then(
        (value) => finish({ ok: true, value }),
        (err) => {
          log('debug', `${command} on ${deviceId} failed: ${errorText(err)}`);
          finish({ ok: false, error: errorText(err) });
        },
      );
      inflightActions.add(tracked);
      tracked.finally(() => inflightActions.delete(tracked));
    } else {
      finish({ ok: true, value: outcome });
    }
  }

  function onDriverStatus(message) {
    for (const handler of statusHandlers) {
      try {
        handler(message);
      } catch (err) {
        log('error', 'DRIVER_STATUS handler failed', err);
      }
    }
    if (message.status === 'registered') {
      if (isStdio) return;
      registered = true;
      attempt = 0;
      log('info', message.message ?? 'registered');
      announce();
      if (startWaiter) {
        startWaiter.resolve();
        startWaiter = undefined;
      }
    } else if (message.status === 'error') {
      log(registered ? 'warn' : 'error', `hub reports ${message.code ?? 'an error'}: ${message.message ?? ''}`);
    } else if (message.status === 'replaced') {
      log('warn', `replaced: ${message.message ?? 'another connection registered with this instanceId'}`);
    }
  }

  /** After a (re)registration: removals, then every known device with its state, then the queue. */
  function announce() {
    for (const deviceId of pendingRemovals) write({ type: 'DEVICE_REMOVED', deviceId });
    pendingRemovals.clear();
    for (const device of known.values()) write({ type: 'DEVICE_DISCOVERED', device: copyDevice(device) });
    const backlog = queue.splice(0);
    for (const message of backlog) write(message);
    if (droppedWhileDown > 0) {
      log('warn', `${droppedWhileDown} queued messages were dropped while disconnected`);
      droppedWhileDown = 0;
    }
  }

  // ---------------------------------------------------------------- stdio

  function startStdio() {
    if (options.redirectConsole !== false) {
      // stdout carries the protocol; a console.log must not end up on it.
      const toStderr = (...args) => console.error(...args);
      console.log = toStderr;
      console.info = toStderr;
      console.debug = toStderr;
    }
    process.stdout.on('error', (err) => {
      // EPIPE: the hub is gone. Nothing useful is left to do.
      log('error', 'stdout failed; exiting', err);
      process.exit(1);
    });
    lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
    lines.on('line', (line) => {
      const text = line.trim();
      if (!text) return;
      let message;
      try {
        message = JSON.parse(text);
      } catch {
        log('warn', `ignored a stdin line that is not JSON: ${text.slice(0, 200)}`);
        return;
      }
      handle(message);
    });
    lines.on('close', () => {
      if (closed) return;
      log('info', 'stdin closed by the hub');
      if (options.exitOnStdinEnd === false) return;
      // Answer what is still running, then leave.
      Promise.allSettled([...inflightActions]).then(() => {
        closed = true;
        notifyClose(undefined);
        // Let the last answers leave before exiting.
        process.stdout.write('', () => process.exit(0));
      });
    });
  }

  // ---------------------------------------------------------------- WebSocket

  async function loadWebSocket() {
    if (typeof globalThis.WebSocket === 'function') return globalThis.WebSocket;
    try {
      const mod = await import('ws');
      return mod.WebSocket ?? mod.default;
    } catch (err) {
      throw new Error(`no WebSocket implementation: run on Node 22+ or install the "ws" package (${errorText(err)})`);
    }
  }

  function connect() {
    if (closed) return;
    reconnectTimer = undefined;
    registered = false;
    let ws;
    try {
      ws = new WebSocketImpl(transport.url);
    } catch (err) {
      // A malformed URL never gets better.
      fail(new Error(`cannot connect to ${transport.url}: ${errorText(err)}`));
      return;
    }
    socket = ws;
    let refused = false;
    ws.onopen = () => {
      log('debug', `connected to ${transport.url}`);
      lastHeard = Date.now();
      const registration = { method: 'driver.register', driverKey, instanceId, protocolVersion: PROTOCOL_VERSION };
      if (options.name !== undefined) registration.name = options.name;
      if (options.version !== undefined) registration.version = options.version;
      if (options.token !== undefined) registration.token = options.token;
      ws.send(JSON.stringify(registration));
    };
    ws.onmessage = (event) => {
      lastHeard = Date.now();
      const data = event.data;
      if (typeof data !== 'string' && !(data instanceof Buffer)) {
        log('warn', 'ignored a binary message');
        return;
      }
      let message;
      try {
        message = JSON.parse(String(data));
      } catch {
        log('warn', 'ignored a message that is not JSON');
        return;
      }
      if (!registered && message?.type === 'DRIVER_STATUS' && message.status === 'error') refused = true;
      handle(message);
    };
    ws.onerror = (event) => {
      log('debug', `WebSocket error: ${event?.message ?? event?.error?.message ?? 'connection failed'}`);
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = undefined;
      const wasRegistered = registered;
      registered = false;
      stopHeartbeat();
      if (closed) return;
      const code = event?.code;
      const reason = event?.reason ? ` ${event.reason}` : '';
      if (code === 4001) {
        // Another connection took over this instanceId: reconnecting would only steal it back.
        fail(new Error(`replaced by another connection with instanceId ${instanceId}; not reconnecting`));
        return;
      }
      if (code === 1008 && refused) {
        // The hub refused the registration itself (bad driverKey, unsupported protocol version, no or a wrong driver token).
        fail(new Error(`registration refused (${code}${reason}); not reconnecting`));
        return;
      }
      log(wasRegistered ? 'warn' : 'debug', `disconnected (${code ?? 'no code'}${reason})`);
      scheduleReconnect();
    };
    startHeartbeat(ws);
  }

  function scheduleReconnect() {
    if (closed) return;
    if (!reconnect) {
      fail(new Error('disconnected and reconnect is disabled'));
      return;
    }
    const base = Math.min(reconnect.maxDelayMs, reconnect.initialDelayMs * 2 ** attempt);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    // The first retries are worth a line; a hub that stays away should not flood the log.
    log(attempt < 2 || attempt % 10 === 0 ? 'info' : 'debug', `reconnecting in ${delay} ms`);
    attempt = Math.min(attempt + 1, 30);
    reconnectTimer = setTimeout(connect, delay);
  }

  function startHeartbeat(ws) {
    stopHeartbeat();
    if (!heartbeatTimeoutMs || typeof ws.on !== 'function') return;
    ws.on('ping', () => {
      lastHeard = Date.now();
    });
    heartbeatTimer = setInterval(() => {
      if (socket !== ws || Date.now() - lastHeard < heartbeatTimeoutMs) return;
      log('warn', `nothing heard from the hub for ${heartbeatTimeoutMs} ms; reconnecting`);
      if (typeof ws.terminate === 'function') ws.terminate();
      else ws.close();
    }, Math.max(1000, Math.floor(heartbeatTimeoutMs / 4)));
  }

  function stopHeartbeat() {
    if (heartbeatTimer) clearInterval(heartbeatTimer);
    heartbeatTimer = undefined;
  }

  /** A fatal problem: no more reconnects; start() rejects if it is still waiting. */
  function fail(err) {
    // Logged here only when nobody else will hear of it (start() rejects, or onClose handlers).
    if (!startWaiter && closeHandlers.size === 0) log('error', err.message);
    closed = true;
    if (reconnectTimer) clearTimeout(reconnectTimer);
    stopHeartbeat();
    if (startWaiter) {
      // start() rejects: the caller learns it there.
      startWaiter.reject(err);
      startWaiter = undefined;
      return;
    }
    notifyClose(err);
  }

  function notifyClose(err) {
    for (const handler of closeHandlers) {
      try {
        handler(err);
      } catch (e) {
        log('error', 'close handler failed', e);
      }
    }
    closeHandlers.clear();
  }

  // ---------------------------------------------------------------- public API

  const driver = {
    driverKey,
    instanceId,
    transport: isStdio ? 'stdio' : 'websocket',

    /** Logs to the SDK's logger (stderr by default): use it instead of console.log in stdio drivers. */
    log: {
      debug: (message, extra) => log('debug', message, extra),
      info: (message, extra) => log('info', message, extra),
      warn: (message, extra) => log('warn', message, extra),
      error: (message, extra) => log('error', message, extra),
    },

    /** True while messages reach the hub (stdio: always after start; WebSocket: while registered). */
    get connected() {
      return isStdio ? started && !closed : registered && socket?.readyState === WS_OPEN;
    },

    /**
     * Connects. stdio: starts reading stdin and resolves at once (the hub registered the process
     * when it launched it). WebSocket: connects, registers and resolves on DRIVER_STATUS
     * `registered`; while the hub is unreachable it keeps retrying. Rejects when the hub refuses
     * the registration, or the driver is closed first.
     * @returns {Promise<void>}
     */
    async start() {
      if (closed) throw new Error('driver is closed');
      if (started) return startWaiter ? startWaiter.promise : undefined;
      started = true;
      if (isStdio) {
        startStdio();
        return;
      }
      WebSocketImpl = await loadWebSocket();
      let resolve;
      let reject;
      const promise = new Promise((res, rej) => {
        resolve = res;
        reject = rej;
      });
      startWaiter = { promise, resolve, reject };
      connect();
      return promise;
    },

    /** Announces a device, or re-announces it with changes (DEVICE_DISCOVERED; the hub upserts by id). */
    discover(device) {
      if (!isObject(device)) throw new TypeError('discover(device): device must be an object');
      checkId('device.id', device.id);
      if (typeof device.name !== 'string' || device.name.length === 0 || device.name.length > 200) {
        throw new TypeError('device.name must be a string of 1 to 200 characters');
      }
      const previous = known.get(device.id);
      const copy = copyDevice(device);
      if (previous?.state && !isObject(device.state)) copy.state = previous.state;
      known.set(device.id, copy);
      pendingRemovals.delete(device.id);
      sendDeviceMessage({ type: 'DEVICE_DISCOVERED', device: copyDevice(device) });
    },

    /** Changes some fields of a known device (DEVICE_UPDATED; `state` here is merged too). */
    update(device) {
      if (!isObject(device)) throw new TypeError('update(device): device must be an object');
      checkId('device.id', device.id);
      const entry = known.get(device.id);
      if (entry) {
        const { state, ...fields } = device;
        Object.assign(entry, fields);
        if (isObject(state)) entry.state = { ...(entry.state ?? {}), ...state };
        sendDeviceMessage({ type: 'DEVICE_UPDATED', device: copyDevice(device) });
      } else {
        sendOther({ type: 'DEVICE_UPDATED', device: copyDevice(device) });
      }
    },

    /** The device is gone (DEVICE_REMOVED). */
    remove(deviceId) {
      checkId('deviceId', deviceId);
      known.delete(deviceId);
      if (isStdio || (registered && socket?.readyState === WS_OPEN)) write({ type: 'DEVICE_REMOVED', deviceId });
      else pendingRemovals.add(deviceId);
    },

    /** Pushes a partial state; the hub merges it into the device's state (STATE_UPDATE). */
    reportState(deviceId, state) {
      checkId('deviceId', deviceId);
      if (!isObject(state)) throw new TypeError('reportState(deviceId, state): state must be an object');
      const entry = known.get(deviceId);
      if (entry) {
        entry.state = { ...(entry.state ?? {}), ...state };
        sendDeviceMessage({ type: 'STATE_UPDATE', deviceId, state: { ...state } });
      } else {
        sendOther({ type: 'STATE_UPDATE', deviceId, state: { ...state } });
      }
    },

    /**
     * A button of a `button` device was pressed (BUTTON_PRESSED): the hub publishes
     * `device.button_pressed`. Not queued while the hub is away: a late press means nothing.
     * @param {string} deviceId
     * @param {'single' | 'double' | 'long'} press
     */
    pressButton(deviceId, press) {
      checkId('deviceId', deviceId);
      if (!['single', 'double', 'long'].includes(press)) throw new TypeError('pressButton(deviceId, press): press must be "single", "double" or "long"');
      if (isStdio || (registered && socket?.readyState === WS_OPEN)) write({ type: 'BUTTON_PRESSED', deviceId, press });
    },

    /** Telemetry (METRIC_UPDATE), e.g. `{ power_w: 7.5 }`. */
    reportMetrics(deviceId, metrics) {
      checkId('deviceId', deviceId);
      if (!isObject(metrics)) throw new TypeError('reportMetrics(deviceId, metrics): metrics must be an object');
      sendOther({ type: 'METRIC_UPDATE', deviceId, metrics: { ...metrics } });
    },

    /**
     * Sets the handler of ACTION and COMMAND_EXECUTE. Its return value (or what its promise
     * resolves to) becomes `ACTION_RESULT {ok:true, result}`; a thrown error or rejection becomes
     * `{ok:false, error: message}`. One handler; a new call replaces it.
     * @param {(request: ActionRequest) => unknown} handler
     */
    onAction(handler) {
      if (typeof handler !== 'function') throw new TypeError('onAction(handler): handler must be a function');
      actionHandler = handler;
      return driver;
    },

    /** Adds a handler of DRIVER_MESSAGE (free-form messages from the hub): `handler(payload, message)`. */
    onMessage(handler) {
      if (typeof handler !== 'function') throw new TypeError('onMessage(handler): handler must be a function');
      messageHandlers.add(handler);
      return driver;
    },

    /** Adds a handler of DRIVER_STATUS (`registered`, `error` with a code, `replaced`). */
    onStatus(handler) {
      if (typeof handler !== 'function') throw new TypeError('onStatus(handler): handler must be a function');
      statusHandlers.add(handler);
      return driver;
    },

    /**
     * Adds a handler called once when the driver stops for good: `handler(undefined)` after
     * close() or when the hub closed stdin, `handler(error)` when the hub refused or replaced this
     * WebSocket driver and the SDK gave up (a failure before start() resolved rejects start() instead).
     */
    onClose(handler) {
      if (typeof handler !== 'function') throw new TypeError('onClose(handler): handler must be a function');
      closeHandlers.add(handler);
      return driver;
    },

    /** Stops: closes the WebSocket (no reconnect) or stops reading stdin. */
    async close() {
      if (closed && !socket && !lines) return;
      closed = true;
      notifyClose(undefined);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      stopHeartbeat();
      if (startWaiter) {
        startWaiter.reject(new Error('driver closed before it registered'));
        startWaiter = undefined;
      }
      if (lines) {
        const l = lines;
        lines = undefined;
        l.close();
      }
      const ws = socket;
      socket = undefined;
      registered = false;
      if (ws && (ws.readyState === 0 || ws.readyState === WS_OPEN)) {
        await new Promise((resolve) => {
          const done = setTimeout(resolve, 1000);
          const prev = ws.onclose;
          ws.onclose = (event) => {
            clearTimeout(done);
            if (typeof prev === 'function') prev(event);
            resolve();
          };
          ws.close(1000, 'driver closing');
        });
      }
    },
  };
  return driver;
}

export default createDriver;
