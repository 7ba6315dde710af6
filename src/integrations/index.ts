import type { IntegrationDefinition } from './contract.js';
import { zwaveIntegration } from './zwave/index.js';

/**
 * The integrations built from their folders (contract.ts): the hub derives their settings,
 * modules, routes, admin pages, data folders and error docs from this list. Adding one is its
 * folder and one line here.
 */
export const INTEGRATIONS: readonly IntegrationDefinition[] = [
  zwaveIntegration as unknown as IntegrationDefinition,
];
