import { defineErrors } from '../../platform/errors.js';

/** Failures of remote controllers: pairing, their tokens and sessions, key dispatch. */
export const remoteErrors = defineErrors({
  PAIRING_REQUEST_NOT_FOUND: ['not_found', 'No pairing request {requestId}.'],
  /** 403, like a refused credential on a route that needs none: a 401 would ask for a token the remote cannot have yet. */
  PAIRING_CODE_INVALID: ['forbidden', 'Wrong pairing code; {attemptsLeft} attempts left for this request.'],
  PAIRING_RATE_LIMITED: ['rate_limited', 'Too many wrong pairing codes {where}; try again in {retryAfterSeconds} s.'],
  TOO_MANY_PAIRING_REQUESTS: ['rate_limited', 'Too many open pairing requests {where}; try again in {retryAfterSeconds} s.'],
  PAIRING_EXPIRED: ['conflict', 'Pairing request {requestId} expired; open a new one.'],
  PAIRING_CLOSED: ['conflict', 'Pairing request {requestId} is already {status}.'],
  REMOTE_NOT_FOUND: ['not_found', 'No paired remote {id}.'],
  NO_ACTIVE_SPACE: ['conflict', 'The remote has no active space; select one first.'],
  KEY_NOT_MAPPED: ['not_found', 'Key {key} is mapped to nothing here, and the active source has no command of that name.'],
});
