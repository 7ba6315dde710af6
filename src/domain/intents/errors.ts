import { defineErrors } from '../../platform/errors.js';

/**
 * Failures of the intent engine: its sentence templates, and what it reports per target when
 * carrying out a sentence.
 */
export const intentErrors = defineErrors({
  INTENTS_DATA_INVALID: ['invalid', '{source}: {problem}'],
  INTENTS_LANGUAGE_INVALID: ['invalid', '"{language}" is not a language code'],
  INTENTS_LANGUAGE_UNSUPPORTED: ['not_found', 'No sentence templates for language "{language}"'],
  NOT_FOUND: ['not_found', '{name} is no longer there'],
  UNSUPPORTED: ['unprocessable', '{name} has no {capability} capability'],
  DEVICE_FAILED: ['upstream_failed', '{name} {failure}'],
  ZONE_FAILED: ['upstream_failed', '{name} did not take the volume'],
  RUN_FAILED: ['unprocessable', '{name} did not start'],
  /** A target failed with an error that carries no code of its own. */
  FAILED: ['unprocessable', '{reason}'],
  /** Nothing carried out: not understood, unsure, ambiguous or nothing to act on; the message is the spoken-style answer. */
  INTENT_NOT_UNDERSTOOD: ['unprocessable', '{speech}'],
  /** Some targets failed; the message is the spoken-style answer. */
  INTENT_NOT_CARRIED_OUT: ['unprocessable', '{speech}'],
});
