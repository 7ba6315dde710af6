import { defineErrors } from '../../platform/errors.js';

export const accessoryHubErrors = defineErrors({
  ACCESSORY_HUB_OFF: ['unavailable', 'The accessory hub is off (ACCESSORY_HUB=off, or Homebridge is not installed).'],
  ACCESSORY_HUB_NOT_RUNNING: ['unavailable', 'Homebridge is not running ({state}); try again shortly.'],
  ACCESSORY_HUB_UNREACHABLE: ['upstream_failed', "Homebridge's accessory server did not answer: {reason}"],
  INVALID_ACCESSORY_HUB_SETTINGS: ['invalid', 'Invalid accessory hub settings: {problem}.'],
});
