// Runs TypeScript sources directly: `node --conditions=agora-source --import ./tools/ts-run/register.mjs file.ts`.
// Used by tests that start a child process from source; production runs the built dist/ files.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
