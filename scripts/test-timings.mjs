// Prints where a Vitest run's time went, from its JSON report (`--reporter=json --outputFile=F`):
// every test file by wall time, slowest first, and the sum. `.ci/run` prints it after each run so
// that the CI log shows which files to speed up as the suite grows (CI has 20 minutes).
import fs from 'node:fs';
import path from 'node:path';

const file = process.argv[2];
if (!file || !fs.existsSync(file)) {
  console.log(`test-timings: no report at ${file ?? '(none given)'}`);
  process.exit(0);
}
const report = JSON.parse(fs.readFileSync(file, 'utf8'));
const rows = (report.testResults ?? [])
  .map((r) => ({ name: path.relative(process.cwd(), r.name), ms: Math.max(0, (r.endTime ?? 0) - (r.startTime ?? 0)), tests: (r.assertionResults ?? []).length, status: r.status }))
  .sort((a, b) => b.ms - a.ms);
const total = rows.reduce((sum, r) => sum + r.ms, 0);
console.log(`\nTest files by wall time (${rows.length} files, ${(total / 1000).toFixed(1)} s summed over the workers):`);
for (const r of rows) console.log(`${(r.ms / 1000).toFixed(1).padStart(7)} s  ${String(r.tests).padStart(4)} tests  ${r.status === 'passed' ? '' : `${r.status}  `}${r.name}`);
