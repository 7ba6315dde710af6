import { describe, expect, it } from 'vitest';
import { createDomainEventBus } from '../src/domain/events.js';
import { ChangeFeed, type FeedItem } from '../src/domain/protocol/feed.js';
import { ManualClock } from '../src/platform/clock.js';
import { FeedFanout } from '../src/surfaces/realtime/feed-fanout.js';
import { eventually } from './support/ws-driver.js';

function setup(windowMs: number) {
  const events = createDomainEventBus();
  const feed = new ChangeFeed(events, new ManualClock(0));
  feed.start();
  const errors: unknown[] = [];
  const fanout = new FeedFanout(feed, windowMs, { error: (obj) => errors.push(obj) });
  fanout.start();
  const change = (n: number) => events.emit('device.state_changed', { deviceId: 'd1', state: { n }, changed: { n }, at: 0 });
  return { feed, fanout, errors, change, stop: () => (fanout.stop(), feed.stop()) };
}

describe('feed fan-out', () => {
  it('delivers a burst as one batch, in order, and a change after a quiet period at once', async () => {
    const { fanout, change, stop } = setup(20);
    const batches: number[][] = [];
    fanout.subscribe({}, (items) => batches.push(items.map((i) => (i.data as unknown as { state: { n: number } }).state.n)));
    for (let n = 1; n <= 5; n++) change(n);
    await eventually(() => batches.length === 1);
    expect(batches).toEqual([[1, 2, 3, 4, 5]]);
    // Within the window: held back until it ends, then one batch.
    change(6);
    change(7);
    await eventually(() => batches.length === 2);
    expect(batches[1]).toEqual([6, 7]);
    stop();
  });

  it('keeps delivering to a listener that threw once, and to the others, and logs the failure', async () => {
    const { fanout, change, errors, stop } = setup(0);
    const good: FeedItem[] = [];
    let calls = 0;
    fanout.subscribe({}, () => {
      calls++;
      if (calls === 1) throw new Error('boom');
    });
    fanout.subscribe({}, (items) => good.push(...items));
    change(1);
    await eventually(() => good.length === 1);
    change(2);
    await eventually(() => good.length === 2);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
    stop();
  });
});
