import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Measurement } from './load.js';
import { REPO_ROOT } from './service.js';

export interface EnvironmentInfo {
  date: string;
  cores: number;
  cpuModel: string;
  node: string;
  platform: string;
  arch: string;
  totalMemoryBytes: number;
  loadAverage: number[];
  git: { commit: string | null; srcDirty: boolean | null };
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
  } catch {
    return null;
  }
}

export function environmentInfo(now = new Date()): EnvironmentInfo {
  const cpus = os.cpus();
  const status = git(['status', '--porcelain', '--', 'src']);
  return {
    date: now.toISOString(),
    cores: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: os.platform(),
    arch: os.arch(),
    totalMemoryBytes: os.totalmem(),
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
    git: { commit: git(['rev-parse', '--short', 'HEAD']), srcDirty: status === null ? null : status !== '' },
  };
}

export function headerLine(env: EnvironmentInfo): string {
  const commit = env.git.commit ? ` · commit ${env.git.commit}${env.git.srcDirty ? ' (src/ modified)' : ''}` : '';
  return `# ${env.date} · ${env.cores} cores · ${env.cpuModel} · Node ${env.node}${commit}`;
}

export type Verdict = 'PASS' | 'FAIL';

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const fmt = {
  int: (n: number | null) => (n === null ? '-' : Math.round(n).toLocaleString('en-US')),
  fixed: (digits: number) => (n: number | null) => (n === null ? '-' : n.toFixed(digits)),
};

/** A plain text table: first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** Rows for one measured comparison: requests/s, latency, failures and server cost. */
export function measurementTable(measurements: Measurement[]): string {
  return table(
    ['', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'timeouts', 'srv CPU µs/req', 'srv CPU cores', 'srv RSS MiB', 'loadgen CPU cores', 'other CPU cores'],
    measurements.map((m) => [
      m.label,
      fmt.int(m.requestsPerSec),
      fmt.fixed(0)(m.latencyMs.p50),
      fmt.fixed(0)(m.latencyMs.p99),
      fmt.int(m.non2xx),
      fmt.int(m.errors),
      fmt.int(m.timeouts),
      fmt.int(m.serverCpuMicrosPerRequest),
      fmt.fixed(2)(m.serverCpuCores),
      m.serverRssBytes === null ? '-' : (m.serverRssBytes / 2 ** 20).toFixed(0),
      fmt.fixed(2)(m.loadGeneratorCpuCores),
      fmt.fixed(2)(m.otherCpuCores),
    ]),
  );
}

export const format = fmt;

/** Writes `bench/results/<name>-<timestamp>.json` and returns its path. */
export function writeResults(name: string, date: string, payload: unknown): string {
  const dir = path.join(REPO_ROOT, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const stamp = date.replace(/:/g, '').replace(/\.\d+Z$/, 'Z'); // 2026-11-21T114500Z
  const file = path.join(dir, `${name}-${stamp}.json`);
  fs.writeFileSync(file, `${JSON.stringify(payload, null, 2)}\n`);
  return file;
}
