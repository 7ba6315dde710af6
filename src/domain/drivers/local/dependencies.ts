import path from 'node:path';
import type { Timers } from '../../../platform/clock.js';
import type { FileStore } from '../../../platform/files.js';
import type { ProcessRunner } from '../../../platform/processes.js';
import type { DriverType } from './manifest.js';

export interface DependencyInstallSettings {
  /** Kill the installer after this long. */
  timeoutMs: number;
  /** An npm registry URL to install from instead of npm's configured one. */
  npmRegistry?: string;
  pythonPath?: string;
}

export interface DependencyOutcome {
  /** What ran, e.g. `npm install --omit=dev --ignore-scripts`; none when the package declares no dependencies. */
  command?: string;
  ok: boolean;
  /** The installer's output (kept in the driver folder's install.log). */
  log: string;
  problem?: string;
}

const MAX_LOG_BYTES = 256 * 1024;

/** The Python packages folder a driver's `requirements.txt` installs into; the supervisor puts it on PYTHONPATH. */
export const PYTHON_PACKAGES_DIR = 'python_packages';


/**
 * Installs a driver's declared dependencies into its own folder: a JavaScript driver's
 * package.json with `npm install --omit=dev --ignore-scripts` (no install scripts run: a driver
 * package is code from elsewhere, and it runs only as the driver, supervised), a Python driver's
 * requirements.txt with `pip install --target`. Never through a shell; bounded in time and output.
 */
export async function installDependencies(deps: InstallerDeps & { files: Pick<FileStore, 'exists'> }, dir: string, driverType: DriverType, settings: DependencyInstallSettings): Promise<DependencyOutcome> {
  if (driverType === 'javascript' && (await deps.files.exists(path.join(dir, 'package.json')))) {
    const args = ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=http'];
    if (settings.npmRegistry) args.push(`--registry=${settings.npmRegistry}`);
    return runInstaller(deps, npmCommand(), args, dir, settings.timeoutMs);
  }
  if (driverType === 'python' && (await deps.files.exists(path.join(dir, 'requirements.txt')))) {
    const args = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--target', PYTHON_PACKAGES_DIR, '-r', 'requirements.txt'];
    return runInstaller(deps, settings.pythonPath ?? 'python3', args, dir, settings.timeoutMs);
  }
  return { ok: true, log: '' };
}

/** An installer's last three output lines, for an error message: what npm said when it failed. */
export const lastLines = (log: string): string => log.trim().split('\n').slice(-3).join(' / ').slice(0, 600);

/** npm next to the running Node when it is there (a service's PATH may not have it), else from PATH. */
export function npmCommand(): string {
  return process.platform === 'win32' ? 'npm.cmd' : 'npm';
}

/** What runs an installer: the hub's process runner and the timers its time limit runs on. */
export interface InstallerDeps {
  processes: ProcessRunner;
  timers: Timers;
}

/** Runs an installer (never through a shell), bounded in time and kept output; `onLine` sees each output line as it comes; `extraEnv` is set over the hub's environment. */
export function runInstaller(deps: InstallerDeps, command: string, args: string[], cwd: string, timeoutMs: number, onLine?: (line: string) => void, extraEnv: Record<string, string> = {}): Promise<DependencyOutcome> {
  const shown = [path.basename(command), ...args].join(' ');
  let log = `$ ${shown}\n`;
  const append = (line: string) => {
    if (log.length < MAX_LOG_BYTES) log += `${line}\n`;
    if (onLine && line.trim()) onLine(line.trimEnd());
  };
  // Installs are for this box, whatever the hub's own environment says: with CI set, packages'
  // install scripts act as on a build server (homebridge-dummy's patch-package fails the whole
  // install over a patch it cannot apply, where a person's install only warns).
  const { CI: _ci, ...env } = process.env;
  const proc = deps.processes.start(
    { label: path.basename(command), command, args, cwd, env: { ...env, npm_config_update_notifier: 'false', PIP_DISABLE_PIP_VERSION_CHECK: '1', ...extraEnv } },
    { onStdoutLine: (line) => append(line.toString('utf8')), onStderrLine: append },
  );
  const timer = deps.timers.setTimeout(() => {
    log += `\n[killed after ${timeoutMs} ms]\n`;
    proc.kill();
  }, timeoutMs);
  return proc.exited.then((exit) => {
    deps.timers.clearTimeout(timer);
    if (exit.startError) return { command: shown, ok: false, log: `${log}\n${exit.startError.message}\n`, problem: `${path.basename(command)} could not be started: ${exit.startError.message}` };
    const ok = exit.code === 0;
    return { command: shown, ok, log, ...(ok ? {} : { problem: `${path.basename(command)} exited with ${exit.signal ?? `code ${exit.code}`}` }) };
  });
}
