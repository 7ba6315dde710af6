import { randomBytes } from 'node:crypto';
import type { Trigger } from './automation-model.js';

/**
 * Gives each webhook trigger without an id an unguessable one (192 random bits), at save. An
 * edit keeps the webhooks' addresses: the n-th webhook trigger without an id takes the n-th id
 * the program had.
 */
export function withWebhookIds(triggers: readonly Trigger[], previous: readonly Trigger[] = []): Trigger[] {
  const given = new Set(triggers.flatMap((t) => (t.type === 'webhook' && t.webhookId ? [t.webhookId] : [])));
  const kept = previous.flatMap((t) => (t.type === 'webhook' && t.webhookId && !given.has(t.webhookId) ? [t.webhookId] : []));
  let reuse = 0;
  return triggers.map((t) => {
    if (t.type !== 'webhook' || t.webhookId) return t;
    return { ...t, webhookId: kept[reuse++] ?? randomBytes(24).toString('base64url') };
  });
}
