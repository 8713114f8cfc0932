// CPU profile of Stega's processes during a benchmark: load with
//   NODE_OPTIONS="--import ./bench/profile-hook.mjs" PROFILE_MATCH=sla-breach-worker \
//   PROFILE_DIR=/tmp/prof npm run bench -- delivery-throughput --cluster-storm-only
// Every process whose argv contains PROFILE_MATCH (default: sla-breach-worker) runs the V8
// sampling profiler from its start and writes PROFILE_DIR/<match>-<pid>.cpuprofile when it
// exits (open it in Chrome's DevTools, Performance panel). Node 20 refuses --cpu-prof in
// NODE_OPTIONS, hence the hook; `stega cluster` passes NODE_OPTIONS on to its children.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const match = process.env.PROFILE_MATCH ?? 'sla-breach-worker';
if (process.argv.some((arg) => arg.includes(match))) {
  const dir = process.env.PROFILE_DIR ?? path.join(process.cwd(), 'bench', 'results', 'profiles');
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 }); // µs
  session.post('Profiler.start');
  process.on('exit', () => {
    // the inspector answers synchronously, so the profile is written before the process ends
    session.post('Profiler.stop', (error, result) => {
      if (error) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        path.join(dir, `${match}-${process.pid}.cpuprofile`),
        JSON.stringify(result.profile),
      );
    });
  });
}
