import { describe, expect, it } from 'vitest';
import { afterAnswer } from '../src/platform/after-answer.js';

describe('afterAnswer', () => {
  it('runs queued tasks after the current round and its promise reactions, in order, past one that throws', async () => {
    const seen: string[] = [];
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      afterAnswer(() => seen.push('first'));
      afterAnswer(() => {
        throw new Error('bookkeeping broke');
      });
      afterAnswer(() => seen.push('third'));
      void Promise.resolve().then(() => seen.push('promise reaction'));
      process.nextTick(() => seen.push('next tick'));
      seen.push('same turn');
      expect(seen).toEqual(['same turn']);
      await new Promise((resolve) => setImmediate(resolve));
      // The order of the tick and the reaction depends on where this test runs; both come first.
      expect(seen.slice(0, 3).sort()).toEqual(['next tick', 'promise reaction', 'same turn']);
      expect(seen.slice(3)).toEqual(['first', 'third']);
      // A task queued by a task waits for the next round.
      afterAnswer(() => afterAnswer(() => seen.push('queued by a task')));
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen).not.toContain('queued by a task');
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen.at(-1)).toBe('queued by a task');
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(warnings).toEqual(['bookkeeping broke']);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
