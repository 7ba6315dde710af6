import { CAPABILITY_MODEL, type CapabilityName } from './capability-table.js';
import { DEVICE_CLASS_MODEL, type DeviceClass } from './device-classes.js';

/**
 * The entity domains a device shows up as (intents, entities, MQTT), from its class and its
 * derived capabilities. It is its own module because it is a view of a device already derived:
 * the graph and the intents read it, the derivation does not.
 */

/** Entity domains in the order a device's entities are listed. */
export const DEVICE_ENTITY_DOMAINS = ['light', 'switch', 'fan', 'lock', 'media_player', 'climate', 'cover', 'remote', 'sensor', 'binary_sensor', 'event'] as const;

/**
 * The entity domains a device shows up as: its class's domain first, then one per other distinct
 * domain of its capabilities, where plain on/off (`switch`) folds into any richer domain that also
 * switches. A generic device takes its capabilities' domains. Scenes get their own entities.
 */
export function entityDomainsOf(device: { deviceClass: DeviceClass; capabilities: readonly CapabilityName[] }): string[] {
  const domains = new Set<string>();
  if (device.deviceClass !== 'generic') domains.add(DEVICE_CLASS_MODEL[device.deviceClass].entityDomain);
  const admitted = DEVICE_CLASS_MODEL[device.deviceClass].capabilities;
  for (const capability of device.capabilities) {
    if (capability === 'scenes') continue;
    // What the class already covers shows up in its own domain (a light's power is the light).
    if (device.deviceClass !== 'generic' && admitted.includes(capability)) continue;
    domains.add(CAPABILITY_MODEL[capability].entityDomain);
  }
  if (domains.has('switch') && ['light', 'fan', 'media_player', 'climate', 'cover', 'remote'].some((d) => domains.has(d))) domains.delete('switch');
  return DEVICE_ENTITY_DOMAINS.filter((d) => domains.has(d));
}

/** The device's primary entity domain: its class's, or for a generic device its first capability's. */
export function entityDomainOf(device: { deviceClass: DeviceClass; capabilities: readonly CapabilityName[] }): string | undefined {
  return entityDomainsOf(device)[0];
}
