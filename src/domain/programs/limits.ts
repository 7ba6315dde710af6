/**
 * Limits of a program and the timer checks that both authoring formats apply: the canonical
 * step schemas (`steps.ts`) and the YAML compiler (`yaml.ts`) import them from here, so neither
 * imports the other's helpers.
 */
import { Cron } from 'croner';

export const PROGRAM_LIMITS = {
  /** Steps of one program in total, on and off paths, nested steps and containers counted. */
  maxSteps: 500,
  maxDelayMs: 24 * 60 * 60 * 1000,
  maxTimeoutMs: 60 * 60 * 1000,
  minIntervalMs: 1000,
  maxIntervalMs: 31 * 24 * 60 * 60 * 1000,
  /** Containers (parallel, condition) inside containers. */
  maxNesting: 16,
  maxBranches: 32,
  maxYamlLength: 200_000,
} as const;

export { isValidTimezone } from '../../platform/timezones.js';

/** The problem with a cron expression in words, or undefined when it is usable. */
export function cronProblem(expression: string, timezone?: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return `needs 5 fields (minute hour day month weekday) or 6 (seconds first), not ${fields.length}`;
  try {
    const cron = new Cron(expression.trim(), { paused: true, ...(timezone ? { timezone } : {}) });
    if (!cron.nextRun()) return 'never matches a date';
    return undefined;
  } catch (e) {
    return (e instanceof Error ? e.message : String(e)).replace(/^CronPattern: /, '');
  }
}
