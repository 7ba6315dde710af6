import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUES } from '../scripts/errors-doc.js';
import { defineErrors, DomainError, failureOf } from '../src/platform/errors.js';

const SRC = path.resolve(import.meta.dirname, '../src');

/** Every source file that builds a catalogue, found by reading the tree rather than trusting a list. */
function cataloguingFiles(): string[] {
  return (fs.readdirSync(SRC, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join(SRC, file))
    .filter((file) => /=\s*defineErrors\(/.test(fs.readFileSync(file, 'utf8')));
}

const isFactory = (value: unknown): boolean => typeof value === 'function' && typeof (value as { code?: unknown }).code === 'string' && typeof (value as { kind?: unknown }).kind === 'string';
const isCatalogue = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.keys(value).length > 0 && Object.values(value).every(isFactory);

describe('error catalogues', () => {
  it('lists every catalogue in the source tree in scripts/errors-doc.ts', async () => {
    const files = cataloguingFiles();
    const relative = (file: string) => path.relative(path.resolve(SRC, '..'), file).split(path.sep).join('/');
    expect(new Set(files.map(relative))).toEqual(new Set(ERROR_CATALOGUES.map((entry) => entry.source)));
    const listed = new Set(ERROR_CATALOGUES.map((entry) => entry.catalogue as unknown));
    for (const file of files) {
      const exported = Object.entries(await import(pathToFileURL(file).href)).filter(([, value]) => isCatalogue(value));
      expect(exported.length, `${relative(file)} exports a catalogue`).toBeGreaterThan(0);
      for (const [name, catalogue] of exported) expect(listed.has(catalogue), `${relative(file)}: ${name} is listed`).toBe(true);
    }
  });

  it('defines every code once, in SNAKE_CASE, under its own name', () => {
    const owners = new Map<string, string>();
    for (const entry of ERROR_CATALOGUES) {
      for (const [key, factory] of Object.entries(entry.catalogue)) {
        expect(factory.code).toBe(key);
        expect(factory.code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
        expect(owners.get(factory.code), `${factory.code} is in ${owners.get(factory.code)} and ${entry.title}`).toBeUndefined();
        owners.set(factory.code, entry.title);
      }
    }
    expect(owners.size).toBeGreaterThan(100);
  });

  it('refuses a code catalogued a second time', () => {
    expect(() => defineErrors({ DEVICE_NOT_FOUND: ['not_found', 'No device {id}.'] })).toThrow('error code DEVICE_NOT_FOUND is catalogued twice');
  });

  it('fills templates, records failures and raises recorded ones again with their kind', () => {
    const { HOLIDAY_CLOSED } = defineErrors({ HOLIDAY_CLOSED: ['unavailable', 'The {place} is closed until {day} {see the sign}.'] });
    const raised = HOLIDAY_CLOSED({ place: 'shop', day: 3 }, { details: { day: 3 }, retryAfterSeconds: 60 });
    expect(raised).toBeInstanceOf(DomainError);
    expect(raised).toMatchObject({ kind: 'unavailable', code: 'HOLIDAY_CLOSED', message: 'The shop is closed until 3 {see the sign}.', details: { day: 3 }, retryAfterSeconds: 60 });
    const recorded = HOLIDAY_CLOSED.info({ place: '{day}', day: 'Monday' });
    expect(recorded).toEqual({ code: 'HOLIDAY_CLOSED', message: 'The {day} is closed until Monday {see the sign}.' });
    expect(failureOf(recorded)).toMatchObject({ kind: 'unavailable', code: 'HOLIDAY_CLOSED', message: recorded.message });
  });
});
