import { defineErrors } from '../../platform/errors.js';

export const releaseErrors = defineErrors({
  RELEASE_NOT_FOUND: ['not_found', 'No integration release {key}.'],
  RELEASE_VERSION_NOT_FOUND: ['not_found', 'Release {key} has no version {version}.'],
  RELEASE_STATE_CONFLICT: ['conflict', 'Release {key} {version} is {current}; {action} needs {needed}.'],
  RELEASE_VERSION_INVALID: ['invalid', 'A release needs a semantic version (1.2.3) in its manifest: {problem}.'],
  RELEASE_NOTHING_TO_DO: ['conflict', 'Release {key} has no {what}.'],
  RELEASE_PACKAGE_INVALID: ['invalid', 'The submission package cannot be imported: {problem}. Nothing was changed.'],
});
