import { defineErrors } from '../../platform/errors.js';

/** Failures of carrying out a sentence; the spoken-style answer is the message. */
export const intentErrors = defineErrors({
  INTENT_NOT_UNDERSTOOD: ['unprocessable', '{speech}'],
  INTENT_NOT_CARRIED_OUT: ['unprocessable', '{speech}'],
});
