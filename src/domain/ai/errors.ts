import { defineErrors } from '../../platform/errors.js';

export const aiErrors = defineErrors({
  AI_NOT_RUNNING: ['conflict', 'The assistant is stopped; start it (POST /ai/start) first.'],
  PROMPT_TOO_LONG: ['invalid', 'A prompt is at most {max} characters; this one has {length}.'],
  AI_MODEL_UNKNOWN: ['not_found', 'The {backend} backend has no model {model}.'],
  AI_INSTALL_RUNNING: ['conflict', 'A model download is already running ({model}).'],
  AI_NOTHING_INSTALLED: ['conflict', 'No model is installed.'],
  AI_BACKEND_FAILED: ['upstream_failed', 'The {backend} backend failed: {reason}'],
  AI_OPERATION_UNSUPPORTED: ['unprocessable', 'The {backend} backend does not {what}.'],
});
