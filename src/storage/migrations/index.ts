import type { Migration } from 'kysely';
import { m0001Initial } from './0001-initial.js';
import { m0002Devices } from './0002-devices.js';
import { m0003HomeModel } from './0003-home-model.js';
import { m0004Accounts } from './0004-accounts.js';
import { m0005Cluster } from './0005-cluster.js';
import { m0006Activity } from './0006-activity.js';
import { m0007PasswordChange } from './0007-password-change.js';
import { m0008Automations } from './0008-automations.js';

/**
 * Versioned, forward-only migrations. A migration that has shipped is never edited; a change
 * is a new entry. Names sort in the order they apply.
 */
export const migrations: Record<string, Migration> = {
  '0001-initial': m0001Initial,
  '0002-devices': m0002Devices,
  '0003-home-model': m0003HomeModel,
  '0004-accounts': m0004Accounts,
  '0005-cluster': m0005Cluster,
  '0006-activity': m0006Activity,
  '0007-password-change': m0007PasswordChange,
  '0008-automations': m0008Automations,
};
