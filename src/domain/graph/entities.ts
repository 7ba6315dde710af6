import { DomainError } from '../../platform/errors.js';
import { slugify } from '../../platform/slugs.js';
import { resolveAction, type AbstractAction, type ActionName, type DeviceActions } from '../devices/actions.js';
import { CAPABILITY_MODEL, SENSOR_CLASS_NAMES, SENSOR_CLASSES, type CapabilityName, type CapabilitySource } from '../devices/capabilities.js';
import { errorInfo } from '../devices/command-results.js';
import type { DeviceActionResult } from '../devices/model.js';
import { sceneObjectIds, type SceneCatalog } from '../scenes/catalog.js';
import { sceneErrors } from '../scenes/errors.js';
import { graphErrors } from './errors.js';
import type { GraphDevice, HomeGraph } from './model.js';
import type { EntityResolver } from '../programs/home-assistant.js';

/**
 * Entities: a Home Assistant style flat view of the graph. One entity per (device, entity
 * domain) pair, id `<domain>.<object_id>` where object_id is the slugified device name
 * (de-duplicated `_2`, `_3`… in device creation order), plus one `scene.<slug>` per scene.
 * Numeric readings of non-sensor devices (a thermostat's temperature) are sensor entities too,
 * `sensor.<object_id>_<key>`, listed by `listSensors`.
 */

export interface EntityView {
  entityId: string;
  domain: string;
  objectId: string;
  /** Friendly name: the device's (or the scene's) name; for a reading, device name and reading. */
  name: string;
  deviceId: string | null;
  /** The graph scene id (`<deviceId>:<sceneId>`) of a scene entity, else null. */
  sceneId: string | null;
  spaceId: string | null;
  online: boolean;
  /** Home Assistant style state: "on", "off", "playing", "heat", "open", a reading, "unknown", "unavailable". */
  state: string;
  attributes: Record<string, unknown>;
  /** Services of the entity's domain this entity can perform now. */
  services: string[];
}

export interface EntityServiceInfo {
  service: string;
  description: string;
  /** Data fields the service reads, with their meaning. */
  data: Record<string, string>;
}

export interface EntityDomainInfo {
  domain: string;
  description: string;
  /** Capabilities that make a device show up in this domain. */
  capabilities: CapabilityName[];
  services: EntityServiceInfo[];
}

const svc = (service: string, description: string, data: Record<string, string> = {}): EntityServiceInfo => ({ service, description, data });
const ON_OFF = [svc('turn_on', 'Switch on.'), svc('turn_off', 'Switch off.'), svc('toggle', 'Switch to the other state.')];

const DOMAINS: EntityDomainInfo[] = [
  {
    domain: 'light',
    description: 'Lights; dimmable ones take a brightness.',
    capabilities: ['power', 'brightness', 'color'],
    services: [
      svc('turn_on', 'Switch on; with a brightness, dim to it (0 switches off); with a colour temperature or colour, set it.', {
        brightness: 'Optional brightness, 0–100 % (the hub\'s scale, not Home Assistant\'s 0–255).',
        brightness_pct: 'Optional brightness, 0–100 % (same as brightness).',
        color_temp_kelvin: 'Optional colour temperature in kelvin.',
        hs_color: 'Optional colour as [hue 0–360, saturation 0–100].',
      }),
      svc('turn_off', 'Switch off.'),
      svc('toggle', 'Switch to the other state.'),
    ],
  },
  { domain: 'switch', description: 'Switches and outlets: anything that only switches on and off.', capabilities: ['power'], services: ON_OFF },
  {
    domain: 'fan',
    description: 'Fans: on/off, speed, oscillation and direction.',
    capabilities: ['fan_speed'],
    services: [
      ...ON_OFF,
      svc('set_percentage', 'Set the speed.', { percentage: 'Speed 0–100 % (required).' }),
      svc('oscillate', 'Oscillate or not.', { oscillating: 'true or false (required).' }),
      svc('set_direction', 'Turn forward or in reverse.', { direction: '"forward" or "reverse" (required).' }),
    ],
  },
  { domain: 'lock', description: 'Door locks.', capabilities: ['lock'], services: [svc('lock', 'Lock.'), svc('unlock', 'Unlock.')] },
  {
    domain: 'media_player',
    description: 'TVs, receivers, speakers: power, volume, playback, inputs, apps.',
    capabilities: ['volume', 'media', 'input', 'apps', 'equalizer'],
    services: [
      ...ON_OFF,
      svc('volume_set', 'Set the volume.', { volume: 'Volume 0–100 (hub scale).', volume_level: 'Volume 0–1 (Home Assistant scale); used when volume is absent.' }),
      svc('volume_up', 'Volume one step up.'),
      svc('volume_down', 'Volume one step down.'),
      svc('media_play', 'Start or resume playback.'),
      svc('media_pause', 'Pause playback.'),
      svc('media_stop', 'Stop playback.'),
      svc('media_next_track', 'Next track.'),
      svc('media_previous_track', 'Previous track.'),
    ],
  },
  {
    domain: 'climate',
    description: 'Thermostats and air conditioners.',
    capabilities: ['temperature', 'climate_mode'],
    services: [
      svc('turn_on', 'Switch on.'),
      svc('turn_off', 'Switch off.'),
      svc('set_temperature', 'Set the target temperature.', { temperature: 'Target temperature (required).' }),
      svc('set_hvac_mode', 'Set the mode.', { hvac_mode: 'One of the device\'s hvacModes (required).' }),
    ],
  },
  {
    domain: 'cover',
    description: 'Blinds, shades, curtains, garage doors.',
    capabilities: ['cover', 'position'],
    services: [
      svc('open_cover', 'Open fully.'),
      svc('close_cover', 'Close fully.'),
      svc('stop_cover', 'Stop moving.'),
      svc('set_cover_position', 'Move to a position.', { position: '0 closed … 100 open (required).' }),
      svc('set_cover_tilt_position', 'Tilt the slats.', { tilt_position: '0 closed … 100 open (required).' }),
    ],
  },
  { domain: 'remote', description: 'GENERIC_IR devices: IR keys through an extender.', capabilities: ['ir'], services: ON_OFF },
  { domain: 'sensor', description: 'Readings: devices that only report state, and numeric readings of other devices.', capabilities: ['sensor'], services: [] },
  { domain: 'binary_sensor', description: 'Detections: motion, occupancy, contact, leak, smoke, tamper ("on" when detected).', capabilities: ['binary_sensor'], services: [] },
  { domain: 'event', description: 'Buttons: their presses are hub events (device.button_pressed).', capabilities: ['button'], services: [] },
  { domain: 'scene', description: 'Scenes devices store; one entity per scene.', capabilities: ['scenes'], services: [svc('turn_on', 'Run the scene.')] },
];
const DOMAIN_BY_NAME = new Map(DOMAINS.map((d) => [d.domain, d]));

export function listEntityDomains(): EntityDomainInfo[] {
  return DOMAINS.map((d) => ({ ...d, capabilities: [...d.capabilities], services: d.services.map((s) => ({ ...s, data: { ...s.data } })) }));
}

export function splitEntityId(entityId: string): { domain: string; objectId: string } | undefined {
  const dot = entityId.indexOf('.');
  if (dot <= 0 || dot === entityId.length - 1) return undefined;
  return { domain: entityId.slice(0, dot), objectId: entityId.slice(dot + 1) };
}

/** A graph device as the action resolver reads it (its capabilities are already derived). */
export function actionSource(device: GraphDevice): CapabilitySource {
  return { category: device.category, capabilities: device.capabilities, commands: device.commands, declaredClass: device.deviceClass };
}

/** State keys the capabilities control (not readings), numeric ones. */
const CONTROL_KEYS = new Set(['brightness', 'volume', 'target_temperature', 'position']);
const NOT_READINGS = /channel|track|duration|elapsed|playlist|preset|index/;
const SENSOR_PRIMARY = ['temperature', 'current_temperature', 'humidity', 'illuminance', 'power', 'energy', 'battery'];
/**
 * A reading key's Home Assistant attributes (its device class and unit), from the sensor classes
 * (device-classes.ts). A temperature has no unit here: it is °C or °F by the home's units.
 */
const READING_META: Record<string, { device_class: string; unit_of_measurement?: string }> = Object.fromEntries(
  SENSOR_CLASS_NAMES.flatMap((c) => {
    const { keys, unit, homeAssistant } = SENSOR_CLASSES[c];
    return keys.map((key) => [key, { device_class: homeAssistant[0], ...(c === 'temperature' ? {} : { unit_of_measurement: unit }) }]);
  }),
);

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Numeric readings of a device that is not itself a sensor: keys not controlled by a capability. */
export function readingKeys(device: GraphDevice): string[] {
  return Object.keys(device.state).filter((k) => isNumber(device.state[k]) && !CONTROL_KEYS.has(k) && !NOT_READINGS.test(k));
}

function primaryReading(state: Record<string, unknown>): string | undefined {
  const keys = Object.keys(state);
  return SENSOR_PRIMARY.find((k) => isNumber(state[k])) ?? keys.find((k) => isNumber(state[k])) ?? keys[0];
}

function stateString(value: unknown): string {
  if (value === undefined || value === null) return 'unknown';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function domainState(domain: string, device: GraphDevice): string {
  if (!device.online) return 'unavailable';
  const r = device.reading;
  const onOff = r.on === undefined ? 'unknown' : r.on ? 'on' : 'off';
  switch (domain) {
    case 'media_player': {
      if (r.on === false) return 'off';
      if (r.playback === 'playing' || r.playback === 'paused') return r.playback;
      if (r.playback === 'stopped' || r.playback === 'idle') return 'idle';
      return onOff;
    }
    case 'climate':
      return r.hvacMode ?? onOff;
    case 'cover':
      return r.coverState ?? 'unknown';
    case 'lock':
      return r.jammed ? 'jammed' : r.locked === undefined ? 'unknown' : r.locked ? 'locked' : 'unlocked';
    case 'binary_sensor':
      return r.detected === undefined ? 'unknown' : r.detected ? 'on' : 'off';
    case 'event':
      return r.lastPress ?? 'unknown';
    case 'sensor': {
      if (r.value !== undefined) return stateString(r.value);
      const key = primaryReading(device.state);
      return key === undefined ? 'unknown' : stateString(device.state[key]);
    }
    default:
      return onOff;
  }
}

function domainAttributes(domain: string, device: GraphDevice): Record<string, unknown> {
  const attributes: Record<string, unknown> = { friendly_name: device.name };
  if (domain === 'sensor') {
    const key = primaryReading(device.state);
    Object.assign(attributes, key ? READING_META[key] : undefined, { state_key: key ?? null }, device.state);
    return attributes;
  }
  for (const capability of device.capabilities) {
    if (CAPABILITY_MODEL[capability].entityDomain !== domain) continue;
    for (const { key } of CAPABILITY_MODEL[capability].stateKeys) if (key in device.state) attributes[key] = device.state[key];
  }
  return attributes;
}

/** Maps a domain service and its data to an abstract action; `undefined` for scene runs. */
export function serviceAction(domain: string, service: string, data: Record<string, unknown> = {}): AbstractAction | undefined {
  const num = (field: string, required: boolean): number | undefined => {
    const v = data[field];
    if (v === undefined || v === null) {
      if (required) throw graphErrors.INVALID_SERVICE_DATA({ field, problem: `is required by ${domain}.${service} (a number)` }, { details: { field: `data.${field}` } });
      return undefined;
    }
    if (!isNumber(v)) throw graphErrors.INVALID_SERVICE_DATA({ field, problem: 'must be a finite number' }, { details: { field: `data.${field}` } });
    return v;
  };
  const simple: Record<string, ActionName> = {
    lock: 'lock',
    unlock: 'unlock',
    stop_cover: 'stop',
    turn_off: 'turn_off',
    toggle: 'toggle',
    volume_up: 'volume_up',
    volume_down: 'volume_down',
    open_cover: 'open',
    close_cover: 'close',
    media_play: 'play',
    media_pause: 'pause',
    media_stop: 'stop',
    media_next_track: 'next',
    media_previous_track: 'previous',
  };
  if (domain === 'scene') return undefined;
  if (service === 'turn_on') {
    if (domain === 'light') {
      const brightness = num('brightness', false) ?? num('brightness_pct', false);
      if (brightness !== undefined) return brightness <= 0 ? { action: 'turn_off' } : { action: 'set_brightness', value: brightness };
      const kelvin = num('color_temp_kelvin', false);
      if (kelvin !== undefined) return { action: 'set_color_temp', value: kelvin };
      const hs = data.hs_color;
      if (hs !== undefined) {
        if (!Array.isArray(hs) || hs.length !== 2 || !hs.every(isNumber)) throw graphErrors.INVALID_SERVICE_DATA({ field: 'hs_color', problem: 'must be [hue, saturation]' }, { details: { field: 'data.hs_color' } });
        return { action: 'set_hs_color', hue: hs[0] as number, saturation: hs[1] as number };
      }
    }
    return { action: 'turn_on' };
  }
  const name = simple[service];
  if (name) return { action: name } as AbstractAction;
  switch (service) {
    case 'volume_set': {
      const volume = num('volume', false);
      if (volume !== undefined) return { action: 'set_volume', value: volume };
      const level = num('volume_level', false);
      if (level === undefined) throw graphErrors.INVALID_SERVICE_DATA({ field: 'volume (0–100) or data.volume_level (0–1)', problem: 'is required by media_player.volume_set' }, { details: { field: 'data.volume' } });
      return { action: 'set_volume', value: level * 100 };
    }
    case 'set_temperature':
      return { action: 'set_temperature', value: num('temperature', true)! };
    case 'set_cover_position':
      return { action: 'set_position', value: num('position', true)! };
    case 'set_cover_tilt_position':
      return { action: 'set_tilt_position', value: num('tilt_position', true)! };
    case 'set_percentage':
      return { action: 'set_percentage', value: num('percentage', true)! };
    case 'set_hvac_mode': {
      const mode = data.hvac_mode;
      if (typeof mode !== 'string' || !mode) throw graphErrors.INVALID_SERVICE_DATA({ field: 'hvac_mode', problem: `is required by ${domain}.${service} (a string)` }, { details: { field: 'data.hvac_mode' } });
      return { action: 'set_hvac_mode', mode };
    }
    case 'oscillate':
      if (typeof data.oscillating !== 'boolean') throw graphErrors.INVALID_SERVICE_DATA({ field: 'oscillating', problem: `is required by ${domain}.${service} (true or false)` }, { details: { field: 'data.oscillating' } });
      return { action: 'oscillate', oscillating: data.oscillating };
    case 'set_direction':
      if (data.direction !== 'forward' && data.direction !== 'reverse') throw graphErrors.INVALID_SERVICE_DATA({ field: 'direction', problem: 'must be "forward" or "reverse"' }, { details: { field: 'data.direction' } });
      return { action: 'set_direction', direction: data.direction };
  }
  throw graphErrors.SERVICE_NOT_SUPPORTED({ target: `Domain ${domain}`, service }, { details: { domain, service } });
}

/** Probe data so that a value service can be checked for support. */
const PROBE_DATA: Record<string, Record<string, unknown>> = {
  volume_set: { volume: 50 },
  set_temperature: { temperature: 21 },
  set_cover_position: { position: 50 },
  set_cover_tilt_position: { tilt_position: 50 },
  set_percentage: { percentage: 50 },
  set_hvac_mode: { hvac_mode: 'auto' },
  oscillate: { oscillating: true },
  set_direction: { direction: 'forward' },
};

function supportedServices(domain: string, device: GraphDevice): string[] {
  const info = DOMAIN_BY_NAME.get(domain);
  if (!info) return [];
  const source = actionSource(device);
  return info.services
    .filter((s) => {
      const action = serviceAction(domain, s.service, PROBE_DATA[s.service] ?? {});
      return action !== undefined && resolveAction(source, action, device.state) !== undefined;
    })
    .map((s) => s.service);
}

function deviceEntity(device: GraphDevice, entityId: string): EntityView {
  const { domain, objectId } = splitEntityId(entityId)!;
  return {
    entityId,
    domain,
    objectId,
    name: device.name,
    deviceId: device.id,
    sceneId: null,
    spaceId: device.spaceId,
    online: device.online,
    state: domainState(domain, device),
    attributes: domainAttributes(domain, device),
    services: supportedServices(domain, device),
  };
}

function sceneEntities(graph: HomeGraph, devices: Map<string, GraphDevice>): EntityView[] {
  const slugs = sceneObjectIds(graph.scenes);
  return graph.scenes.map((scene) => {
    const device = devices.get(scene.deviceId);
    const objectId = slugs.get(scene.id)!;
    const online = device?.online ?? false;
    return {
      entityId: `scene.${objectId}`,
      domain: 'scene',
      objectId,
      name: scene.name,
      deviceId: scene.deviceId,
      sceneId: scene.id,
      spaceId: device?.spaceId ?? null,
      online,
      state: online ? 'unknown' : 'unavailable',
      attributes: { friendly_name: scene.name, scene_id: scene.sceneId, device_id: scene.deviceId },
      services: online ? ['turn_on'] : [],
    };
  });
}

function readingEntities(graph: HomeGraph, taken: Set<string>): EntityView[] {
  const out: EntityView[] = [];
  for (const device of graph.devices) {
    if (device.entityIds.some((id) => id.startsWith('sensor.'))) continue;
    const keys = readingKeys(device);
    if (keys.length === 0) continue;
    const objectBase = device.entityIds[0] ? splitEntityId(device.entityIds[0])!.objectId : slugify(device.name, 'device');
    for (const key of keys) {
      const base = `${objectBase}_${slugify(key, 'value')}`;
      let objectId = base;
      for (let n = 2; taken.has(`sensor.${objectId}`); n++) objectId = `${base}_${n}`;
      taken.add(`sensor.${objectId}`);
      const label = key.replace(/_/g, ' ');
      out.push({
        entityId: `sensor.${objectId}`,
        domain: 'sensor',
        objectId,
        name: `${device.name} ${label}`,
        deviceId: device.id,
        sceneId: null,
        spaceId: device.spaceId,
        online: device.online,
        state: device.online ? stateString(device.state[key]) : 'unavailable',
        attributes: { friendly_name: `${device.name} ${label}`, ...READING_META[key], state_key: key },
        services: [],
      });
    }
  }
  return out;
}

export interface EntityFilter {
  domain?: string;
  spaceId?: string;
  deviceId?: string;
}

function matches(entity: EntityView, filter: EntityFilter): boolean {
  return (!filter.domain || entity.domain === filter.domain) && (!filter.spaceId || entity.spaceId === filter.spaceId) && (!filter.deviceId || entity.deviceId === filter.deviceId);
}

/** Device entities (in device order) then scene entities, optionally filtered. */
export function listEntities(graph: HomeGraph, filter: EntityFilter = {}): EntityView[] {
  const out: EntityView[] = [];
  for (const device of graph.devices) for (const entityId of device.entityIds) out.push(deviceEntity(device, entityId));
  out.push(...sceneEntities(graph, new Map(graph.devices.map((d) => [d.id, d]))));
  return out.filter((e) => matches(e, filter));
}

/** Sensor entities: devices that are sensors, then numeric readings of the other devices. */
export function listSensors(graph: HomeGraph, filter: Omit<EntityFilter, 'domain'> = {}): EntityView[] {
  const entities = listEntities(graph);
  const sensors = entities.filter((e) => e.domain === 'sensor');
  const taken = new Set(entities.map((e) => e.entityId));
  return [...sensors, ...readingEntities(graph, taken)].filter((e) => matches(e, filter));
}

export function findEntity(graph: HomeGraph, entityId: string): EntityView | undefined {
  const parts = splitEntityId(entityId);
  if (!parts) return undefined;
  const device = graph.devices.find((d) => d.entityIds.includes(entityId));
  if (device) return deviceEntity(device, entityId);
  if (parts.domain === 'scene') return listEntities(graph, { domain: 'scene' }).find((e) => e.entityId === entityId);
  if (parts.domain === 'sensor') return listSensors(graph).find((e) => e.entityId === entityId);
  return undefined;
}

/** The entity with state and attributes; ENTITY_NOT_FOUND when there is none. */
export function getEntity(graph: HomeGraph, entityId: string): EntityView {
  const entity = findEntity(graph, entityId);
  if (!entity) throw graphErrors.ENTITY_NOT_FOUND({ entityId }, { details: { entityId } });
  return entity;
}

export type EntityActionResult = DeviceActionResult & { entityId: string; service: string; action: ActionName | 'scene.run' };

export interface EntityServiceDeps {
  /** The current graph (built per call; it is one pass over memory). */
  graph(): HomeGraph;
  actions: DeviceActions;
  scenes: SceneCatalog;
}

/** Entity reads over the current graph and Home Assistant style service calls on entities. */
export class EntityService {
  constructor(private readonly deps: EntityServiceDeps) {}

  list(filter: EntityFilter = {}): EntityView[] {
    return listEntities(this.deps.graph(), filter);
  }

  get(entityId: string): EntityView {
    return getEntity(this.deps.graph(), entityId);
  }

  sensors(filter: Omit<EntityFilter, 'domain'> = {}): EntityView[] {
    return listSensors(this.deps.graph(), filter);
  }

  /**
   * Runs a domain service on an entity: the service becomes an abstract action performed through
   * DeviceActions (scenes: scenes.run on their device). ENTITY_NOT_FOUND for an unknown entity,
   * SERVICE_NOT_SUPPORTED (unprocessable) for a service its domain lacks, INVALID_SERVICE_DATA for
   * missing or bad data; the device's own failures (ACTION_NOT_SUPPORTED, DRIVER_ERROR…) come back
   * as `ok: false` with the error.
   */
  async entityAction(entityId: string, service: string, data: Record<string, unknown> = {}): Promise<EntityActionResult> {
    const entity = this.get(entityId);
    const domain = DOMAIN_BY_NAME.get(entity.domain);
    if (!domain?.services.some((s) => s.service === service)) {
      throw graphErrors.SERVICE_NOT_SUPPORTED(
        { target: `Entity ${entityId} (${entity.domain})`, service },
        { details: { entityId, service, services: domain?.services.map((s) => s.service) ?? [] } },
      );
    }
    const deviceId = entity.deviceId!;
    if (entity.domain === 'scene') {
      try {
        const run = await this.deps.scenes.run(entity.sceneId!);
        return { entityId, service, action: 'scene.run', deviceId, ok: true, command: 'scenes.run', ...(run.result === undefined ? {} : { result: run.result }) };
      } catch (err) {
        if (err instanceof DomainError && err.code === sceneErrors.SCENE_NOT_FOUND.code) throw err;
        return { entityId, service, action: 'scene.run', deviceId, ok: false, command: 'scenes.run', error: errorInfo(err) };
      }
    }
    let action = serviceAction(entity.domain, service, data)!;
    // A light that cannot dim still switches on when asked for a brightness.
    if (action.action === 'set_brightness' && !this.deps.actions.resolve(deviceId, action)) action = { action: 'turn_on' };
    const result = await this.deps.actions.perform(deviceId, action);
    return { entityId, service, action: action.action, ...result };
  }
}

/**
 * Entity ids as LIST_ENTITIES names them, resolved to the hub's devices and scenes: what a Home
 * Assistant automation imported as YAML refers to. The graph is built once per resolver, so one
 * import reads one consistent set of names.
 */
export function entityResolver(buildGraph: () => HomeGraph): EntityResolver {
  let graph: HomeGraph | undefined;
  return (entityId) => {
    graph ??= buildGraph();
    const entity = findEntity(graph, entityId);
    if (!entity) return undefined;
    if (entity.sceneId) return { deviceId: entity.deviceId ?? entity.sceneId.slice(0, entity.sceneId.indexOf(':')), domain: entity.domain, sceneId: entity.sceneId };
    if (!entity.deviceId) return undefined;
    const device = graph.devices.find((d) => d.id === entity.deviceId);
    return { deviceId: entity.deviceId, domain: entity.domain, ...(device?.deviceClass ? { deviceClass: device.deviceClass } : {}) };
  };
}
