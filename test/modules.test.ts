/**
 * The hub as modules: ordering by declared needs, readiness per module, every operation offered
 * under `hub.ops`, stop after a failed start, and the real hub's modules in a valid order.
 */
import fs from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createHub, type Hub } from '../src/hub.js';
import { ManualClock } from '../src/platform/clock.js';
import { inDependencyOrder, type HubModule } from '../src/platform/module.js';
import { tempDataDir } from './support/server.js';

const module = (name: string, needs: string[] = []): HubModule => ({ name, needs, operations: {} });
const names = (modules: HubModule[]) => modules.map((m) => m.name);

describe('inDependencyOrder', () => {
  it('keeps the given order where it is valid and moves a module after what it needs', () => {
    expect(names(inDependencyOrder([module('a'), module('b', ['a']), module('c')]))).toEqual(['a', 'b', 'c']);
    expect(names(inDependencyOrder([module('b', ['a']), module('c', ['b']), module('a')]))).toEqual(['a', 'b', 'c']);
  });

  it('refuses a cycle, an unknown need and a name given twice', () => {
    expect(() => inDependencyOrder([module('a', ['c']), module('b', ['a']), module('c', ['b'])])).toThrow('modules need each other: a → c → b → a');
    expect(() => inDependencyOrder([module('a', ['nope'])])).toThrow('module a needs nope, which no module provides');
    expect(() => inDependencyOrder([module('a'), module('a')])).toThrow('module a is defined twice');
  });
});

describe('the hub', () => {
  let hub: Hub | undefined;
  let dataDir: string | undefined;

  afterEach(async () => {
    await hub?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    hub = undefined;
    dataDir = undefined;
  });

  function build(dir = tempDataDir()): Hub {
    dataDir = dir;
    const config = loadConfig({ DATA_DIR: dir, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'test-password-1' });
    const clock = new ManualClock(Date.now());
    hub = createHub(config, clock, clock, pino({ level: 'silent' }));
    return hub;
  }

  it('starts each module after what it needs and is ready once all have started', async () => {
    const h = build();
    const order = names([...h.modules]);
    for (const [index, m] of h.modules.entries()) {
      for (const need of m.needs) expect(order.indexOf(need), `${m.name} needs ${need}`).toBeLessThan(index);
    }
    expect(order).toEqual(expect.arrayContaining(['storage', 'auth', 'state', 'devices', 'drivers', 'program-catalog', 'home', 'programs', 'scenes', 'graph', 'intents']));
    expect(h.readiness.waitingFor).toEqual(order);
    await h.start();
    expect(h.readiness.ready).toBe(true);
  });

  it('offers every registered operation under hub.ops, once', () => {
    const h = build();
    const offered = Object.values(h.ops).flatMap((group) => Object.values(group).map((op) => op.name));
    expect(new Set(offered).size).toBe(offered.length);
    expect(offered.sort()).toEqual(h.operations.list().map((op) => op.name).sort());
    // Operations moved between modules keep their paths.
    expect(h.ops.home.runZoneProgram.name).toBe('zones.program.run');
    expect(h.ops.home.listPresets.name).toBe('activity_presets.list');
    expect(h.ops.state.listStates.name).toBe('state.list');
    expect(h.ops.scenes.runScene.name).toBe('scenes.run');
    expect(h.ops.devices.deviceAction.name).toBe('devices.action');
  });

  it('stops every module after a start that failed half-way, and is not ready', async () => {
    const first = build();
    await first.start();
    // A zone record that is not JSON: the home module fails to load, after storage, auth, state and devices started.
    await first.storage.db.insertInto('documents').values({ kind: 'zone', id: 'broken', body: '{not json', updated_at: 0 }).execute();
    await first.stop();
    const broken = build(dataDir);
    await expect(broken.start()).rejects.toThrow(SyntaxError);
    expect(broken.readiness.waitingFor).toEqual(names([...broken.modules]).slice(names([...broken.modules]).indexOf('home')));
    await broken.stop();
    hub = undefined;
    // Stopped means closed: the database no longer answers.
    await expect(broken.storage.db.selectFrom('documents').selectAll().execute()).rejects.toThrow();
  });
});
