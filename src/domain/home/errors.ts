import { defineErrors } from '../../platform/errors.js';

/** Failures of the home model: spaces, zones, macros, action maps, alerts and preferences. */
export const homeErrors = defineErrors({
  SPACE_NOT_FOUND: ['not_found', 'No space {id}.'],
  REMOTE_SOURCE_NOT_FOUND: ['not_found', 'Space {spaceId} has no remote source {sourceId}.'],
  INPUT_SELECT_NOT_SUPPORTED: ['unprocessable', 'Device {deviceId} offers no input selection command.'],
  ZONE_NOT_FOUND: ['not_found', 'No zone {id}.'],
  ZONE_GROUP_NOT_FOUND: ['not_found', 'No zone group {id}.'],
  ZONE_IN_USE: ['conflict', 'Zone {id} is used by {users}.'],
  VOLUME_CHANGE_REQUIRED: ['unprocessable', 'Give exactly one of volume (0–100) or delta.'],
  DEVICE_NOT_IN_ZONE: ['unprocessable', 'Device {deviceIds} is not in zone {zone}.'],
  VOLUME_NOT_SUPPORTED: ['unprocessable', 'This device {problem}.'],
  MACRO_NOT_FOUND: ['not_found', 'No macro {id}.'],
  MACRO_IN_USE: ['conflict', 'Macro {id} is run by {users}.'],
  MACRO_FAILED: ['unprocessable', 'Macro {macro} had failing steps.'],
  ACTION_MAP_NOT_FOUND: ['not_found', 'No action map {id}.'],
  ACTION_MAP_TARGET_INVALID: ['invalid', 'Give exactly one target: deviceId with command (and params), macroId, or programId.'],
  UNKNOWN_REMOTE_SOURCE: ['not_found', 'No device offers the remote source {sourceId}.'],
  INVALID_CURSOR: ['invalid', 'Unknown paging cursor {cursor}; start again without `before`.'],
  DESIGN_PROFILE_NOT_FOUND: ['not_found', 'No design profile {profileId}.'],
  INVALID_HOME_SETTING: ['invalid', '{field}: {problem}'],
});
