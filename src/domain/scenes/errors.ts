import { defineErrors } from '../../platform/errors.js';

/** Failures of the scenes devices expose. */
export const sceneErrors = defineErrors({
  SCENE_NOT_FOUND: ['not_found', 'No scene {id}.'],
  DEVICE_OFFLINE: ['unavailable', 'Device {device} is offline; its last listed scenes are kept.'],
});
