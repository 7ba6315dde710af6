import { defineErrors } from '../../platform/errors.js';

/** Failures of managing who sees which spaces and devices. */
export const accessErrors = defineErrors({
  USER_NOT_FOUND: ['not_found', 'No user {id}.'],
});
