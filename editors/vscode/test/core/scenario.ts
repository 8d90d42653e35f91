// The stand-in model's script for the core and extension tests (test/scenario.json, see
// docs/scripted-model.md): each rule answers prompts containing its word.

import scenario from '../scenario.json';

export const GREETING = 'Hello from the stand-in model.';
export const SCENARIO = scenario;
