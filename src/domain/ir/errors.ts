import { defineErrors } from '../../platform/errors.js';

/**
 * Failures of IR data and of the `IrTransmitter` port. They are domain vocabulary, not the iTach
 * adapter's: any extender behind the port fails in these terms, and devices raise the data ones.
 */
export const irErrors = defineErrors({
  INVALID_IR_COMMAND: ['invalid', 'Invalid IR command: {problem}'],
  INVALID_EXTENDER_IP: ['invalid', 'extenderIp {extenderIp} is not an IP address.'],
  INVALID_EXTENDER_HOST: ['invalid', 'IR extender address is missing'],
  IR_EXTENDER_TIMEOUT: ['timeout', 'IR extender {extender} {what}'],
  IR_EXTENDER_UNREACHABLE: ['upstream_failed', 'IR extender {extender} {what}'],
  IR_EXTENDER_PROTOCOL_ERROR: ['upstream_failed', 'IR extender {extender} {what}'],
  IR_EXTENDER_BUSY: ['unavailable', 'IR extender {extender} {what}'],
  IR_EXTENDER_ERROR: ['upstream_failed', 'IR extender {extender} rejected the command: {reason}'],
  IR_CLIENT_CLOSED: ['unavailable', 'IR client is shut down'],
});
