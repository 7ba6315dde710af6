import { defineErrors, errors } from '../../platform/errors.js';

/** Failures the hub protocol (`hub:command`) answers itself, before or instead of an operation's. */
export const hubProtocolErrors = defineErrors({
  UNKNOWN_COMMAND: ['not_found', 'Unknown command {command}; GET_PROTOCOL_CAPABILITIES lists them.'],
  INVALID_PAYLOAD: ['invalid', '{field} {problem}'],
});

/** Codes the hub protocol names differently from REST (CONTRACT: a payload that fails validation is INVALID_PAYLOAD). */
export const HUB_PROTOCOL_CODE_FOR: ReadonlyMap<string, string> = new Map([[errors.VALIDATION_FAILED.code, hubProtocolErrors.INVALID_PAYLOAD.code]]);
