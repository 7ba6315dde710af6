import { defineErrors } from '../../platform/errors.js';

export const matterErrors = defineErrors({
  MATTER_OFF: ['unavailable', 'The Matter bridge is off: turn it on in the admin panel (or POST /v1/os/matter/settings {"enabled": true}), or set MATTER=on.'],
  MATTER_NOT_RUNNING: ['unavailable', 'The Matter bridge is not running here: {reason}'],
  MATTER_SET_BY_ENVIRONMENT: ['conflict', 'MATTER={mode} is set in the environment; it decides whether the bridge runs (unset it to choose here).'],
  MATTER_FABRIC_NOT_FOUND: ['not_found', 'No fabric {fabricIndex} on the bridge.'],
});
