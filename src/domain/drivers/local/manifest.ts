import fs from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { MAX_DRIVER_MESSAGE_BYTES } from '../messages.js';

/**
 * Local driver manifests (`*.driver.json`): the schema of their members, and loading them from
 * a folder tree. The schema describes the keyed form; the lenient forms a manifest may use
 * (lists of names) are rewritten to it first. A manifest that fails any check is reported and
 * skipped; it never stops the others from loading.
 */

export const MANIFEST_SUFFIX = '.driver.json';
/** Manifests larger than this are rejected without being parsed. */
export const MAX_MANIFEST_BYTES = 256 * 1024;
/** How deep below the drivers folder manifests are searched for. */
const MAX_SEARCH_DEPTH = 8;

export const DRIVER_TYPES = ['python', 'javascript', 'lua'] as const;
export type DriverType = (typeof DRIVER_TYPES)[number];
export const DRIVER_FILE_EXTENSIONS: Record<DriverType, string> = { python: '.py', javascript: '.js', lua: '.lua' };

const NamePattern = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
const CommandNamePattern = '^[A-Za-z0-9_.:-]{1,100}$';
const EnvNamePattern = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';


export const DriverPropertySchema = Type.Object(
  {
    type: Type.Enum(['string', 'number', 'integer', 'boolean'], {
      description: 'Value type. `integer` accepts whole numbers only; `number` any finite number. A manifest may leave it out: it is then `string`.',
    }),
    title: Type.Optional(Type.String({ maxLength: 200, description: 'Label shown to the user in the setup form.' })),
    description: Type.Optional(Type.String({ maxLength: 2000, description: 'Help text shown below the field.' })),
    default: Type.Optional(
      Type.Union([Type.String({ maxLength: 10_000 }), Type.Number(), Type.Boolean()], {
        description: 'Value used while the user has stored none. Must match `type` (and `enum` when given). Delivered through `envMap` like a stored value.',
      }),
    ),
    required: Type.Optional(
      Type.Boolean({
        description: 'The driver needs a value to run. A required property without a stored value or a `default` keeps the driver from starting (status `stopped`, `missingSettings` names it) and is refused by a settings update.',
      }),
    ),
    secret: Type.Optional(
      Type.Boolean({
        description: 'Passwords, API keys, tokens: the stored value is never returned by the API (it reads `"********"`); sending `"********"` back in an update keeps the stored value.',
      }),
    ),
    enum: Type.Optional(
      Type.Array(Type.Union([Type.String({ maxLength: 1000 }), Type.Number()]), {
        minItems: 1,
        maxItems: 500,
        description: 'The only allowed values.',
      }),
    ),
    minimum: Type.Optional(Type.Number({ description: 'Smallest allowed value (`number`, `integer`).' })),
    maximum: Type.Optional(Type.Number({ description: 'Largest allowed value (`number`, `integer`).' })),
    maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Longest allowed string (`string`); at most 10000 characters in any case.' })),
  },
  { additionalProperties: false, description: 'One setup property (or one command parameter).' },
);
export type DriverPropertySchema = Static<typeof DriverPropertySchema>;

const propertySet = (description: string) =>
  Type.Record(Type.String({ pattern: NamePattern }), DriverPropertySchema, { additionalProperties: false, maxProperties: 100, description });

export const DriverProperties = propertySet(
  'Setup properties the user fills in, by name (letters, digits, `_`; not starting with a digit; at most 64 characters). A manifest may also list them: `["host", {"name": "port", "type": "integer"}]`. Example: `{"host": {"type": "string", "title": "Host", "required": true}, "pollSeconds": {"type": "integer", "default": 30, "minimum": 5}, "apiKey": {"type": "string", "secret": true}}`.',
);
export type DriverProperties = Static<typeof DriverProperties>;

export const DriverCommandSchema = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 200, description: 'Label shown to the user.' })),
    description: Type.Optional(Type.String({ maxLength: 2000, description: 'What the command does.' })),
    params: Type.Optional(propertySet('Parameters of the command, by name; same shape as `properties` (`secret` and `required` are informative here: the hub passes params through).')),
  },
  { additionalProperties: false, description: 'One command of the catalog.' },
);
export type DriverCommandSchema = Static<typeof DriverCommandSchema>;

export const DriverCommands = Type.Record(Type.String({ pattern: CommandNamePattern }), DriverCommandSchema, {
  additionalProperties: false,
  maxProperties: 500,
  description:
    'The command catalog, by command name (`^[A-Za-z0-9_.:-]{1,100}$`); a manifest may also list them: `["play", {"name": "reboot", "title": "Reboot"}]`. An action whose command is in the catalog reaches the process as `COMMAND_EXECUTE`, any other as `ACTION`. Example: `{"reboot": {"title": "Reboot", "params": {"delaySeconds": {"type": "integer", "default": 0}}}}`.',
});
export type DriverCommands = Static<typeof DriverCommands>;

export const IO_DEFAULTS = {
  restart: { initialDelayMs: 1000, maxDelayMs: 60_000, resetAfterMs: 30_000 },
  maxLineBytes: MAX_DRIVER_MESSAGE_BYTES,
  maxMessagesPerSecond: 500,
  actionTimeoutMs: 10_000,
  pingIntervalMs: 30_000,
  violations: { max: 20, windowMs: 10_000 },
} as const;

export const DriverIoSchema = Type.Object(
  {
    restart: Type.Optional(
      Type.Object(
        {
          initialDelayMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000, description: `Delay before the first restart after a crash. Default ${IO_DEFAULTS.restart.initialDelayMs}.` })),
          maxDelayMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000, description: `The delay doubles with every crash in a row, up to this. Default ${IO_DEFAULTS.restart.maxDelayMs}.` })),
          resetAfterMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000, description: `A process that ran this long before exiting starts again from initialDelayMs. Default ${IO_DEFAULTS.restart.resetAfterMs}.` })),
        },
        { additionalProperties: false, description: 'Restart with capped exponential backoff.' },
      ),
    ),
    maxLineBytes: Type.Optional(
      Type.Integer({
        minimum: 1024,
        maximum: MAX_DRIVER_MESSAGE_BYTES,
        description: `Longest stdout line (one message) accepted, in bytes; a longer line is discarded and counts as a violation. Default and maximum ${MAX_DRIVER_MESSAGE_BYTES}.`,
      }),
    ),
    maxMessagesPerSecond: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100_000, description: `Messages accepted per one-second window; the excess is dropped and the window counts as one violation. Default ${IO_DEFAULTS.maxMessagesPerSecond}.` }),
    ),
    actionTimeoutMs: Type.Optional(
      Type.Integer({ minimum: 100, maximum: 600_000, description: `How long an action waits for the driver's ACTION_RESULT. Default ${IO_DEFAULTS.actionTimeoutMs}.` }),
    ),
    pingIntervalMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 3_600_000,
        description: `Interval of \`{"type":"PING","id"}\` health probes; 0 disables them. Answering with PONG is optional. Default ${IO_DEFAULTS.pingIntervalMs}.`,
      }),
    ),
    violations: Type.Optional(
      Type.Object(
        {
          max: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: `Violations (non-JSON line, over-long line, rejected message, flooded window) tolerated within windowMs; reaching it kills and restarts the process. Default ${IO_DEFAULTS.violations.max}.` })),
          windowMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000, description: `Default ${IO_DEFAULTS.violations.windowMs}.` })),
        },
        { additionalProperties: false, description: 'Protocol violation threshold.' },
      ),
    ),
  },
  { additionalProperties: false, description: 'Process I/O settings; every member is optional and has a default.' },
);
export type DriverIoSchema = Static<typeof DriverIoSchema>;

export const DriverEnvMap = Type.Record(Type.String({ pattern: NamePattern }), Type.String({ pattern: EnvNamePattern }), {
  additionalProperties: false,
  maxProperties: 100,
  description:
    'Setup property name → environment variable of the process, e.g. `{"host": "THERMOSTAT_HOST"}`. Every key must be a declared property. The value is the stored setting, else the property\'s `default`, else the variable is not set; numbers and booleans are written as text (`30`, `true`). Variables of the host (`PATH`, `HOME`, `LANG`, `TZ`, `HCS_*`, `NODE_*`, `PYTHON*`, `LD_*`, `DYLD_*`) cannot be mapped.',
});
export type DriverEnvMap = Static<typeof DriverEnvMap>;

export const DriverManifestSchema = Type.Object(
  {
    driverKey: Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,100}$', description: 'Unique identifier of the driver; devices it discovers belong to it.' }),
    driverFile: Type.String({ minLength: 1, maxLength: 500, description: 'Path of the program, relative to the manifest\'s folder, and inside it.' }),
    driverType: Type.Enum(['python', 'javascript', 'lua'], {
      description: 'python runs `python3 -u <file>` (.py), javascript `node <file>` (.js), lua runs the file in the hub\'s Lua 5.4 host (.lua).',
    }),
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Display name.' })),
    version: Type.Optional(Type.String({ maxLength: 50, description: 'Version of the driver.' })),
    description: Type.Optional(Type.String({ maxLength: 2000, description: 'What the driver does.' })),
    properties: Type.Optional(DriverProperties),
    commands: Type.Optional(DriverCommands),
    io: Type.Optional(DriverIoSchema),
    envMap: Type.Optional(DriverEnvMap),
  },
  { description: 'A local driver manifest (`*.driver.json`). Unknown top-level members are ignored; inside properties, commands, io and envMap they are rejected.' },
);
export type DriverManifest = Static<typeof DriverManifestSchema>;

/** io with every default applied. */
export interface ResolvedIo {
  restart: { initialDelayMs: number; maxDelayMs: number; resetAfterMs: number };
  maxLineBytes: number;
  maxMessagesPerSecond: number;
  actionTimeoutMs: number;
  pingIntervalMs: number;
  violations: { max: number; windowMs: number };
}

export interface LoadedManifest {
  driverKey: string;
  driverType: DriverType;
  name?: string;
  version?: string;
  description?: string;
  /** The manifest, relative to the searched folder (forward slashes). */
  file: string;
  /** Absolute path of the manifest. */
  manifestPath: string;
  /** Absolute folder of the manifest: the process's working directory. */
  dir: string;
  /** Absolute path of the driver program. */
  driverFile: string;
  properties: DriverProperties;
  commands: DriverCommands;
  io: ResolvedIo;
  envMap: DriverEnvMap;
}

export interface ManifestError {
  file: string;
  error: string;
  /** What the manifest declared, when it got that far. */
  driverKey?: string;
  driverType?: DriverType;
}

export interface LoadOptions {
  /** Restart backoff for members a manifest leaves out (instead of the built-in defaults). */
  defaultRestart?: Partial<ResolvedIo['restart']>;
}

const manifestCheck = Compile(DriverManifestSchema);
const propertyCheck = Compile(DriverPropertySchema);

const RESERVED_ENV = /^(PATH|HOME|LANG|LANGUAGE|TZ|TMPDIR|SHELL|USER|PWD|LC_.*|HCS_.*|NODE_.*|PYTHON.*|LD_.*|DYLD_.*)$/i;

export function resolveIo(io: DriverIoSchema | undefined, fallbackRestart?: Partial<ResolvedIo['restart']>): ResolvedIo {
  const restart = { ...IO_DEFAULTS.restart, ...fallbackRestart, ...io?.restart };
  if (restart.maxDelayMs < restart.initialDelayMs) restart.maxDelayMs = restart.initialDelayMs;
  return {
    restart,
    maxLineBytes: io?.maxLineBytes ?? IO_DEFAULTS.maxLineBytes,
    maxMessagesPerSecond: io?.maxMessagesPerSecond ?? IO_DEFAULTS.maxMessagesPerSecond,
    actionTimeoutMs: io?.actionTimeoutMs ?? IO_DEFAULTS.actionTimeoutMs,
    pingIntervalMs: io?.pingIntervalMs ?? IO_DEFAULTS.pingIntervalMs,
    violations: { ...IO_DEFAULTS.violations, ...io?.violations },
  };
}

/**
 * Checks one value against a property schema; returns the problem in words, or undefined.
 * `null`/`undefined` are "no value" and are the caller's business (required, default).
 */
export function checkPropertyValue(schema: DriverPropertySchema, value: unknown): string | undefined {
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if (value.length > (schema.maxLength ?? 10_000)) return `must be at most ${schema.maxLength ?? 10_000} characters`;
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      break;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be an integer';
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return 'must be a boolean';
      break;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `must be >= ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `must be <= ${schema.maximum}`;
  }
  if (schema.enum && !schema.enum.includes(value as string | number)) return `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  return undefined;
}

function checkPropertySet(props: DriverProperties, where: string): string | undefined {
  for (const [name, schema] of Object.entries(props)) {
    if (!propertyCheck.Check(schema)) continue; // the schema check reports it
    if (schema.enum) {
      for (const option of schema.enum) {
        const problem = checkPropertyValue({ ...schema, enum: undefined }, option);
        if (problem) return `${where}.${name}.enum: ${JSON.stringify(option)} ${problem}`;
      }
    }
    if (schema.default !== undefined) {
      const problem = checkPropertyValue(schema, schema.default);
      if (problem) return `${where}.${name}.default ${problem}`;
    }
    if (schema.minimum !== undefined && schema.maximum !== undefined && schema.minimum > schema.maximum) return `${where}.${name}: minimum is above maximum`;
  }
  return undefined;
}

interface SchemaError {
  instancePath: string;
  keyword: string;
  message: string;
  params?: unknown;
}

/** Schema errors in words, one per offending member: unknown members named, enums listed. */
function describeSchemaErrors(errors: readonly SchemaError[]): string[] {
  const unknown = errors.filter((e) => e.keyword === 'boolean' && e.message === 'schema is false');
  const out: string[] = unknown.map((e) => `${e.instancePath} is not allowed (unknown member or invalid name)`);
  const seen = new Set(unknown.map((e) => e.instancePath));
  // A union reports each alternative and then anyOf: keep one line per member, the anyOf one.
  const anyOfPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const e of errors) {
    if (e.keyword === 'boolean' || (e.keyword === 'additionalProperties' && unknown.length > 0)) continue;
    if (anyOfPaths.has(e.instancePath) && e.keyword !== 'anyOf') continue;
    if (seen.has(e.instancePath)) continue;
    seen.add(e.instancePath);
    const where = e.instancePath || '/';
    const allowed = (e.params as { allowedValues?: unknown[] } | undefined)?.allowedValues;
    if (e.keyword === 'enum' && allowed) out.push(`${where} must be one of ${allowed.join(', ')}`);
    else if (e.keyword === 'anyOf') out.push(`${where} has a value of the wrong type`);
    else out.push(`${where} ${e.message}`);
  }
  return out;
}

function isInside(dir: string, target: string): boolean {
  const rel = path.relative(dir, target);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

type JsonObject = Record<string, unknown>;
const isJsonObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A named set written as a list (`["a", {"name": "b", …}]`) as the keyed object the schema
 * describes (`{"a": {}, "b": {…}}`); a keyed object has `entry` applied to each member.
 */
function keyedByName(value: unknown, where: string, what: string, entry: (item: unknown, name: string) => unknown): unknown {
  if (isJsonObject(value)) return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, entry(item, name)]));
  if (!Array.isArray(value)) throw new Error(`invalid manifest: ${where} must be an object keyed by ${what} name, or a list`);
  // A Map, then fromEntries: a member called "__proto__" stays a member.
  const byName = new Map<string, unknown>();
  value.forEach((item: unknown, index) => {
    const at = `${where}/${index}`;
    let name: unknown;
    let rest: JsonObject = {};
    if (typeof item === 'string') name = item;
    else if (isJsonObject(item)) ({ name, ...rest } = item);
    if (typeof name !== 'string') throw new Error(`invalid manifest: ${at} must be a ${what} name or an object with a "name" string`);
    if (byName.has(name)) throw new Error(`invalid manifest: ${at}/name "${name}" is declared twice in ${where}`);
    byName.set(name, entry(rest, name));
  });
  return Object.fromEntries(byName);
}

const propertyEntry = (item: unknown): unknown => (isJsonObject(item) && !('type' in item) ? { type: 'string', ...item } : item);

function commandEntry(item: unknown, name: string): unknown {
  if (!isJsonObject(item)) return item;
  // `label` is what DEVICE_DISCOVERED calls a command's title.
  const { label, ...command } = item;
  if (label !== undefined && command.title === undefined) command.title = label;
  else if (label !== undefined) command.label = label;
  if (command.params !== undefined) command.params = keyedByName(command.params, `/commands/${name}/params`, 'parameter', propertyEntry);
  return command;
}

/**
 * The lenient forms of a manifest rewritten to the one the schema checks: `properties`,
 * `commands` and a command's `params` may be lists of names or of objects with a `name`; a
 * property without `type` is a string; a command's `label` is its `title`. Throws, naming the
 * list entry, when an entry has no name or repeats one.
 */
function normalizeManifest(raw: unknown): unknown {
  if (!isJsonObject(raw)) return raw;
  const out: JsonObject = { ...raw };
  if (raw.properties !== undefined) out.properties = keyedByName(raw.properties, '/properties', 'property', propertyEntry);
  if (raw.commands !== undefined) out.commands = keyedByName(raw.commands, '/commands', 'command', commandEntry);
  return out;
}

/** Validates one parsed manifest found at `manifestPath`. Throws an Error with the reason. */
async function validate(parsed: unknown, manifestPath: string, relFile: string, options: LoadOptions): Promise<LoadedManifest> {
  const raw = normalizeManifest(parsed);
  if (!manifestCheck.Check(raw)) {
    const problems = describeSchemaErrors(manifestCheck.Errors(raw)).slice(0, 3);
    throw new Error(`invalid manifest: ${problems.join('; ') || 'does not match the manifest schema'}`);
  }
  const m = raw;
  const dir = path.dirname(manifestPath);

  // driverFile: relative, inside the manifest's folder (after resolving symbolic links too).
  const normalized = m.driverFile.replace(/\\/g, '/');
  if (path.isAbsolute(m.driverFile) || path.posix.isAbsolute(normalized) || /^[A-Za-z]:/.test(normalized)) {
    throw new Error(`driverFile "${m.driverFile}" must be a relative path inside the manifest's folder`);
  }
  const driverFile = path.resolve(dir, normalized);
  if (!isInside(dir, driverFile)) throw new Error(`driverFile "${m.driverFile}" escapes the manifest's folder`);

  const expected = DRIVER_FILE_EXTENSIONS[m.driverType];
  if (path.extname(driverFile).toLowerCase() !== expected) {
    throw new Error(`driverFile "${m.driverFile}" does not match driverType ${m.driverType}: expected a ${expected} file`);
  }

  let realFile: string;
  let realDir: string;
  try {
    realDir = await fs.realpath(dir);
    realFile = await fs.realpath(driverFile);
  } catch {
    throw new Error(`driverFile "${m.driverFile}" does not exist`);
  }
  if (!isInside(realDir, realFile)) throw new Error(`driverFile "${m.driverFile}" escapes the manifest's folder through a symbolic link`);
  const stat = await fs.stat(realFile);
  if (!stat.isFile()) throw new Error(`driverFile "${m.driverFile}" is not a file`);

  const properties = m.properties ?? {};
  const commands = m.commands ?? {};
  const envMap = m.envMap ?? {};
  const propertyProblem = checkPropertySet(properties, 'properties');
  if (propertyProblem) throw new Error(propertyProblem);
  for (const [name, command] of Object.entries(commands)) {
    const problem = checkPropertySet(command.params ?? {}, `commands.${name}.params`);
    if (problem) throw new Error(problem);
  }
  const seenVars = new Map<string, string>();
  for (const [property, variable] of Object.entries(envMap)) {
    if (!(property in properties)) throw new Error(`envMap.${property}: no such property is declared in properties`);
    if (RESERVED_ENV.test(variable)) throw new Error(`envMap.${property}: ${variable} is reserved for the host`);
    const other = seenVars.get(variable);
    if (other) throw new Error(`envMap: ${variable} is mapped from both ${other} and ${property}`);
    seenVars.set(variable, property);
  }

  return {
    driverKey: m.driverKey,
    driverType: m.driverType,
    ...(m.name !== undefined ? { name: m.name } : {}),
    ...(m.version !== undefined ? { version: m.version } : {}),
    ...(m.description !== undefined ? { description: m.description } : {}),
    file: relFile,
    manifestPath,
    dir,
    driverFile,
    properties,
    commands,
    io: resolveIo(m.io, options.defaultRestart),
    envMap,
  };
}

/** Every `*.driver.json` below dir (sorted), skipping `node_modules`, dot-folders and symbolic links to folders. */
async function findManifestFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name.startsWith('.') || entry.name === 'node_modules' || depth >= MAX_SEARCH_DEPTH) continue;
        await walk(full, depth + 1);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && entry.name.endsWith(MANIFEST_SUFFIX) && !entry.name.startsWith('.')) {
        found.push(full);
      }
    }
  };
  await walk(root, 0);
  return found;
}

function declared(raw: unknown): Pick<ManifestError, 'driverKey' | 'driverType'> {
  if (!raw || typeof raw !== 'object') return {};
  const o = raw as Record<string, unknown>;
  return {
    ...(typeof o.driverKey === 'string' && o.driverKey.length <= 100 ? { driverKey: o.driverKey } : {}),
    ...(typeof o.driverType === 'string' && (DRIVER_TYPES as readonly string[]).includes(o.driverType) ? { driverType: o.driverType as DriverType } : {}),
  };
}

/**
 * Loads every manifest below `dir`. A manifest that fails (bad JSON, schema, extension mismatch,
 * path escape, missing program, duplicate driverKey) is reported in `errors` and skipped; the
 * first manifest of a driverKey (in path order) wins. A missing `dir` is simply empty.
 */
export async function loadManifests(dir: string, options: LoadOptions = {}): Promise<{ manifests: LoadedManifest[]; errors: ManifestError[] }> {
  const root = path.resolve(dir);
  const manifests: LoadedManifest[] = [];
  const errors: ManifestError[] = [];
  const byKey = new Map<string, LoadedManifest>();
  for (const manifestPath of await findManifestFiles(root)) {
    const file = path.relative(root, manifestPath).split(path.sep).join('/');
    let raw: unknown;
    try {
      const stat = await fs.stat(manifestPath);
      if (!stat.isFile()) throw new Error('not a file');
      if (stat.size > MAX_MANIFEST_BYTES) throw new Error(`manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
      const text = await fs.readFile(manifestPath, 'utf8');
      try {
        raw = JSON.parse(text.replace(/^\uFEFF/, ''));
      } catch (err) {
        throw new Error(`manifest is not valid JSON: ${(err as Error).message}`);
      }
      const loaded = await validate(raw, manifestPath, file, options);
      const first = byKey.get(loaded.driverKey);
      if (first) throw new Error(`duplicate driverKey "${loaded.driverKey}": already declared by ${first.file}`);
      byKey.set(loaded.driverKey, loaded);
      manifests.push(loaded);
    } catch (err) {
      errors.push({ file, error: err instanceof Error ? err.message : String(err), ...declared(raw) });
    }
  }
  return { manifests, errors };
}
