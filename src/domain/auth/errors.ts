import { defineErrors } from '../../platform/errors.js';

/** Failures of signing in and of managing accounts; a missing or bad token is the call pipeline's (platform/errors.ts). */
export const authErrors = defineErrors({
  TOO_MANY_LOGIN_ATTEMPTS: ['rate_limited', 'Too many failed sign-in attempts from this client; try again later.'],
  TOO_MANY_REGISTRATIONS: ['rate_limited', 'Too many registrations from this client; try again in {retryAfterSeconds} s.'],
  INVALID_CREDENTIALS: ['unauthenticated', 'Username or password is wrong.'],
  CURRENT_PASSWORD_WRONG: ['invalid', 'The current password is wrong.'],
  PASSWORD_UNCHANGED: ['invalid', 'The new password is the current one: choose another.'],
  // Raised only after the password matched, so that it tells nothing to someone guessing.
  ACCOUNT_DISABLED: ['forbidden', 'This account is disabled; ask an administrator to enable it.'],
  USER_NOT_FOUND: ['not_found', 'No account with id {id}.'],
  USERNAME_TAKEN: ['conflict', 'The username {username} is taken.'],
  LAST_ADMIN: ['conflict', 'This is the last enabled admin account; make another account admin first.'],
  REGISTRATION_CLOSED: ['forbidden', 'Registration is closed on this hub; ask an administrator for an account.'],
  // One code for a missing, unknown, used, expired or revoked code, so that guessing learns nothing.
  INVITE_INVALID: ['forbidden', 'The invite code is not valid.'],
  INVITE_NOT_FOUND: ['not_found', 'No invite with id {id}.'],
  INVITE_USED: ['conflict', 'The invite {id} has been used; remove the account it created instead.'],
});
