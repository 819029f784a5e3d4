import { z } from 'zod';
import { defineCommand } from '../define.js';

/**
 * Rebuilds every read model of the projections service from the whole log and compares each with
 * the live one at the same event. It replays the log, so it is an operator's signed command (the
 * CLI's `agora verify-read-models`), one at a time, never an open HTTP endpoint. It writes nothing;
 * it answers `{ok, readModels: [{name, equal, events, position}]}`.
 */
export const VerifyReadModels = defineCommand({
  type: 'VerifyReadModels',
  service: 'projections',
  aggregate: 'read_models',
  verb: 'verify',
  roles: ['operator'],
  summary: 'Rebuild every read model from the log and compare it with the live one (writes nothing; one at a time)',
  payload: z.object({}).strict(),
});

