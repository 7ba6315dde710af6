import fs from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildService, runServerToExit, spawnServer, type ChildServer } from './support/child.js';
import { tempDataDir } from './support/server.js';

const children: ChildServer[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
});

async function login(url: string, password: string) {
  const res = await fetch(`${url}/app/os/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { accessToken: string }).accessToken;
}

// These tests run the service exactly as `npm start` does: built to dist/, then `node dist/main.js`.
beforeAll(() => buildService(), 180_000);

describe('service process', () => {
  it('keeps an acknowledged write across kill -9', async () => {
    const dataDir = tempDataDir();
    const env = { DATA_DIR: dataDir, ADMIN_PASSWORD: 'durable-pass-1' };
    const first = await spawnServer(env);
    children.push(first);
    const token = await login(first.url, 'durable-pass-1');
    first.proc.kill('SIGKILL');
    await first.exited;

    expect(first.lines.join('\n')).not.toContain('durable-pass-1');
    expect(first.lines.join('\n')).not.toContain(token);
    const second = await spawnServer(env);
    children.push(second);
    const me = await fetch(`${second.url}/v1/os/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    second.proc.kill('SIGTERM');
    await second.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a generated admin password once and stops within 5 s on SIGTERM', async () => {
    const dataDir = tempDataDir();
    const server = await spawnServer({ DATA_DIR: dataDir, ADMIN_PASSWORD: '' });
    children.push(server);
    const line = server.lines.find((l) => l.includes('generated password'));
    expect(line).toBeDefined();
    const password = /generated password (\S+)/.exec(line!)![1]!;
    const token = await login(server.url, password);
    expect(server.lines.join('\n')).not.toContain(token);

    const started = Date.now();
    server.proc.kill('SIGTERM');
    const { code } = await server.exited;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);

    // Second start: the account exists, no password is generated or printed again.
    const again = await spawnServer({ DATA_DIR: dataDir, ADMIN_PASSWORD: '' });
    children.push(again);
    expect(again.lines.some((l) => l.includes('generated password'))).toBe(false);
    again.proc.kill('SIGINT');
    expect((await again.exited).code).toBe(0);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses to start on a bad configuration value and names the variable', async () => {
    for (const [name, value] of [['PORT', 'eighty'], ['LOG_LEVEL', 'loud'], ['ACCESS_TOKEN_TTL_SECONDS', '5']] as const) {
      const { code, output } = await runServerToExit({ DATA_DIR: tempDataDir(), [name]: value });
      expect(code).toBe(2);
      expect(output).toContain(name);
    }
  });
});
