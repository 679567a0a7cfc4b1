// A test process that dies without running its cleanup, for the testbed's cleanup tests: it boots a machine
// with a stick plugged in, prints what it created as one JSON line, then dies the way it is told:
//   exit  — process.exit(3) (the `exit` safety net must clean up)
//   throw — an uncaught exception (the same safety net)
//   hang  — waits to be SIGKILLed by the parent (nothing runs: the next run's sweep must clean up)
import { Testbed } from '../testbed/index';

const mode = process.argv[2];
if (mode !== 'exit' && mode !== 'throw' && mode !== 'hang') {
  console.error('usage: crash-child.ts exit|throw|hang');
  process.exit(2);
}
const bed = new Testbed();
const machine = await bed.machine();
const loop = await bed.insertMedia(machine, { 'site-config.yaml': 'kind: SiteConfig\n' });
await machine.boot();
process.stdout.write(`${JSON.stringify({ pid1: machine.pid, cgroup: machine.cgroup, loop: loop.device, image: loop.image, diskDir: machine.disk.dir })}\n`);
if (mode === 'exit') process.exit(3);
if (mode === 'throw') throw new Error('crash-child: dying on purpose');
setInterval(() => undefined, 60_000);
