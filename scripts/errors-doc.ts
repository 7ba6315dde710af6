/**
 * Generates docs/errors.md from the error catalogues: every code with its kind, HTTP status, what
 * the hub protocol answers and its message template, by module. `npm run docs:errors` writes it;
 * the test suite fails when the file is out of date, or when a catalogue is missing here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { accessoryHubErrors } from '../src/domain/accessory-hub/errors.js';
import { aiErrors } from '../src/domain/ai/errors.js';
import { authErrors } from '../src/domain/auth/errors.js';
import { backupErrors } from '../src/domain/backups/errors.js';
import { debugErrors } from '../src/domain/debug/operations.js';
import { deviceErrors } from '../src/domain/devices/errors.js';
import { fleetErrors } from '../src/domain/fleet/errors.js';
import { releaseErrors } from '../src/domain/releases/errors.js';
import { driverErrors, driverProtocolErrors } from '../src/domain/drivers/errors.js';
import { graphErrors } from '../src/domain/graph/errors.js';
import { homeErrors } from '../src/domain/home/errors.js';
import { intentErrors } from '../src/domain/intents/errors.js';
import { irErrors } from '../src/domain/ir/errors.js';
import { mediaErrors } from '../src/domain/media/errors.js';
import { matterErrors } from '../src/domain/matter/errors.js';
import { httpsErrors } from '../src/adapters/https/errors.js';
import { mqttErrors } from '../src/domain/mqtt/errors.js';
import { musicErrors } from '../src/domain/music/errors.js';
import { playerErrors } from '../src/domain/players/errors.js';
import { programErrors } from '../src/domain/programs/errors.js';
import { remoteErrors } from '../src/domain/remotes/errors.js';
import { sceneErrors } from '../src/domain/scenes/errors.js';
import { errors, type ErrorFactory, type FailureKind } from '../src/platform/errors.js';
import { INTEGRATIONS } from '../src/integrations/index.js';
import { integrationErrors } from '../src/integrations/host.js';
import { httpStatusOf } from '../src/surfaces/http/errors.js';
import { httpErrors } from '../src/surfaces/http/failures.js';
import { HUB_PROTOCOL_CODE_FOR, hubProtocolErrors } from '../src/surfaces/socket/failures.js';

const OUTPUT = path.resolve(import.meta.dirname, '../docs/errors.md');

export type Catalogue = Readonly<Record<string, ErrorFactory>>;

export interface CatalogueEntry {
  title: string;
  /** The file that defines it, relative to the repository. */
  source: string;
  catalogue: Catalogue;
  /** Which surfaces can answer its codes to a caller. */
  reaches: { http: boolean; hub: boolean };
  about?: string;
}

const EVERYWHERE = { http: true, hub: true };

/** Every catalogue, in module dependency order (the test suite checks none is left out). */
export const ERROR_CATALOGUES: CatalogueEntry[] = [
  { title: 'Call pipeline', source: 'src/platform/errors.ts', catalogue: errors, reaches: EVERYWHERE, about: 'Raised by `OperationRegistry.invoke` for any operation.' },
  { title: 'auth', source: 'src/domain/auth/errors.ts', catalogue: authErrors, reaches: EVERYWHERE },
  {
    title: 'ir',
    source: 'src/domain/ir/errors.ts',
    catalogue: irErrors,
    reaches: EVERYWHERE,
    about: 'IR data and the `IrTransmitter` port (the iTach adapter raises the `IR_EXTENDER_*` and `IR_CLIENT_CLOSED` codes).',
  },
  { title: 'devices', source: 'src/domain/devices/errors.ts', catalogue: deviceErrors, reaches: EVERYWHERE },
  { title: 'drivers', source: 'src/domain/drivers/errors.ts', catalogue: driverErrors, reaches: EVERYWHERE },
  {
    title: 'drivers: driver protocol',
    source: 'src/domain/drivers/errors.ts',
    catalogue: driverProtocolErrors,
    reaches: { http: false, hub: false },
    about: 'Sent to a driver as `{"type": "DRIVER_STATUS", "status": "error", code, message}` about its own messages (see docs/drivers.md); no caller of an operation sees them.',
  },
  { title: 'scenes', source: 'src/domain/scenes/errors.ts', catalogue: sceneErrors, reaches: EVERYWHERE },
  { title: 'home', source: 'src/domain/home/errors.ts', catalogue: homeErrors, reaches: EVERYWHERE },
  { title: 'players', source: 'src/domain/players/errors.ts', catalogue: playerErrors, reaches: { http: true, hub: false }, about: 'The player roster and its admin routes; no hub protocol command reaches them.' },
  { title: 'media', source: 'src/domain/media/errors.ts', catalogue: mediaErrors, reaches: { http: true, hub: false }, about: 'Media players, endpoint discovery, bridge endpoints and cast pairing (docs/media.md); no hub protocol command reaches them.' },
  { title: 'music', source: 'src/domain/music/errors.ts', catalogue: musicErrors, reaches: { http: true, hub: false }, about: 'The local media controller (MPD) and the music services (docs/media.md); no hub protocol command reaches them.' },
  { title: 'programs', source: 'src/domain/programs/errors.ts', catalogue: programErrors, reaches: EVERYWHERE },
  { title: 'debug', source: 'src/domain/debug/operations.ts', catalogue: debugErrors, reaches: { http: true, hub: false }, about: 'The development-only debug routes under /dev (docs/debug.md).' },
  { title: 'fleet', source: 'src/domain/fleet/errors.ts', catalogue: fleetErrors, reaches: { http: true, hub: false }, about: 'Fleet devices, release statuses and the bridge between hubs (docs/fleet.md).' },
  { title: 'mqtt', source: 'src/domain/mqtt/errors.ts', catalogue: mqttErrors, reaches: { http: true, hub: false }, about: 'MQTT: the link, the embedded broker\'s users and the exposed devices (docs/mqtt.md).' },
  { title: 'matter', source: 'src/domain/matter/errors.ts', catalogue: matterErrors, reaches: { http: true, hub: false }, about: 'The Matter bridge: on and off, commissioning, fabrics (docs/matter.md).' },
  { title: 'https', source: 'src/adapters/https/errors.ts', catalogue: httpsErrors, reaches: { http: true, hub: false }, about: 'HTTPS beside HTTP: its settings (docs/https.md).' },
  { title: 'releases', source: 'src/domain/releases/errors.ts', catalogue: releaseErrors, reaches: { http: true, hub: false }, about: 'Integration releases (docs/fleet.md).' },
  { title: 'accessory hub', source: 'src/domain/accessory-hub/errors.ts', catalogue: accessoryHubErrors, reaches: { http: true, hub: false }, about: 'The managed Homebridge (docs/accessory-hub.md).' },
  { title: 'ai', source: 'src/domain/ai/errors.ts', catalogue: aiErrors, reaches: { http: true, hub: false }, about: 'The assistant (docs/ai.md).' },
  { title: 'backups', source: 'src/domain/backups/errors.ts', catalogue: backupErrors, reaches: { http: true, hub: false }, about: 'Backups and restores of the hub (docs/admin.md); no hub protocol command reaches them.' },
  {
    title: 'remotes',
    source: 'src/domain/remotes/errors.ts',
    catalogue: remoteErrors,
    reaches: { http: true, hub: false },
    about: 'Remote pairing and key dispatch (docs/remote.md); over `/socket/remote-connect` they arrive in `remote:pairing:status` as `error`.',
  },
  { title: 'graph', source: 'src/domain/graph/errors.ts', catalogue: graphErrors, reaches: EVERYWHERE },
  {
    title: 'intents',
    source: 'src/domain/intents/errors.ts',
    catalogue: intentErrors,
    reaches: EVERYWHERE,
    about: 'The target codes (`NOT_FOUND` … `FAILED`) are reported per target in an `intents.execute` result.',
  },
  {
    title: 'HTTP surface',
    source: 'src/surfaces/http/failures.ts',
    catalogue: httpErrors,
    reaches: { http: true, hub: false },
    about: 'The HTTP exchange itself, before any operation runs.',
  },
  {
    title: 'Hub protocol surface',
    source: 'src/surfaces/socket/failures.ts',
    catalogue: hubProtocolErrors,
    reaches: { http: false, hub: true },
    about: 'Answered by `hub:command` itself.',
  },
  {
    title: 'integrations',
    source: 'src/integrations/host.ts',
    catalogue: integrationErrors,
    reaches: EVERYWHERE,
    about: "Every integration's settings (`<name>.settings.set`, `POST /v1/os/integrations/<name>/settings`).",
  },
  // Each integration's own catalogue, from its declaration (src/integrations/<name>/errors.ts).
  ...INTEGRATIONS.map((i) => ({ title: i.name, source: `src/integrations/${i.name}/errors.ts`, catalogue: i.errors, reaches: EVERYWHERE, about: `${i.title} (${i.doc}).` })),
];

const KIND_MEANING: Record<FailureKind, string> = {
  invalid: 'The request is malformed or a value is not allowed.',
  unauthenticated: 'No valid credentials (HTTP adds `WWW-Authenticate`).',
  forbidden: 'Authenticated, but not allowed to do this.',
  not_found: 'What the request names does not exist.',
  conflict: 'The current state does not allow it (in use, already running).',
  unprocessable: 'Well-formed, but cannot be carried out as asked.',
  rate_limited: 'Too many attempts; `Retry-After` says when to try again.',
  upstream_failed: 'A driver or device failed or answered something unusable.',
  unavailable: 'Not possible right now (offline, starting, busy); may carry `Retry-After`.',
  timeout: 'A driver, device or step did not answer in time.',
  internal: 'A bug: answered without details, logged once with its stack.',
};

/** Text for a Markdown table cell. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/</g, '&lt;');

function hubMeaning(code: string, reaches: CatalogueEntry['reaches']): string {
  if (!reaches.hub) return '—';
  const renamed = HUB_PROTOCOL_CODE_FOR.get(code);
  return renamed ? `\`ok: false\`, as \`${renamed}\`` : '`ok: false`';
}

export function renderErrorsDoc(): string {
  const kinds = Object.keys(KIND_MEANING) as FailureKind[];
  const lines: string[] = [
    '# Error codes',
    '',
    '<!-- Generated by `npm run docs:errors` from the error catalogues; do not edit by hand. -->',
    '',
    'Every failure has a stable SNAKE_CASE code, a kind and a message made from its template: the',
    '`{placeholders}` are filled where the failure is raised, and `details` carry the values as data.',
    "Each module declares its codes in its own catalogue (`errors.ts` beside its operations, built with",
    '`defineErrors`); a code is catalogued once, by the module that owns it, and means the same everywhere.',
    '',
    '- **REST** answers the CONTRACT error body `{"error": {code, message, details?, requestId}}` (the App',
    '  API: its envelope) with the HTTP status of the kind, or the status a code names in the table.',
    '- **Hub protocol** (`hub:command`) answers `hub:response` `{ok: false, data: {error: {code, message, details?}}}`.',
    '  A Socket.IO handshake without a valid token fails with `connect_error` whose `data` is',
    '  `{code, message}` (`AUTH_REQUIRED`, `INVALID_TOKEN`, `INSUFFICIENT_SCOPE`).',
    '- A client error Fastify raises that has no code here keeps its status and is named after it',
    '  (e.g. 403 → `FORBIDDEN`).',
    '',
    '## Kinds',
    '',
    '| Kind | HTTP status | Meaning |',
    '|---|---|---|',
    ...kinds.map((kind) => `| \`${kind}\` | ${httpStatusOf({ kind, code: '' })} | ${KIND_MEANING[kind]} |`),
    '',
    '## Codes by module',
  ];
  for (const entry of ERROR_CATALOGUES) {
    lines.push('', `### ${entry.title}`, '', `Defined in \`${entry.source}\`.${entry.about ? ` ${entry.about}` : ''}`, '');
    lines.push('| Code | Kind | HTTP | Hub protocol | Message |', '|---|---|---|---|---|');
    for (const factory of Object.values(entry.catalogue)) {
      const http = entry.reaches.http ? String(httpStatusOf(factory)) : '—';
      lines.push(`| \`${factory.code}\` | \`${factory.kind}\` | ${http} | ${hubMeaning(factory.code, entry.reaches)} | ${cell(factory.template)} |`);
    }
  }
  lines.push('');
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  fs.writeFileSync(OUTPUT, renderErrorsDoc());
  process.stdout.write(`wrote ${path.relative(process.cwd(), OUTPUT)}\n`);
}
