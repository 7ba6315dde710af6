-- Example local driver: a simulated media player with apps, an equalizer and scenes.
--
-- Runs in the hub's Lua 5.4 host (wasmoon): the hub starts `lua-host.mjs media.lua`. A Lua driver
-- may be a plain loop over io.read, like a Python driver; this one uses the host's callback mode
-- instead, because the playback position ticks on a timer while no message arrives: the main
-- chunk registers hub.on_message and returns, and the host calls it with every message from the
-- hub (PING is answered by the host). Other parts of the global `hub` table used here: hub.send,
-- hub.log, hub.env, hub.set_interval/clear_timer, hub.json_encode, hub.null, hub.array.
--
-- The device offers the capabilities "apps", "equalizer" and "scenes", so the hub's capability
-- routes work for it: GET /devices/:id/apps (apps.list), GET /devices/:id/apps/:appId/icon
-- (apps.icon), POST /devices/:id/apps/:appId/launch (apps.launch), GET and POST
-- /devices/:id/equalizer (equalizer.get / equalizer.set), GET /devices/:id/scenes (scenes.list);
-- scenes.run goes through POST /devices/:id/command.

local DEVICE_ID = "media-1"
local NAME = hub.env("MEDIA_NAME") or "Living Room Media Player"

local function clamp(n, low, high)
  if n < low then return low end
  if n > high then return high end
  return n
end

local start_volume = math.tointeger(tonumber(hub.env("MEDIA_START_VOLUME") or "") or 20) or 20

-- 1×1 PNG icons (one colour per app), base64.
local APPS = {
  { id = "movies", name = "Movies", category = "video",
    icon = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mN4yikCAALZAQOgaV/wAAAAAElFTkSuQmCC" },
  { id = "music", name = "Music", category = "audio",
    icon = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mOQu54AAAJsAVYx86SoAAAAAElFTkSuQmCC" },
  { id = "news", name = "News", category = "video",
    icon = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mNgSDsDAAGcATPfT7MVAAAAAElFTkSuQmCC" },
}

local SOUND_MODES = { "standard", "movie", "music", "night" }
local PRESETS = {
  flat = { bass = 0, treble = 0 },
  bass_boost = { bass = 6, treble = 0 },
  vocal = { bass = -2, treble = 4 },
}
local BAND_MIN, BAND_MAX = -10, 10

local SCENES = {
  { id = "movie_night", name = "Movie night" },
  { id = "background_music", name = "Background music" },
  { id = "all_off", name = "All off" },
}

local state = {
  power = "off",
  playback = "stopped",
  volume = clamp(start_volume, 0, 100),
  app = hub.null,
  equalizer = { bass = 0, treble = 0 },
  sound_mode = "standard",
  position = 0,
}

local function find(list, id)
  for _, item in ipairs(list) do
    if item.id == id then return item end
  end
  return nil
end

local function contains(list, value)
  for _, item in ipairs(list) do
    if item == value then return true end
  end
  return false
end

local function copy_state()
  return {
    power = state.power,
    playback = state.playback,
    volume = state.volume,
    app = state.app,
    equalizer = { bass = state.equalizer.bass, treble = state.equalizer.treble },
    sound_mode = state.sound_mode,
    position = state.position,
  }
end

local function report(changes)
  hub.send({ type = "STATE_UPDATE", deviceId = DEVICE_ID, state = changes })
end

local function equalizer_summary()
  local presets = {}
  for name in pairs(PRESETS) do presets[#presets + 1] = name end
  table.sort(presets)
  return {
    bands = { bass = state.equalizer.bass, treble = state.equalizer.treble },
    range = { min = BAND_MIN, max = BAND_MAX },
    soundMode = state.sound_mode,
    soundModes = SOUND_MODES,
    presets = presets,
  }
end

-- Playback position ticks while playing (a timer of the Lua host).
local ticker = nil
local function set_playback(playback)
  state.playback = playback
  if playback == "playing" and not ticker then
    ticker = hub.set_interval(5000, function()
      state.position = state.position + 5
      report({ position = state.position })
    end)
  elseif playback ~= "playing" and ticker then
    hub.clear_timer(ticker)
    ticker = nil
  end
end

local function require_power()
  if state.power ~= "on" then error("the player is off; send power_on first", 0) end
end

local function number_param(params, name, low, high)
  local v = params[name]
  if type(v) ~= "number" or v ~= v then error(name .. " must be a number", 0) end
  if v < low or v > high then error(string.format("%s must be between %d and %d", name, low, high), 0) end
  return math.floor(v + 0.5)
end

local function string_param(params, name)
  local v = params[name]
  if type(v) ~= "string" or v == "" then error(name .. " must be a non-empty string", 0) end
  return v
end

local handlers = {}

function handlers.power_on()
  state.power = "on"
  report({ power = "on" })
  return copy_state()
end

function handlers.power_off()
  state.power = "off"
  set_playback("stopped")
  state.app = hub.null
  report({ power = "off", playback = "stopped", app = hub.null })
  return copy_state()
end

function handlers.play()
  require_power()
  set_playback("playing")
  report({ playback = "playing" })
  return copy_state()
end

function handlers.pause()
  require_power()
  set_playback("paused")
  report({ playback = "paused" })
  return copy_state()
end

function handlers.volume_set(params)
  state.volume = number_param(params, "volume", 0, 100)
  report({ volume = state.volume })
  return { volume = state.volume }
end

handlers["apps.list"] = function()
  local apps = {}
  for _, app in ipairs(APPS) do apps[#apps + 1] = { id = app.id, name = app.name, category = app.category } end
  return { apps = hub.array(apps) }
end

handlers["apps.icon"] = function(params)
  local app = find(APPS, string_param(params, "appId"))
  if not app then error("no app " .. tostring(params.appId), 0) end
  return { contentType = "image/png", data = app.icon }
end

handlers["apps.launch"] = function(params)
  require_power()
  local app = find(APPS, string_param(params, "appId"))
  if not app then error("no app " .. tostring(params.appId), 0) end
  state.app = app.id
  state.position = 0
  set_playback("playing")
  report({ app = app.id, playback = "playing", position = 0 })
  return { app = app.id, playback = state.playback }
end

handlers["equalizer.get"] = function()
  return equalizer_summary()
end

handlers["equalizer.set"] = function(params)
  -- Check everything first, then change: a bad request changes nothing.
  local next_eq = { bass = state.equalizer.bass, treble = state.equalizer.treble }
  local next_mode = state.sound_mode
  if params.preset ~= nil then
    local preset = PRESETS[params.preset]
    if type(params.preset) ~= "string" or not preset then error("unknown preset " .. tostring(params.preset), 0) end
    next_eq.bass, next_eq.treble = preset.bass, preset.treble
  end
  if params.bands ~= nil then
    if type(params.bands) ~= "table" then error("bands must be an object of band levels", 0) end
    for band, level in pairs(params.bands) do
      if next_eq[band] == nil then error("unknown band " .. tostring(band) .. " (bands: bass, treble)", 0) end
      next_eq[band] = number_param(params.bands, band, BAND_MIN, BAND_MAX)
    end
  end
  if params.soundMode ~= nil then
    if not contains(SOUND_MODES, params.soundMode) then
      error("unknown sound mode " .. tostring(params.soundMode) .. " (" .. table.concat(SOUND_MODES, ", ") .. ")", 0)
    end
    next_mode = params.soundMode
  end
  state.equalizer = next_eq
  state.sound_mode = next_mode
  report({ equalizer = { bass = next_eq.bass, treble = next_eq.treble }, sound_mode = next_mode })
  return equalizer_summary()
end

handlers["scenes.list"] = function()
  return { scenes = hub.array(SCENES) }
end

handlers["scenes.run"] = function(params)
  local scene = find(SCENES, string_param(params, "sceneId"))
  if not scene then error("no scene " .. tostring(params.sceneId), 0) end
  if scene.id == "all_off" then
    handlers.power_off()
  else
    state.power = "on"
    if scene.id == "movie_night" then
      state.app, state.sound_mode, state.volume = "movies", "movie", 35
      state.equalizer = { bass = 4, treble = 1 }
    else
      state.app, state.sound_mode, state.volume = "music", "music", 20
      state.equalizer = { bass = 2, treble = 2 }
    end
    state.position = 0
    set_playback("playing")
    report(copy_state())
  end
  return { scene = scene.id, state = copy_state() }
end

local function answer(msg)
  local action_id = msg.actionId
  if type(action_id) ~= "string" then return end
  local handler = handlers[msg.command]
  local ok, result
  if msg.deviceId ~= DEVICE_ID then
    ok, result = false, "unknown device " .. tostring(msg.deviceId)
  elseif not handler then
    ok, result = false, "unknown command " .. tostring(msg.command)
  else
    ok, result = pcall(handler, type(msg.params) == "table" and msg.params or {})
  end
  if ok then
    hub.send({ type = "ACTION_RESULT", actionId = action_id, ok = true, result = result })
  else
    hub.send({ type = "ACTION_RESULT", actionId = action_id, ok = false, error = string.sub(tostring(result), 1, 2000) })
  end
end

hub.on_message(function(msg)
  if msg.type == "ACTION" or msg.type == "COMMAND_EXECUTE" then
    answer(msg)
  elseif msg.type == "DRIVER_MESSAGE" then
    hub.log("message from the hub: " .. hub.json_encode(msg.payload))
  elseif msg.type == "DRIVER_STATUS" then
    hub.log("hub status: " .. tostring(msg.status))
  end
end)

-- A local process is registered by the hub when it starts: announce the device straight away.
hub.send({
  type = "DEVICE_DISCOVERED",
  device = {
    id = DEVICE_ID,
    name = NAME,
    deviceClass = "media_player",
    category = "media_player",
    capabilities = { "apps", "equalizer", "scenes" },
    commands = {
      { name = "power_on", label = "Power on" },
      { name = "power_off", label = "Power off" },
      { name = "play", label = "Play" },
      { name = "pause", label = "Pause" },
      { name = "volume_set", label = "Set volume", params = { volume = { type = "integer", minimum = 0, maximum = 100 } } },
      "apps.list", "apps.icon", "apps.launch", "equalizer.get", "equalizer.set", "scenes.list", "scenes.run",
    },
    properties = { soundModes = SOUND_MODES },
    state = copy_state(),
  },
})
hub.log(NAME .. " ready")
