import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { createHub } from '../src/hub.js';
import { systemClock, systemTimers } from '../src/platform/clock.js';
import { describe, expect, it } from 'vitest';
import { renderErrorsDoc } from '../scripts/errors-doc.js';
import { renderHubProtocolDoc } from '../scripts/hub-protocol-doc.js';

describe('generated documentation', () => {
  it('docs/hub-protocol.md matches the operation registry (run `npm run docs:hub-protocol`)', async () => {
    const file = fs.readFileSync(path.resolve(import.meta.dirname, '../docs/hub-protocol.md'), 'utf8');
    expect(file).toBe(await renderHubProtocolDoc());
  });

  it('docs/errors.md matches the error catalogues (run `npm run docs:errors`)', () => {
    const file = fs.readFileSync(path.resolve(import.meta.dirname, '../docs/errors.md'), 'utf8');
    expect(file).toBe(renderErrorsDoc());
  });
});

describe('docs/architecture.md', () => {
  it('has one row per hub module in its module table, each naming what the module needs', async () => {
    const file = fs.readFileSync(path.resolve(import.meta.dirname, '../docs/architecture.md'), 'utf8');
    const table = file.slice(file.indexOf('| Module | Needs |'));
    const rows = new Map<string, string[]>();
    for (const line of table.split('\n').slice(2)) {
      if (!line.startsWith('|')) break;
      const [, name, needs] = line.split('|').map((cell) => cell.trim());
      rows.set(String(name).replace(/`/g, ''), (needs ?? '').split(',').map((n) => n.trim()).filter(Boolean));
    }
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-arch-'));
    const hub = createHub(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), systemClock, systemTimers, pino({ level: 'silent' }));
    try {
      const modules = new Map(hub.modules.map((m) => [m.name, [...m.needs].sort()]));
      // The cluster module exists on PostgreSQL only; this hub runs on SQLite.
      expect([...rows.keys()].filter((n) => n !== 'cluster').sort()).toEqual([...modules.keys()].sort());
      expect(rows.get('cluster')).toEqual(['storage']);
      for (const [name, needs] of modules) expect([...(rows.get(name) ?? [])].sort(), `${name} needs`).toEqual(needs);
    } finally {
      await hub.storage.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
