import { defineErrors } from '../../platform/errors.js';

/** Failures of programs: their records and scripts, runs and steps, automations and presets. */
export const programErrors = defineErrors({
  PROGRAM_NOT_FOUND: ['not_found', 'No program {id}.'],
  PROGRAM_IN_USE: ['conflict', 'Program {id} is used by {users}.'],
  INVALID_PROGRAM: ['invalid', '{path}: {problem}'],
  YAML_ERROR: ['invalid', '{where}{problem} (line {line}, column {column})'],
  UNKNOWN_REFERENCE: ['unprocessable', 'The script refers to what does not exist: {missing}.'],
  PROGRAM_RECURSION: ['unprocessable', 'The program would run itself: {cycle}.'],
  NO_OFF_PATH: ['unprocessable', 'Program {program} has no off path.'],
  PROGRAM_RUNNING: ['conflict', 'Program {id} is already running (run {runId}).'],
  RUN_QUEUE_FULL: ['conflict', 'Program {id} already has {waiting} runs waiting.'],
  RUN_NOT_FOUND: ['not_found', 'No program run {runId}.'],
  STEP_TIMEOUT: ['timeout', '{subject} did not {what} within {timeoutMs} ms.'],
  /** A step failed with something other than a catalogued failure. */
  STEP_FAILED: ['unprocessable', '{reason}'],
  CANCELLED: ['conflict', 'The run was cancelled.'],
  NESTED_PROGRAM_FAILED: ['unprocessable', 'Program {id} {status}.'],
  ZONE_VOLUME_FAILED: ['unprocessable', 'Volume failed on {deviceIds}.'],
  ZONE_HAS_NO_PROGRAM: ['conflict', 'Zone {zone} has no program assigned.'],
  NOT_AN_AUTOMATION: ['unprocessable', 'Program {program} has no timer.'],
  SEMANTIC_REQUIRED: ['invalid', 'Give `semantic` or `semantics`.'],
  SEMANTIC_NOT_FOUND: ['not_found', 'Program {programId} has no semantic {semantic}.'],
  PRESET_NOT_FOUND: ['not_found', 'No activity preset {id}.'],
  /** A Home Assistant automation that does not map to the hub's model: nothing is imported. */
  AUTOMATION_NOT_MAPPED: ['unprocessable', '{path}: {problem}'],
  /** An automation whose actions would trigger it again, seen at save. */
  AUTOMATION_LOOP: ['unprocessable', 'The automation would trigger itself: {why}.'],
  AUTOMATION_PAUSED: ['conflict', 'Automation {id} is paused: {reason}.'],
  NOT_AN_AUTOMATION_TRIGGER: ['not_found', 'Automation {id} has no trigger {trigger}.'],
  WEBHOOK_NOT_FOUND: ['not_found', 'No webhook {webhookId}.'],
  TOO_MANY_WEBHOOK_CALLS: ['rate_limited', 'Too many calls of this webhook; try again in {retryAfterSeconds} s.'],
  RUN_STOPPED: ['unprocessable', '{reason}'],
});
