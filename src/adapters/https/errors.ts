import { defineErrors } from '../../platform/errors.js';

export const httpsErrors = defineErrors({
  HTTPS_NOT_SERVING: ['conflict', 'HTTPS is not serving ({state}): "always use HTTPS" would send every browser to an address that does not answer.'],
});
