import { defineErrors } from '../../platform/errors.js';

/** Failures of the home graph's reads and of entity services. */
export const graphErrors = defineErrors({
  ENTITY_NOT_FOUND: ['not_found', 'No entity {entityId}.'],
  SERVICE_NOT_SUPPORTED: ['unprocessable', '{target} has no service {service}.'],
  INVALID_SERVICE_DATA: ['invalid', 'data.{field} {problem}.'],
  CONTEXT_REQUIRED: ['invalid', 'Give spaceId, deviceId or both.'],
  DEVICE_NOT_IN_SPACE: ['unprocessable', 'Device {device} is not in space {space}.'],
});
