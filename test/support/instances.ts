import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildServer } from './child.js';

export type Json = Record<string, unknown>;

/**
 * What a test of several service processes keeps track of: the children (SIGKILLed at the end if
 * still running), the temp folders (removed), and whatever else must be closed. `cleanUp` goes in
 * the file's afterAll.
 */
export class Instances {
  readonly children: ChildServer[] = [];
  private readonly dirs: string[] = [];
  private readonly closers: Array<() => unknown> = [];

  /** A temp folder removed at the end. */
  tmp(prefix: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }

  track(child: ChildServer): ChildServer {
    this.children.push(child);
    return child;
  }

  onCleanUp(close: () => unknown): void {
    this.closers.push(close);
  }

  async cleanUp(): Promise<void> {
    for (const close of this.closers) await close();
    for (const c of this.children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    for (const d of this.dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

/** A JSON request to one instance with a bearer token; the status and the parsed body. */
export async function call(base: string, method: string, p: string, token: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
}
