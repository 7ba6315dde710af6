import { defineErrors } from '../../platform/errors.js';

/** Failures of signing in; a missing or bad token is the call pipeline's (platform/errors.ts). */
export const authErrors = defineErrors({
  TOO_MANY_LOGIN_ATTEMPTS: ['rate_limited', 'Too many failed logins; try again later.'],
  INVALID_CREDENTIALS: ['unauthenticated', 'Username or password is wrong.'],
});
