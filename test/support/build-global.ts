import { buildService } from './child.js';

/**
 * Builds dist/ once, before any test file runs: the tests that run the service as `npm start`
 * does use it, and with several files at a time a rebuild by one (which replaces dist/) would pull
 * the program from under another's starting server. The test workers inherit the variable.
 */
export default function setup(): void {
  buildService();
  process.env.HCS_TEST_DIST_BUILT = '1';
}
