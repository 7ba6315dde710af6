import type { Principal } from '../../platform/operations.js';

/** What an audience needs to know of a device: its id and its primary room. */
export interface DeviceLocation {
  id: string;
  room?: string | null;
}

/**
 * What one caller may see of the home. Operations that list or reach devices and spaces ask it,
 * so that a device or space outside it answers exactly as one that does not exist.
 */
export interface Audience {
  /** Admins see everything: callers skip filtering altogether (the device list's frozen answer stays shared). */
  readonly everything: boolean;
  seesSpace(spaceId: string): boolean;
  /** A device is seen when it is granted itself or when its room is a granted space; an unknown device never. */
  seesDevice(device: DeviceLocation | undefined): boolean;
}

/** Resolves the caller of an operation (`ctx.principal`) to what it may see. */
export interface AudienceResolver {
  audienceOf(principal: Principal | undefined): Audience;
}

export const EVERYTHING: Audience = { everything: true, seesSpace: () => true, seesDevice: (device) => device !== undefined };

export function grantedAudience(spaceIds: Iterable<string>, deviceIds: Iterable<string>): Audience {
  const spaces = new Set(spaceIds);
  const devices = new Set(deviceIds);
  return {
    everything: false,
    seesSpace: (spaceId) => spaces.has(spaceId),
    seesDevice: (device) => device !== undefined && (devices.has(device.id) || (!!device.room && spaces.has(device.room))),
  };
}

/** Who signed in without a grant, or a call with no principal at all: nothing. */
export const NOTHING: Audience = grantedAudience([], []);
