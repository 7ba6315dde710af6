import { defineErrors } from '../../platform/errors.js';

/**
 * Failures of the player roster. A missing linked device or room is the devices' and the home's
 * (`DEVICE_NOT_FOUND`, `SPACE_NOT_FOUND`).
 */
export const playerErrors = defineErrors({
  PLAYER_NOT_FOUND: ['not_found', 'No player {id}.'],
  PLAYER_ADDRESS_INVALID: ['invalid', 'connection.ip {ip} is neither an IP address nor a host name.'],
});
