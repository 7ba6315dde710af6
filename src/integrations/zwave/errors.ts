import { defineErrors } from '../../platform/errors.js';

/** Failures of the Z-Wave integration's operations (docs/zwave.md). */
export const zwaveErrors = defineErrors({
  ZWAVE_OFF: ['conflict', 'Z-Wave is off: set ZWAVE_PORT (a serial device or tcp://host:port), in the environment or the admin panel.'],
  ZWAVE_NOT_READY: ['unavailable', 'The Z-Wave controller is not ready: {reason}'],
  ZWAVE_INCLUSION_ACTIVE: ['conflict', 'The controller is already {mode}: stop that first.'],
  ZWAVE_NO_PIN_ASKED: ['conflict', 'No device is waiting for its PIN: the PIN is entered when an S2 device being included asks for it.'],
  ZWAVE_NODE_NOT_FOUND: ['not_found', 'There is no Z-Wave node {nodeId}.'],
  ZWAVE_NODE_NOT_FAILED: ['conflict', 'Node {nodeId} still answers: only a failed node can be removed this way (exclude it instead).'],
  ZWAVE_CONTROLLER_REFUSED: ['upstream_failed', 'The Z-Wave controller refused: {reason}'],
});
