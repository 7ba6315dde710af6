import fs from 'node:fs';
import path from 'node:path';
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
