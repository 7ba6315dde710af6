import { describe, expect, it } from 'vitest';
import { snapshotBytes, snapshotJson } from '../src/surfaces/snapshot-json.js';

describe('snapshot JSON', () => {
  const view = (i: number) => Object.freeze({ id: `d${i}`, name: `Lamp ${i}`, reading: { on: i % 2 === 0, brightness: i }, unit: '°C', nothing: undefined });
  const values: unknown[] = [
    null,
    42,
    'text',
    [],
    {},
    Object.freeze([view(1), view(2)]),
    { devices: Object.freeze([view(1), { plain: true, skip: () => 1 }, undefined, view(3)]), at: 5, gone: undefined },
    Object.freeze({ devices: Object.freeze({ a: view(4), b: Object.freeze({ state: Object.freeze({ x: [1, 2] }) }) }), when: new Date(0) }),
  ];

  it('writes what JSON.stringify writes, as a string and as UTF-8 bytes', () => {
    for (const value of values) {
      const expected = JSON.stringify(value) ?? 'null';
      expect(snapshotJson(value)).toBe(expected);
      expect(snapshotBytes(value).toString('utf8')).toBe(expected);
    }
  });

  it("reuses a frozen member's bytes: a list with one new member is assembled from the others' bytes", () => {
    const views = Array.from({ length: 100 }, (_, i) => view(i));
    const first = snapshotBytes(Object.freeze({ devices: Object.freeze(views) }));
    const changed = [...views];
    changed[50] = view(500);
    const second = snapshotBytes(Object.freeze({ devices: Object.freeze(changed) }));
    expect(JSON.parse(second.toString())).toEqual(JSON.parse(JSON.stringify({ devices: changed })));
    expect(first.toString()).toBe(JSON.stringify({ devices: views }));
    expect(second.length).toBe(Buffer.byteLength(JSON.stringify({ devices: changed })));
    // The same frozen value answers the same bytes.
    const listing = Object.freeze({ devices: Object.freeze(changed) });
    expect(snapshotBytes(listing)).toBe(snapshotBytes(listing));
  });
});
