#!/usr/bin/env node
// Runs one Lua 5.4 driver inside wasmoon for the local driver process protocol: newline-delimited
// JSON on stdin (hub → driver) and stdout (driver → hub).
//
//   node lua-host.mjs <driver.lua>
//
// A Lua driver is an ordinary Lua program. stdin and stdout are the process's own, reached
// synchronously: io.read("l") / io.read("*l") / io.lines() block until the hub's next line (nil at
// the end of input), and print(), io.write() and io.stdout:write() reach the hub when they return
// (stdout is unbuffered). stdout carries the protocol only: log to io.stderr or with hub.log.
//
// Two ways to write a driver, told apart by what the main chunk does:
//   plain mode     the main chunk reads stdin itself, in a loop, and answers every message
//                  (PING included) like a Python driver does. When it returns, the host exits
//                  with code 0 (as `lua driver.lua` would).
//   callback mode  the main chunk registers hub.on_message handlers (and/or timers) and returns.
//                  The host then reads the rest of stdin itself (lines the main chunk had not
//                  read yet included), answers PING, and calls the handlers with every other
//                  message; timers run between messages. From then on stdin belongs to the host:
//                  io.read on stdin reads as end of input (with one warning on stderr).
// A main chunk that registered nothing returns into an exit, and so does one that read stdin to
// its end: handlers are only ever called after the main chunk has returned, and timers only fire
// while no Lua code is running (never while a plain-mode loop waits in io.read).
//
// The optional `hub` table, in both modes:
//   hub.send(tbl)              writes tbl as one JSON line to stdout (a driver event)
//   hub.on_message(fn)         callback mode: fn(msg) is called with every message from the hub
//                              as a Lua table (ACTION, COMMAND_EXECUTE, DRIVER_STATUS, ...);
//                              PING is answered by the host
//   hub.log(...)               writes a line to stderr (the hub logs it under the driver's name)
//   hub.env(name)              an environment variable, or nil (os.getenv works too)
//   hub.set_timeout(ms, fn)    runs fn once after ms; returns an id (callback mode)
//   hub.set_interval(ms, fn)   runs fn every ms; returns an id (callback mode)
//   hub.clear_timer(id)        cancels either
//   hub.now()                  milliseconds since the Unix epoch
//   hub.json_encode(v)         JSON text of a Lua value
//   hub.json_decode(s)         Lua value of JSON text
//   hub.null                   stands for JSON null (encode it explicitly; decoded null is nil in
//                              objects and hub.null in arrays)
//   hub.array(t), hub.object(t) mark a table as a JSON array / object (matters for empty tables,
//                              which otherwise encode as {})
//   hub.driver_key             the driver's key (HCS_DRIVER_KEY)
// require("json") gives { encode, decode, null, array, object } (the functions above) unless the
// driver brings its own json.lua. require() finds modules next to the driver file and in the
// working directory; Lua's file functions see only the mounted .lua files (a virtual file
// system), not the host's disk.
// An error in a handler or timer is written to stderr and the host carries on; an error in the
// main chunk exits with code 1. In callback mode the host exits with code 0 when stdin ends (the
// hub went away).
import fs from 'node:fs';
import path from 'node:path';
import { LuaFactory } from 'wasmoon';
import { installStandardStreams, StdinLines, writeAllSync } from './lua-stdio.mjs';

const MAX_LUA_FILES = 500;
const MAX_LUA_BYTES = 16 * 1024 * 1024;

const PRELUDE = String.raw`
local native_write, native_stderr, native_env, native_set_timer, native_clear_timer, native_now =
  __hub_write, __hub_stderr, __hub_env, __hub_set_timer, __hub_clear_timer, __hub_now
__hub_write, __hub_stderr, __hub_env, __hub_set_timer, __hub_clear_timer, __hub_now = nil, nil, nil, nil, nil, nil

local hub = {}
local null = setmetatable({}, { __name = "hub.null", __tostring = function() return "null" end })
local array_mt = { __jsontype = "array" }
local object_mt = { __jsontype = "object" }
hub.null = null
function hub.array(t) return setmetatable(t or {}, array_mt) end
function hub.object(t) return setmetatable(t or {}, object_mt) end

-- JSON encoding -----------------------------------------------------------------------------
local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function encode_string(s)
  return '"' .. (s:gsub('[%c"\\]', function(c) return escapes[c] or string.format('\\u%04x', c:byte()) end)) .. '"'
end

local function encode_number(n)
  if math.type(n) == "integer" then return string.format("%d", n) end
  if n ~= n or n == math.huge or n == -math.huge then return "null" end
  if n == math.floor(n) and n >= -2^53 and n <= 2^53 then return string.format("%d", math.tointeger(n)) end
  local s = string.format("%.14g", n)
  if tonumber(s) ~= n then s = string.format("%.17g", n) end
  return s
end

local function table_kind(t)
  local mt = getmetatable(t)
  if mt and mt.__jsontype then return mt.__jsontype end
  local n = 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 then return "object" end
    n = n + 1
  end
  if n == 0 then return "object" end
  for i = 1, n do if t[i] == nil then return "object" end end
  return "array"
end

local encode_value
local function encode_table(t, seen, out)
  if seen[t] then error("cannot encode a table that contains itself", 0) end
  seen[t] = true
  if table_kind(t) == "array" then
    out[#out + 1] = "["
    for i = 1, #t do
      if i > 1 then out[#out + 1] = "," end
      encode_value(t[i], seen, out)
    end
    out[#out + 1] = "]"
  else
    out[#out + 1] = "{"
    local first = true
    for k, v in pairs(t) do
      local key
      if type(k) == "string" then key = k
      elseif type(k) == "number" then key = encode_number(k)
      else error("cannot encode a table key of type " .. type(k), 0) end
      if not first then out[#out + 1] = "," end
      first = false
      out[#out + 1] = encode_string(key)
      out[#out + 1] = ":"
      encode_value(v, seen, out)
    end
    out[#out + 1] = "}"
  end
  seen[t] = nil
end

encode_value = function(v, seen, out)
  local tv = type(v)
  if v == nil or v == null then out[#out + 1] = "null"
  elseif tv == "boolean" then out[#out + 1] = v and "true" or "false"
  elseif tv == "number" then out[#out + 1] = encode_number(v)
  elseif tv == "string" then out[#out + 1] = encode_string(v)
  elseif tv == "table" then encode_table(v, seen, out)
  else error("cannot encode a value of type " .. tv, 0) end
end

function hub.json_encode(v)
  local out = {}
  encode_value(v, {}, out)
  return table.concat(out)
end

-- JSON decoding -----------------------------------------------------------------------------
local unescapes = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ['\\'] = '\\', ['/'] = '/' }

function hub.json_decode(str)
  if type(str) ~= "string" then error("json_decode expects a string", 2) end
  local pos = 1
  local function fail(msg) error(string.format("invalid JSON at position %d: %s", pos, msg), 0) end
  local function skip() pos = str:find("[^ \t\r\n]", pos) or (#str + 1) end
  local parse_value

  local function parse_string()
    local parts = {}
    local i = pos + 1
    while true do
      local j = str:find('["\\]', i)
      if not j then fail("unterminated string") end
      parts[#parts + 1] = str:sub(i, j - 1)
      if str:sub(j, j) == '"' then pos = j + 1; break end
      local e = str:sub(j + 1, j + 1)
      if e == "u" then
        local hex = str:match("^%x%x%x%x", j + 2)
        if not hex then pos = j; fail("bad \\u escape") end
        local cp = tonumber(hex, 16)
        i = j + 6
        if cp >= 0xD800 and cp <= 0xDBFF then
          local lo = str:match("^\\u(%x%x%x%x)", i)
          local low = lo and tonumber(lo, 16)
          if low and low >= 0xDC00 and low <= 0xDFFF then
            cp = 0x10000 + (cp - 0xD800) * 0x400 + (low - 0xDC00)
            i = i + 6
          end
        end
        parts[#parts + 1] = utf8.char(cp)
      else
        local r = unescapes[e]
        if not r then pos = j; fail("bad escape") end
        parts[#parts + 1] = r
        i = j + 2
      end
    end
    return table.concat(parts)
  end

  local function parse_number()
    local int = str:match("^-?%d+", pos)
    if not int then fail("unexpected character") end
    local frac = str:match("^%.%d+", pos + #int) or ""
    local exp = str:match("^[eE][-+]?%d+", pos + #int + #frac) or ""
    local text = int .. frac .. exp
    pos = pos + #text
    local n = tonumber(text)
    if frac == "" and exp == "" then n = math.tointeger(n) or n end
    return n
  end

  parse_value = function(depth)
    if depth > 200 then fail("nested too deeply") end
    skip()
    local c = str:sub(pos, pos)
    if c == "{" then
      local obj = {}
      pos = pos + 1
      skip()
      if str:sub(pos, pos) == "}" then pos = pos + 1; return obj end
      while true do
        skip()
        if str:sub(pos, pos) ~= '"' then fail("expected a string key") end
        local key = parse_string()
        skip()
        if str:sub(pos, pos) ~= ":" then fail("expected ':'") end
        pos = pos + 1
        local v = parse_value(depth + 1)
        if v ~= null then obj[key] = v end
        skip()
        local d = str:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return obj end
        if d ~= "," then pos = pos - 1; fail("expected ',' or '}'") end
      end
    elseif c == "[" then
      local arr = setmetatable({}, array_mt)
      pos = pos + 1
      skip()
      if str:sub(pos, pos) == "]" then pos = pos + 1; return arr end
      while true do
        arr[#arr + 1] = parse_value(depth + 1)
        skip()
        local d = str:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return arr end
        if d ~= "," then pos = pos - 1; fail("expected ',' or ']'") end
      end
    elseif c == '"' then return parse_string()
    elseif str:sub(pos, pos + 3) == "true" then pos = pos + 4; return true
    elseif str:sub(pos, pos + 4) == "false" then pos = pos + 5; return false
    elseif str:sub(pos, pos + 3) == "null" then pos = pos + 4; return null
    elseif c == "" then fail("unexpected end of input")
    else return parse_number() end
  end

  local v = parse_value(0)
  skip()
  if pos <= #str then fail("trailing characters") end
  if v == null then return nil end
  return v
end

-- Host API ----------------------------------------------------------------------------------
local function to_line(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
  return table.concat(parts, " ")
end

function hub.send(t)
  if type(t) ~= "table" then error("hub.send expects a table", 2) end
  native_write(hub.json_encode(t))
  return true
end

function hub.log(...) native_stderr(to_line(...)) end
function hub.env(name) return native_env(tostring(name)) end
function hub.now() return native_now() end

local handlers = {}
function hub.on_message(fn)
  if type(fn) ~= "function" then error("hub.on_message expects a function", 2) end
  handlers[#handlers + 1] = fn
end

local timers = {}
local next_timer = 0
local function add_timer(ms, fn, repeating)
  if type(fn) ~= "function" then error("expects a function", 3) end
  ms = tonumber(ms) or 0
  next_timer = next_timer + 1
  timers[next_timer] = { fn = fn, repeating = repeating }
  native_set_timer(next_timer, math.max(0, ms), repeating)
  return next_timer
end
function hub.set_timeout(ms, fn) return add_timer(ms, fn, false) end
function hub.set_interval(ms, fn) return add_timer(ms, fn, true) end
function hub.clear_timer(id)
  if timers[id] then
    timers[id] = nil
    native_clear_timer(id)
  end
end

local function report(where, err)
  native_stderr("lua error in " .. where .. ": " .. tostring(err))
end

function __hub_fire_timer(id)
  local t = timers[id]
  if not t then return end
  if not t.repeating then timers[id] = nil end
  local ok, err = xpcall(t.fn, debug.traceback)
  if not ok then report("timer", err) end
end

function __hub_dispatch(line)
  local ok, msg = pcall(hub.json_decode, line)
  if not ok or type(msg) ~= "table" then
    report("message from the hub", ok and "not a JSON object" or msg)
    return
  end
  if msg.type == "PING" then
    hub.send({ type = "PONG", id = msg.id })
    return
  end
  for _, fn in ipairs(handlers) do
    local fine, err = xpcall(fn, debug.traceback, msg)
    if not fine then report("on_message handler", err) end
  end
end

-- Whether the host should stay and serve messages and timers once the main chunk has returned.
function __hub_has_callbacks()
  return #handlers > 0 or next(timers) ~= nil
end

hub.driver_key = native_env("HCS_DRIVER_KEY")

-- The hub waits for answers line by line: nothing may sit in a buffer.
io.stdout:setvbuf("no")

-- require("json"), last in line: a json.lua of the driver's own comes first.
local json = { encode = hub.json_encode, decode = hub.json_decode, null = null, array = hub.array, object = hub.object }
table.insert(package.searchers, function(name)
  if name == "json" then return function() return json end, ":hub:" end
  return "\n\tno module '" .. name .. "' built into the Lua host"
end)

_G.hub = hub
`;

/** The hub closed its end of stdout: nobody is listening any more. */
const quitQuietly = () => process.exit(0);

/** os.exit() in Lua surfaces as emscripten's ExitStatus: honour its code. Returns otherwise. */
function exitOnExitStatus(err) {
  if (err && typeof err === 'object' && typeof err.status === 'number' && (err.name === 'ExitStatus' || /exit\(/.test(String(err.message)))) {
    // Every write was synchronous: nothing is left to flush.
    process.exit(err.status);
  }
}

function describe(err) {
  return err instanceof Error ? err.message : typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : String(err);
}

// Written like Lua's own output, synchronously, so that the order on each stream is the order of the calls.
function stderrLine(text) {
  writeAllSync(2, `${String(text).replace(/\n+$/, '')}\n`);
}

/** Every .lua file under the driver's folder, so that require() finds the driver's modules. */
function luaFilesUnder(dir) {
  const out = [];
  let bytes = 0;
  const walk = (d, depth) => {
    if (depth > 8 || out.length >= MAX_LUA_FILES) return;
    let entries;
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full, depth + 1);
      else if (entry.isFile() && entry.name.endsWith('.lua') && out.length < MAX_LUA_FILES) {
        const size = fs.statSync(full).size;
        if (bytes + size > MAX_LUA_BYTES) continue;
        bytes += size;
        out.push(full);
      }
    }
  };
  walk(dir, 0);
  return out;
}

/** The path inside the Lua virtual file system (forward slashes, absolute). */
function virtualPath(file) {
  const p = file.split(path.sep).join('/');
  return p.startsWith('/') ? p : `/${p.replace(/^[A-Za-z]:/, '')}`;
}

/** Splits the bytes the host reads from stdin in callback mode into lines for the Lua handlers. */
function lineFeeder(onLine) {
  let partial = Buffer.alloc(0);
  return {
    push(chunk) {
      let bytes = partial.length > 0 ? Buffer.concat([partial, chunk]) : chunk;
      let newline;
      while ((newline = bytes.indexOf(10)) !== -1) {
        onLine(bytes.subarray(0, newline).toString('utf8'));
        bytes = bytes.subarray(newline + 1);
      }
      partial = bytes;
    },
    end() {
      if (partial.length > 0) onLine(partial.toString('utf8'));
      partial = Buffer.alloc(0);
    },
  };
}

async function main() {
  const file = process.argv[2];
  if (!file) {
    stderrLine('usage: lua-host.mjs <driver.lua>');
    process.exit(2);
  }
  const driverFile = path.resolve(file);
  const driverDir = path.dirname(driverFile);
  if (!fs.existsSync(driverFile)) {
    stderrLine(`lua-host: ${driverFile} does not exist`);
    process.exit(1);
  }

  // Modules are looked up next to the driver file, then in the working directory (the manifest's
  // folder, as the supervisor starts it); every .lua file below that folder is mounted.
  const cwd = process.cwd();
  const rel = path.relative(cwd, driverFile);
  const root = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? cwd : driverDir;
  const factory = new LuaFactory(undefined, { ...process.env });
  const files = luaFilesUnder(root);
  if (!files.includes(driverFile)) files.push(driverFile);
  for (const f of files) await factory.mountFile(virtualPath(f), fs.readFileSync(f));
  // process.stdin is never touched before callback mode: a Node stream would make descriptor 0
  // non-blocking under the synchronous reads.
  const stdin = new StdinLines(stderrLine);
  installStandardStreams((await factory.getLuaModule()).module.FS, { stdin, onBrokenPipe: quitQuietly });
  const lua = await factory.createEngine();

  const timers = new Map();
  let fireTimer;
  lua.global.set('__hub_write', (text) => writeAllSync(1, `${text}\n`, quitQuietly));
  lua.global.set('__hub_stderr', (text) => stderrLine(text));
  lua.global.set('__hub_env', (name) => process.env[name] ?? undefined);
  lua.global.set('__hub_now', () => Date.now());
  lua.global.set('__hub_set_timer', (id, ms, repeating) => {
    const fire = () => {
      if (!repeating) timers.delete(id);
      try {
        fireTimer(id);
      } catch (err) {
        exitOnExitStatus(err);
        stderrLine(`lua error in timer: ${describe(err)}`);
      }
    };
    timers.set(id, { handle: repeating ? setInterval(fire, Math.max(1, ms)) : setTimeout(fire, ms), repeating });
  });
  lua.global.set('__hub_clear_timer', (id) => {
    const t = timers.get(id);
    if (!t) return;
    timers.delete(id);
    if (t.repeating) clearInterval(t.handle);
    else clearTimeout(t.handle);
  });

  await lua.doString(PRELUDE);
  const dirs = [...new Set([virtualPath(driverDir), virtualPath(root)])];
  lua.global.set('__hub_package_path', dirs.map((d) => `${d}/?.lua;${d}/?/init.lua`).join(';'));
  await lua.doString('package.path = __hub_package_path; __hub_package_path = nil');
  fireTimer = lua.global.get('__hub_fire_timer');
  const dispatch = lua.global.get('__hub_dispatch');
  const hasCallbacks = lua.global.get('__hub_has_callbacks');

  try {
    await lua.doFile(virtualPath(driverFile));
  } catch (err) {
    exitOnExitStatus(err);
    stderrLine(`lua error in ${path.basename(driverFile)}: ${describe(err)}`);
    process.exit(1);
  }

  // Plain mode ends with its main chunk; so does a driver whose input is already over.
  if (stdin.exhausted || !hasCallbacks()) process.exit(0);

  // Callback mode: the host reads stdin from here on, starting with what Lua left unread.
  const feeder = lineFeeder((line) => {
    if (line.trim() === '') return;
    try {
      dispatch(line);
    } catch (err) {
      exitOnExitStatus(err);
      stderrLine(`lua error in message dispatch: ${describe(err)}`);
    }
  });
  feeder.push(stdin.takeOver('the main chunk returned and hub.on_message receives the messages'));
  process.stdin.on('data', (chunk) => feeder.push(chunk));
  process.stdin.on('end', () => {
    feeder.end();
    process.exit(0);
  });
  process.stdin.on('error', quitQuietly);
}

main().catch((err) => {
  stderrLine(`lua-host failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
