import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './net.js';

/** Debian's mosquitto (the real broker), or null when it is not installed. */
export function mosquittoPath(): string | null {
  return findExecutable('mosquitto', ['/usr/sbin/mosquitto']);
}

export interface Mosquitto {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Runs mosquitto on 127.0.0.1 and a free port, anonymous unless `users` are given, without
 * persistence; waits until it accepts connections.
 */
export async function startMosquitto(options: { users?: Record<string, string> } = {}): Promise<Mosquitto> {
  const binary = mosquittoPath();
  if (!binary) throw new Error('mosquitto is not installed');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mosquitto-'));
  const port = await freePort();
  const conf = [
    `listener ${port} 127.0.0.1`,
    'persistence false',
    'log_dest stderr',
    // Run as root, mosquitto would switch to the `mosquitto` user, which cannot read this
    // private temp dir; as anyone else this line is ignored.
    `user ${os.userInfo().username}`,
  ];
  const users = Object.entries(options.users ?? {});
  if (users.length === 0) {
    conf.push('allow_anonymous true');
  } else {
    const passwd = findExecutable('mosquitto_passwd', ['/usr/bin/mosquitto_passwd']);
    if (!passwd) throw new Error('mosquitto_passwd is not installed; it is needed to give mosquitto users');
    const passwordFile = path.join(dir, 'passwd');
    await writeFile(passwordFile, '', { mode: 0o600 });
    for (const [user, password] of users) {
      const made = spawnSync(passwd, ['-b', passwordFile, user, password], { encoding: 'utf8', timeout: 5000 });
      if (made.status !== 0) throw new Error(`mosquitto_passwd failed: ${made.stderr || made.error?.message}`);
    }
    conf.push('allow_anonymous false', `password_file ${passwordFile}`);
  }
  const confFile = path.join(dir, 'mosquitto.conf');
  await writeFile(confFile, conf.join('\n') + '\n');

  const child = spawn(binary, ['-c', confFile], { detached: false, stdio: ['ignore', 'ignore', 'pipe'] });
  // The broker must not outlive the test process, even when a test forgets stop().
  const killOnExit = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', killOnExit);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const stop = async () => {
    process.off('exit', killOnExit);
    if (!hasExited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 5000;
  while (!(await canConnect(port))) {
    if (hasExited || Date.now() > deadline) {
      await stop();
      throw new Error(`mosquitto did not start listening on ${port} within 5 s:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `mqtt://127.0.0.1:${port}`, port, stop };
}

function findExecutable(name: string, known: string[]): string | null {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const candidate of [...known, ...dirs.map((dir) => path.join(dir, name))]) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}
