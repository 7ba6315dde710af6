import { SENSOR_CLASSES, type BinarySensorClass, type ButtonPress, type ColorMode, type DeviceAttributes, type DeviceClass, type SensorClass } from '../devices/capabilities.js';

/**
 * HAP services as device classes (docs/devices.md, "HAP service"; docs/accessory-hub.md): the one
 * table that says, for each HAP service the hub knows, which class its device is, which state keys
 * of the model its characteristics become (in the model's units), its attributes, and which
 * standard commands it takes and the characteristic writes each is. A service not in the table
 * stays generic (its characteristics keyed by their description, `set_<key>` commands).
 *
 * Types are HAP's short forms (Apple's base UUID `0000XXXX-0000-1000-8000-0026BB765291` is `XXXX`
 * without its leading zeros), as hap-nodejs 0.14 (Homebridge 1.11) defines them in
 * `dist/lib/definitions/{Service,Characteristic}Definitions.js`.
 */

/** HAP service types (short form). */
export const HAP_SERVICE = {
  AccessoryInformation: '3E',
  ProtocolInformation: 'A2',
  ServiceLabel: 'CC',
  Lightbulb: '43',
  Switch: '49',
  Outlet: '47',
  WindowCovering: '8C',
  Window: '8B',
  Door: '81',
  GarageDoorOpener: '41',
  Thermostat: '4A',
  HeaterCooler: 'BC',
  LockMechanism: '45',
  Fan: '40',
  Fanv2: 'B7',
  TemperatureSensor: '8A',
  HumiditySensor: '82',
  LightSensor: '84',
  CarbonDioxideSensor: '97',
  AirQualitySensor: '8D',
  Battery: '96',
  MotionSensor: '85',
  OccupancySensor: '86',
  ContactSensor: '80',
  LeakSensor: '83',
  SmokeSensor: '87',
  StatelessProgrammableSwitch: '89',
} as const;

/** HAP characteristic types (short form). */
export const HAP_CHARACTERISTIC = {
  Name: '23',
  ConfiguredName: 'E3',
  On: '25',
  Brightness: '8',
  ColorTemperature: 'CE',
  Hue: '13',
  Saturation: '2F',
  OutletInUse: '26',
  CurrentPosition: '6D',
  TargetPosition: '7C',
  PositionState: '72',
  HoldPosition: '6F',
  CurrentHorizontalTiltAngle: '6C',
  TargetHorizontalTiltAngle: '7B',
  CurrentVerticalTiltAngle: '6E',
  TargetVerticalTiltAngle: '7D',
  ObstructionDetected: '24',
  CurrentDoorState: 'E',
  TargetDoorState: '32',
  LockCurrentState: '1D',
  LockTargetState: '1E',
  CurrentTemperature: '11',
  TargetTemperature: '35',
  CurrentHeatingCoolingState: 'F',
  TargetHeatingCoolingState: '33',
  CurrentRelativeHumidity: '10',
  Active: 'B0',
  CurrentHeaterCoolerState: 'B1',
  TargetHeaterCoolerState: 'B2',
  CoolingThresholdTemperature: 'D',
  HeatingThresholdTemperature: '12',
  RotationSpeed: '29',
  RotationDirection: '28',
  SwingMode: 'B6',
  CurrentAmbientLightLevel: '6B',
  CarbonDioxideLevel: '93',
  CarbonDioxideDetected: '92',
  AirQuality: '95',
  PM2_5Density: 'C6',
  BatteryLevel: '68',
  StatusLowBattery: '79',
  ChargingState: '8F',
  MotionDetected: '22',
  OccupancyDetected: '71',
  ContactSensorState: '6A',
  LeakDetected: '70',
  SmokeDetected: '76',
  ProgrammableSwitchEvent: '73',
} as const;

const S = HAP_SERVICE;
const C = HAP_CHARACTERISTIC;

/** Services that describe an accessory rather than do something: never a device. */
export const DESCRIPTIVE_SERVICES: ReadonlySet<string> = new Set([S.AccessoryInformation, S.ProtocolInformation, S.ServiceLabel]);
/** Characteristics that name a service: never state. */
export const NAME_CHARACTERISTICS: ReadonlySet<string> = new Set([C.Name, C.ConfiguredName]);

const APPLE_BASE = /^([0-9A-F]{8})-0000-1000-8000-0026BB765291$/;

/** HAP's short form of a type: `00000043-0000-1000-8000-0026BB765291` → `43`; a custom UUID stays as it is (upper case). */
export function shortType(type: string): string {
  const upper = type.toUpperCase();
  const m = APPLE_BASE.exec(upper);
  return m ? m[1]!.replace(/^0+(?=.)/, '') : upper;
}

/** A characteristic of an imported service, as the import keeps it (HAP's metadata, no value). */
export interface ServiceCharacteristic {
  /** HAP short type. */
  type?: string;
  iid: number;
  format?: string;
  writable: boolean;
  minValue?: number;
  maxValue?: number;
  minStep?: number;
  validValues?: number[];
}

/** One service's characteristics by HAP type, and their current values (undefined when unknown). */
export interface ServiceContext {
  char(type: string): ServiceCharacteristic | undefined;
  writable(type: string): boolean;
  value(type: string): unknown;
}

/** A characteristic write, by HAP type, in HAP's units (fitted to its range and step when sent). */
export type HapWrite = [type: string, value: unknown];

type ParamSchema = { type: 'number'; minimum?: number; maximum?: number } | { type: 'boolean' } | { type: 'string'; enum: string[] };

interface StateRule {
  /** The model's raw state key (docs/devices.md: the keys readings.ts reads). */
  key: string;
  from: string;
  read: (value: unknown, c: ServiceCharacteristic) => unknown;
}

interface CommandRule {
  /** A standard command name (docs/devices.md, "Standard commands"). */
  name: string;
  label: string;
  /** Whether the service can carry it (its writable characteristics). */
  when: (s: ServiceContext) => boolean;
  params?: (s: ServiceContext) => Record<string, ParamSchema>;
  write: (params: Record<string, unknown>, s: ServiceContext) => HapWrite[];
}

export interface ServiceSpec {
  deviceClass: DeviceClass;
  /** State keys read from one characteristic each; the first rule to give a key wins. */
  state: StateRule[];
  /** State keys read from several characteristics (a cover's `state`, a heater-cooler's mode). */
  derive?: (s: ServiceContext) => Record<string, unknown>;
  attributes?: (s: ServiceContext) => DeviceAttributes;
  commands: CommandRule[];
  /** The characteristic whose events are button presses (0 single, 1 double, 2 long). */
  presses?: string;
}

// --- conversions -------------------------------------------------------------------------------

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const asNumber = (v: unknown): number | undefined => (finite(v) ? v : undefined);
const asBool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : finite(v) ? v !== 0 : undefined);
/** An enum characteristic's value as a word (`words[value]`), undefined when out of the list. */
const word = (words: readonly string[]) => (v: unknown) => (finite(v) && Number.isInteger(v) && v >= 0 && v < words.length ? words[v] : undefined);
/** True when the value equals `match` (HAP's uint8 detections: 1 detected). */
const equals = (match: number) => (v: unknown) => (finite(v) ? v === match : typeof v === 'boolean' ? Number(v) === match : undefined);
const range = (c: ServiceCharacteristic | undefined, min: number, max: number) => ({ min: c?.minValue ?? min, max: c?.maxValue ?? max });

/** A percentage (0–100) from a characteristic's own range (a speed of 0–3, a tilt of −90…90°). */
export function toPercent(value: unknown, c: ServiceCharacteristic): number | undefined {
  if (!finite(value)) return undefined;
  const { min, max } = range(c, 0, 100);
  if ((min === 0 && max === 100) || max <= min) return value;
  return Math.round(((value - min) / (max - min)) * 1000) / 10;
}

/** The characteristic's value for a percentage (0–100) of its range. */
export function fromPercent(percent: number, c: ServiceCharacteristic | undefined): number {
  const { min, max } = range(c, 0, 100);
  return max <= min ? percent : min + (percent / 100) * (max - min);
}

/** Kelvin from HAP's mireds (ColorTemperature). */
export const miredsToKelvin = (v: unknown): number | undefined => (finite(v) && v > 0 ? Math.round(1_000_000 / v) : undefined);
/** Mireds for HAP from kelvin. */
export const kelvinToMireds = (kelvin: number): number => Math.round(1_000_000 / kelvin);

/**
 * A ColorTemperature's range in kelvin (HAP's default 140–500 mireds is 2000–7142 K). Mireds run
 * the other way, and the bounds are rounded inwards so that any kelvin in range is in range in mireds.
 */
export function kelvinRange(c: ServiceCharacteristic | undefined): { minimum: number; maximum: number } {
  return { minimum: Math.ceil(1_000_000 / (c?.maxValue ?? 500)), maximum: Math.floor(1_000_000 / (c?.minValue ?? 140)) };
}

const INTEGER_FORMATS = new Set(['int', 'uint8', 'uint16', 'uint32', 'uint64']);

/** A value as the characteristic takes it: a boolean for `bool`; a number clamped to its range, on its step, whole for integer formats. */
export function fitValue(c: ServiceCharacteristic, value: unknown): unknown {
  if (c.format === 'bool') return value === true || value === 1;
  if (!finite(value)) return value;
  let v = value;
  if (finite(c.minValue)) v = Math.max(c.minValue, v);
  if (finite(c.maxValue)) v = Math.min(c.maxValue, v);
  if (finite(c.minStep) && c.minStep > 0) {
    const base = c.minValue ?? 0;
    v = Number((base + Math.round((v - base) / c.minStep) * c.minStep).toFixed(10));
  }
  if (c.format !== undefined && INTEGER_FORMATS.has(c.format)) v = Math.round(v);
  return v;
}

/** The words an enum characteristic allows, in the order of its values (HAP's valid-values, else its range). */
function allowed(c: ServiceCharacteristic | undefined, words: readonly string[]): string[] {
  if (!c) return [];
  const values = c.validValues ?? words.map((_, i) => i).filter((i) => i >= (c.minValue ?? 0) && i <= (c.maxValue ?? words.length - 1));
  return values.filter((v) => v >= 0 && v < words.length).map((v) => words[v]!);
}

const number = (v: unknown) => asNumber(v);
const bool = (v: unknown) => asBool(v);
const percent = (v: unknown, c: ServiceCharacteristic) => toPercent(v, c);
const state = (key: string, from: string, read: StateRule['read'] = number): StateRule => ({ key, from, read });

// --- building blocks of the table --------------------------------------------------------------

/** On/off through a characteristic that takes `on`/`off` (On: true/false; Active: 1/0). */
function power(type: string, on: unknown, off: unknown): CommandRule[] {
  const when = (s: ServiceContext) => s.writable(type);
  return [
    { name: 'turn_on', label: 'On', when, write: () => [[type, on]] },
    { name: 'turn_off', label: 'Off', when, write: () => [[type, off]] },
    { name: 'toggle', label: 'Toggle', when, write: (_, s) => [[type, asBool(s.value(type)) === true ? off : on]] },
  ];
}

/** A fan's speed, its switch (0 switches off, any other speed on) and its direction. */
function fanCommands(powerType: string, on: unknown, off: unknown): CommandRule[] {
  return [
    ...power(powerType, on, off),
    {
      name: 'set_percentage',
      label: 'Speed',
      when: (s) => s.writable(C.RotationSpeed),
      params: () => ({ percentage: { type: 'number', minimum: 0, maximum: 100 } }),
      write: ({ percentage }, s) => ((percentage as number) <= 0 ? [[powerType, off]] : [[C.RotationSpeed, fromPercent(percentage as number, s.char(C.RotationSpeed))], [powerType, on]]),
    },
    {
      name: 'set_direction',
      label: 'Direction',
      when: (s) => s.writable(C.RotationDirection),
      params: () => ({ direction: { type: 'string', enum: ['forward', 'reverse'] } }),
      write: ({ direction }) => [[C.RotationDirection, direction === 'reverse' ? 1 : 0]],
    },
  ];
}

const DOOR_STATES = ['open', 'closed', 'opening', 'closing', 'open'] as const; // 4 stopped: neither closed nor moving
const HVAC_MODES = ['off', 'heat', 'cool', 'auto'] as const; // TargetHeatingCoolingState
const HEATER_COOLER_MODES = ['auto', 'heat', 'cool'] as const; // TargetHeaterCoolerState
const PRESSES: readonly ButtonPress[] = ['single', 'double', 'long']; // ProgrammableSwitchEvent
const AIR_QUALITY = ['unknown', 'excellent', 'good', 'fair', 'inferior', 'poor'] as const;

/** A heater-cooler's mode: off while inactive, else its target state. */
function heaterCoolerMode(s: ServiceContext): string | undefined {
  const active = asBool(s.value(C.Active));
  if (active === false) return 'off';
  return word(HEATER_COOLER_MODES)(s.value(C.TargetHeaterCoolerState));
}

/** The thresholds a heater-cooler's target temperature is in its mode (both in auto). */
function heaterCoolerTargets(s: ServiceContext): string[] {
  const mode = heaterCoolerMode(s);
  const present = (types: string[]) => types.filter((t) => s.char(t));
  if (mode === 'heat') return present([C.HeatingThresholdTemperature]);
  if (mode === 'cool') return present([C.CoolingThresholdTemperature]);
  return present([C.HeatingThresholdTemperature, C.CoolingThresholdTemperature]);
}

function temperatureAttributes(s: ServiceContext, targets: string[], hvacModes: string[]): DeviceAttributes {
  const chars = targets.map((t) => s.char(t)).filter((c): c is ServiceCharacteristic => c !== undefined);
  const mins = chars.map((c) => c.minValue).filter(finite);
  const maxs = chars.map((c) => c.maxValue).filter(finite);
  const step = Math.max(0.5, ...chars.map((c) => c.minStep).filter(finite));
  return {
    ...(mins.length ? { minTemperature: Math.min(...mins) } : {}),
    ...(maxs.length ? { maxTemperature: Math.max(...maxs) } : {}),
    temperatureStep: step,
    // HAP carries temperatures in °C whatever the accessory displays.
    temperatureUnit: '°C',
    ...(hvacModes.length ? { hvacModes } : {}),
  };
}

const COVER: ServiceSpec = {
  deviceClass: 'cover',
  state: [
    state('position', C.CurrentPosition, percent),
    state('target_position', C.TargetPosition, percent),
    state('tilt', C.CurrentHorizontalTiltAngle, percent),
    state('tilt', C.CurrentVerticalTiltAngle, percent),
    state('obstruction', C.ObstructionDetected, bool),
  ],
  derive: (s) => {
    const door = word(DOOR_STATES)(s.value(C.CurrentDoorState));
    if (door) return { state: door };
    const c = s.char(C.CurrentPosition);
    const position = c ? toPercent(s.value(C.CurrentPosition), c) : undefined;
    const moving = asNumber(s.value(C.PositionState));
    // PositionState: 0 decreasing (closing), 1 increasing (opening), 2 stopped.
    if (moving === 0) return { state: 'closing' };
    if (moving === 1) return { state: 'opening' };
    return position === undefined ? {} : { state: position > 0 ? 'open' : 'closed' };
  },
  attributes: (s) => ({ tilt: s.writable(C.TargetHorizontalTiltAngle) || s.writable(C.TargetVerticalTiltAngle) }),
  commands: [
    { name: 'open', label: 'Open', when: (s) => s.writable(C.TargetDoorState) || s.writable(C.TargetPosition), write: (_, s) => (s.writable(C.TargetDoorState) ? [[C.TargetDoorState, 0]] : [[C.TargetPosition, fromPercent(100, s.char(C.TargetPosition))]]) },
    { name: 'close', label: 'Close', when: (s) => s.writable(C.TargetDoorState) || s.writable(C.TargetPosition), write: (_, s) => (s.writable(C.TargetDoorState) ? [[C.TargetDoorState, 1]] : [[C.TargetPosition, fromPercent(0, s.char(C.TargetPosition))]]) },
    {
      name: 'stop',
      label: 'Stop',
      when: (s) => !s.char(C.TargetDoorState) && (s.writable(C.HoldPosition) || (s.writable(C.TargetPosition) && s.char(C.CurrentPosition) !== undefined)),
      // HoldPosition where offered, else the target becomes where it is.
      write: (_, s) => (s.writable(C.HoldPosition) ? [[C.HoldPosition, true]] : [[C.TargetPosition, s.value(C.CurrentPosition)]]),
    },
    {
      name: 'set_position',
      label: 'Position',
      when: (s) => s.writable(C.TargetPosition),
      params: () => ({ position: { type: 'number', minimum: 0, maximum: 100 } }),
      write: ({ position }, s) => [[C.TargetPosition, fromPercent(position as number, s.char(C.TargetPosition))]],
    },
    {
      name: 'set_tilt_position',
      label: 'Tilt',
      when: (s) => s.writable(C.TargetHorizontalTiltAngle) || s.writable(C.TargetVerticalTiltAngle),
      params: () => ({ tilt: { type: 'number', minimum: 0, maximum: 100 } }),
      // 0 % is −90°, 100 % is 90° (the characteristic's range).
      write: ({ tilt }, s) => {
        const type = s.writable(C.TargetHorizontalTiltAngle) ? C.TargetHorizontalTiltAngle : C.TargetVerticalTiltAngle;
        return [[type, fromPercent(tilt as number, s.char(type))]];
      },
    },
  ],
};

function sensor(sensorClass: SensorClass, from: string, read: StateRule['read'] = number): ServiceSpec {
  return {
    deviceClass: 'sensor',
    state: [state(sensorClass, from, read), state('battery_low', C.StatusLowBattery, bool)],
    attributes: () => ({ sensorClass, unit: SENSOR_CLASSES[sensorClass].unit }),
    commands: [],
  };
}

function binarySensor(sensorClass: BinarySensorClass, from: string, read: StateRule['read']): ServiceSpec {
  return { deviceClass: 'binary_sensor', state: [state(sensorClass, from, read), state('battery_low', C.StatusLowBattery, bool)], attributes: () => ({ sensorClass }), commands: [] };
}

// --- the table ---------------------------------------------------------------------------------

/** The services the table maps (every service type above but the descriptive ones). */
export type HapServiceName = Exclude<keyof typeof HAP_SERVICE, 'AccessoryInformation' | 'ProtocolInformation' | 'ServiceLabel'>;

export const HAP_SERVICES: Readonly<Record<HapServiceName, ServiceSpec>> = {
  Lightbulb: {
    deviceClass: 'light',
    state: [state('on', C.On, bool), state('brightness', C.Brightness, percent), state('color_temp_kelvin', C.ColorTemperature, miredsToKelvin), state('hue', C.Hue), state('saturation', C.Saturation)],
    attributes: (s) => {
      const modes: ColorMode[] = [];
      if (s.writable(C.Hue) && s.writable(C.Saturation)) modes.push('hs');
      if (s.writable(C.ColorTemperature)) modes.push('color_temp');
      if (modes.length === 0) modes.push(s.writable(C.Brightness) ? 'brightness' : 'onoff');
      const kelvin = modes.includes('color_temp') ? kelvinRange(s.char(C.ColorTemperature)) : undefined;
      return { colorModes: modes, ...(kelvin ? { minKelvin: kelvin.minimum, maxKelvin: kelvin.maximum } : {}) };
    },
    commands: [
      ...power(C.On, true, false),
      {
        name: 'set_brightness',
        label: 'Brightness',
        when: (s) => s.writable(C.Brightness),
        params: () => ({ brightness: { type: 'number', minimum: 0, maximum: 100 } }),
        write: ({ brightness }, s) => [[C.Brightness, fromPercent(brightness as number, s.char(C.Brightness))]],
      },
      {
        name: 'set_color_temp',
        label: 'Colour temperature',
        when: (s) => s.writable(C.ColorTemperature),
        params: (s) => ({ kelvin: { type: 'number', ...kelvinRange(s.char(C.ColorTemperature)) } }),
        write: ({ kelvin }) => [[C.ColorTemperature, kelvinToMireds(kelvin as number)]],
      },
      {
        name: 'set_hs_color',
        label: 'Colour',
        when: (s) => s.writable(C.Hue) && s.writable(C.Saturation),
        params: () => ({ hue: { type: 'number', minimum: 0, maximum: 360 }, saturation: { type: 'number', minimum: 0, maximum: 100 } }),
        write: ({ hue, saturation }) => [
          [C.Hue, hue],
          [C.Saturation, saturation],
        ],
      },
    ],
  },
  Switch: { deviceClass: 'switch', state: [state('on', C.On, bool)], commands: power(C.On, true, false) },
  Outlet: { deviceClass: 'outlet', state: [state('on', C.On, bool), state('in_use', C.OutletInUse, bool)], commands: power(C.On, true, false) },
  WindowCovering: COVER,
  Window: COVER,
  Door: COVER,
  GarageDoorOpener: COVER,
  LockMechanism: {
    deviceClass: 'lock',
    state: [state('lock', C.LockCurrentState, word(['unlocked', 'locked', 'jammed', 'unknown'])), state('target_lock', C.LockTargetState, word(['unlocked', 'locked']))],
    commands: [
      { name: 'lock', label: 'Lock', when: (s) => s.writable(C.LockTargetState), write: () => [[C.LockTargetState, 1]] },
      { name: 'unlock', label: 'Unlock', when: (s) => s.writable(C.LockTargetState), write: () => [[C.LockTargetState, 0]] },
    ],
  },
  Thermostat: {
    deviceClass: 'climate',
    state: [
      state('current_temperature', C.CurrentTemperature),
      state('target_temperature', C.TargetTemperature),
      state('hvac_mode', C.TargetHeatingCoolingState, word(HVAC_MODES)),
      state('hvac_action', C.CurrentHeatingCoolingState, word(['idle', 'heating', 'cooling'])),
      state('humidity', C.CurrentRelativeHumidity),
      state('target_temp_low', C.HeatingThresholdTemperature),
      state('target_temp_high', C.CoolingThresholdTemperature),
    ],
    attributes: (s) => temperatureAttributes(s, [C.TargetTemperature], allowed(s.char(C.TargetHeatingCoolingState), HVAC_MODES)),
    commands: [
      {
        name: 'set_target_temperature',
        label: 'Target temperature',
        when: (s) => s.writable(C.TargetTemperature),
        params: (s) => ({ temperature: { type: 'number', ...minMax(s.char(C.TargetTemperature)) } }),
        write: ({ temperature }) => [[C.TargetTemperature, temperature]],
      },
      {
        name: 'set_hvac_mode',
        label: 'Mode',
        when: (s) => s.writable(C.TargetHeatingCoolingState),
        params: (s) => ({ mode: { type: 'string', enum: allowed(s.char(C.TargetHeatingCoolingState), HVAC_MODES) } }),
        write: ({ mode }) => [[C.TargetHeatingCoolingState, HVAC_MODES.indexOf(mode as (typeof HVAC_MODES)[number])]],
      },
    ],
  },
  HeaterCooler: {
    deviceClass: 'climate',
    state: [
      state('on', C.Active, bool),
      state('current_temperature', C.CurrentTemperature),
      state('hvac_action', C.CurrentHeaterCoolerState, word(['off', 'idle', 'heating', 'cooling'])),
      state('target_temp_low', C.HeatingThresholdTemperature),
      state('target_temp_high', C.CoolingThresholdTemperature),
    ],
    derive: (s) => {
      const mode = heaterCoolerMode(s);
      const target = heaterCoolerTargets(s)
        .map((t) => asNumber(s.value(t)))
        .find(finite);
      return { ...(mode ? { hvac_mode: mode } : {}), ...(target !== undefined ? { target_temperature: target } : {}) };
    },
    attributes: (s) => temperatureAttributes(s, [C.HeatingThresholdTemperature, C.CoolingThresholdTemperature], ['off', ...allowed(s.char(C.TargetHeaterCoolerState), HEATER_COOLER_MODES)]),
    commands: [
      ...power(C.Active, 1, 0),
      {
        name: 'set_target_temperature',
        label: 'Target temperature',
        when: (s) => s.writable(C.HeatingThresholdTemperature) || s.writable(C.CoolingThresholdTemperature),
        params: (s) => ({ temperature: { type: 'number', ...temperatureAttributesRange(s) } }),
        // The threshold of its mode (heat: heating, cool: cooling; auto or off: both).
        write: ({ temperature }, s) => heaterCoolerTargets(s).map((t): HapWrite => [t, temperature]),
      },
      {
        name: 'set_hvac_mode',
        label: 'Mode',
        when: (s) => s.writable(C.Active) && s.writable(C.TargetHeaterCoolerState),
        params: (s) => ({ mode: { type: 'string', enum: ['off', ...allowed(s.char(C.TargetHeaterCoolerState), HEATER_COOLER_MODES)] } }),
        write: ({ mode }) =>
          mode === 'off'
            ? [[C.Active, 0]]
            : [
                [C.Active, 1],
                [C.TargetHeaterCoolerState, HEATER_COOLER_MODES.indexOf(mode as (typeof HEATER_COOLER_MODES)[number])],
              ],
      },
    ],
  },
  Fan: {
    deviceClass: 'fan',
    state: [state('on', C.On, bool), state('percentage', C.RotationSpeed, percent), state('direction', C.RotationDirection, word(['forward', 'reverse']))],
    attributes: (s) => ({ oscillate: false, direction: s.writable(C.RotationDirection) }),
    commands: fanCommands(C.On, true, false),
  },
  Fanv2: {
    deviceClass: 'fan',
    state: [state('on', C.Active, bool), state('percentage', C.RotationSpeed, percent), state('oscillating', C.SwingMode, bool), state('direction', C.RotationDirection, word(['forward', 'reverse']))],
    attributes: (s) => ({ oscillate: s.writable(C.SwingMode), direction: s.writable(C.RotationDirection) }),
    commands: [
      ...fanCommands(C.Active, 1, 0),
      {
        name: 'oscillate',
        label: 'Oscillate',
        when: (s) => s.writable(C.SwingMode),
        params: () => ({ oscillating: { type: 'boolean' } }),
        write: ({ oscillating }) => [[C.SwingMode, oscillating === true ? 1 : 0]],
      },
    ],
  },
  TemperatureSensor: sensor('temperature', C.CurrentTemperature),
  HumiditySensor: sensor('humidity', C.CurrentRelativeHumidity),
  LightSensor: sensor('illuminance', C.CurrentAmbientLightLevel),
  CarbonDioxideSensor: { ...sensor('co2', C.CarbonDioxideLevel), state: [state('co2', C.CarbonDioxideLevel), state('co2_detected', C.CarbonDioxideDetected, equals(1)), state('battery_low', C.StatusLowBattery, bool)] },
  AirQualitySensor: {
    deviceClass: 'sensor',
    state: [state('pm25', C.PM2_5Density), state('air_quality', C.AirQuality, word(AIR_QUALITY)), state('battery_low', C.StatusLowBattery, bool)],
    // Without a PM2.5 density, its value is the air quality in words.
    derive: (s) => (s.char(C.PM2_5Density) ? {} : { value: word(AIR_QUALITY)(s.value(C.AirQuality)) }),
    attributes: (s) => (s.char(C.PM2_5Density) ? { sensorClass: 'pm25', unit: SENSOR_CLASSES.pm25.unit } : {}),
    commands: [],
  },
  Battery: { ...sensor('battery', C.BatteryLevel), state: [state('battery', C.BatteryLevel), state('battery_low', C.StatusLowBattery, bool), state('charging', C.ChargingState, equals(1))] },
  MotionSensor: binarySensor('motion', C.MotionDetected, bool),
  OccupancySensor: binarySensor('occupancy', C.OccupancyDetected, equals(1)),
  // ContactSensorState 0 is "contact detected": closed, which the model says as `contact: true`.
  ContactSensor: binarySensor('contact', C.ContactSensorState, equals(0)),
  LeakSensor: binarySensor('leak', C.LeakDetected, equals(1)),
  SmokeSensor: binarySensor('smoke', C.SmokeDetected, equals(1)),
  StatelessProgrammableSwitch: {
    deviceClass: 'button',
    state: [],
    attributes: (s) => ({ presses: allowed(s.char(C.ProgrammableSwitchEvent), PRESSES) as ButtonPress[] }),
    commands: [],
    presses: C.ProgrammableSwitchEvent,
  },
};

function minMax(c: ServiceCharacteristic | undefined): { minimum?: number; maximum?: number } {
  return { ...(finite(c?.minValue) ? { minimum: c.minValue } : {}), ...(finite(c?.maxValue) ? { maximum: c.maxValue } : {}) };
}

function temperatureAttributesRange(s: ServiceContext): { minimum?: number; maximum?: number } {
  const a = temperatureAttributes(s, [C.HeatingThresholdTemperature, C.CoolingThresholdTemperature], []);
  return { ...(a.minTemperature !== undefined ? { minimum: a.minTemperature } : {}), ...(a.maxTemperature !== undefined ? { maximum: a.maxTemperature } : {}) };
}

const BY_TYPE = new Map<string, HapServiceName>((Object.keys(HAP_SERVICES) as HapServiceName[]).map((name) => [HAP_SERVICE[name], name]));

/** The table's name for a HAP service type (`43` → `Lightbulb`), or undefined for a service it does not know. */
export function serviceName(type: string): HapServiceName | undefined {
  return BY_TYPE.get(shortType(type));
}

export function isHapServiceName(name: unknown): name is HapServiceName {
  return typeof name === 'string' && Object.hasOwn(HAP_SERVICES, name);
}

/** The press a ProgrammableSwitchEvent value is. */
export function pressOf(value: unknown): ButtonPress | undefined {
  return word(PRESSES)(value) as ButtonPress | undefined;
}

// --- the engine --------------------------------------------------------------------------------

/** A service of the table with its characteristics, and the values they have now. */
export function serviceContext(characteristics: readonly ServiceCharacteristic[], value: (iid: number) => unknown = () => undefined): ServiceContext {
  const byType = new Map<string, ServiceCharacteristic>();
  for (const c of characteristics) if (c.type !== undefined && !byType.has(c.type)) byType.set(c.type, c);
  return {
    char: (type) => byType.get(type),
    writable: (type) => byType.get(type)?.writable === true,
    value: (type) => {
      const c = byType.get(type);
      return c ? value(c.iid) : undefined;
    },
  };
}

export interface ServiceDescription {
  deviceClass: DeviceClass;
  attributes: DeviceAttributes;
  commands: Array<{ name: string; label: string; params?: Record<string, unknown> }>;
}

/** What a device of the service is: its class, attributes, and the standard commands it takes (with their params). */
export function describeService(name: HapServiceName, characteristics: readonly ServiceCharacteristic[]): ServiceDescription {
  const spec = HAP_SERVICES[name];
  const s = serviceContext(characteristics);
  return {
    deviceClass: spec.deviceClass,
    attributes: spec.attributes?.(s) ?? {},
    commands: spec.commands
      .filter((c) => c.when(s))
      .map((c) => {
        const params = c.params?.(s);
        return { name: c.name, label: c.label, ...(params ? { params: { type: 'object', properties: params, required: Object.keys(params) } } : {}) };
      }),
  };
}

/** The service's state in the model's keys, from its characteristics' values (unknown ones left out). */
export function serviceState(name: HapServiceName, s: ServiceContext): Record<string, unknown> {
  const spec = HAP_SERVICES[name];
  const out: Record<string, unknown> = {};
  for (const rule of spec.state) {
    if (rule.key in out) continue;
    const c = s.char(rule.from);
    if (!c) continue;
    const v = rule.read(s.value(rule.from), c);
    if (v !== undefined) out[rule.key] = v;
  }
  for (const [key, v] of Object.entries(spec.derive?.(s) ?? {})) if (v !== undefined) out[key] = v;
  return out;
}

/**
 * The characteristic writes a command is, or a problem (not a command of the service, a param
 * missing or out of range). A single-valued command also takes its value as `value`.
 */
export function serviceWrites(name: HapServiceName, s: ServiceContext, command: string, params: Record<string, unknown>): { writes: Array<{ iid: number; value: unknown; type: string }> } | { problem: string } {
  const spec = HAP_SERVICES[name];
  const rule = spec.commands.find((c) => c.name === command && c.when(s));
  if (!rule) return { problem: `${command} is not a command of this ${name}` };
  const schema = rule.params?.(s) ?? {};
  const keys = Object.keys(schema);
  const checked: Record<string, unknown> = {};
  for (const key of keys) {
    const v = params[key] ?? (keys.length === 1 ? params.value : undefined);
    const p = schema[key]!;
    if (p.type === 'number') {
      if (!finite(v)) return { problem: `${command} needs params.${key}, a number` };
      if ((p.minimum !== undefined && v < p.minimum) || (p.maximum !== undefined && v > p.maximum)) return { problem: `params.${key} must be between ${p.minimum ?? '-∞'} and ${p.maximum ?? '∞'}` };
    } else if (p.type === 'boolean') {
      if (typeof v !== 'boolean') return { problem: `${command} needs params.${key}, a boolean` };
    } else if (typeof v !== 'string' || !p.enum.includes(v)) {
      return { problem: `params.${key} must be one of ${p.enum.join(', ')}` };
    }
    checked[key] = v;
  }
  const writes: Array<{ iid: number; value: unknown; type: string }> = [];
  for (const [type, value] of rule.write(checked, s)) {
    const c = s.char(type);
    if (!c || value === undefined) return { problem: `${command} cannot be carried now` };
    writes.push({ iid: c.iid, type, value: fitValue(c, value) });
  }
  return { writes };
}
