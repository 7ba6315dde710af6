import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderHubProtocolDoc } from '../scripts/hub-protocol-doc.js';

describe('generated documentation', () => {
  it('docs/hub-protocol.md matches the operation registry (run `npm run docs:hub-protocol`)', async () => {
    const file = fs.readFileSync(path.resolve(import.meta.dirname, '../docs/hub-protocol.md'), 'utf8');
    expect(file).toBe(await renderHubProtocolDoc());
  });
});
