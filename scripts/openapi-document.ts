/**
 * Writes the OpenAPI document exactly as a running service serves it: the app is started
 * in-process on an ephemeral loopback port with a throw-away data dir, and `/openapi.json` is
 * fetched. `npm run lint:openapi` lints the file it writes with Redocly's recommended rules.
 *
 * Usage: tsx scripts/openapi-document.ts [output file, default dist/openapi.json]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const output = path.resolve(process.argv[2] ?? 'dist/openapi.json');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-openapi-'));
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ADMIN_PASSWORD: 'openapi-dump-only', LOG_LEVEL: 'silent' });
const app = await createApp(config, { logger: pino({ level: 'silent' }) });
try {
  const { port } = await app.start();
  const response = await fetch(`http://127.0.0.1:${port}/openapi.json`);
  if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
  fs.mkdirSync(path.dirname(output), { recursive: true });
  fs.writeFileSync(output, `${JSON.stringify(await response.json(), null, 2)}\n`);
  console.log(`wrote ${output}`);
} finally {
  await app.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
