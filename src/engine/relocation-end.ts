// What a finished relocation leaves behind that the next one must not inherit, for a run that ends, or a start that
// finds the run cut off right after its done marker: the signed config's moment closed (last-issued.ts), the drop
// directory's renames forgotten (a file left there is renamed in again before it counts), and the record of the network
// committed (the next site's network, the same on paper — a DHCP template — is applied and verified there, not skipped
// as in place). The tenth to thirteenth hostile re-tests of issue 36 reused each of them after the marker was removed.
import type { Host } from '../host/host';
import { committedFile, desiredStateFile, earlyRecordFile } from '../network/early';
import { STATE_FILES } from '../paths';
import { closeLastIssued } from './last-issued';

export async function closeRelocation(host: Host, stateDir: string, digest: string): Promise<void> {
  await closeLastIssued(host, stateDir, digest);
  // The early phase's record too (it says committed), and the steps' records of this run (the rollouts' baselines, the
  // domain's progress): the thirteenth re-test found each reused after the marker alone was removed.
  const records = [STATE_FILES.dropDirRenames, 'rollouts.json', 'domain.json'].map((f) => `${stateDir}/${f}`);
  for (const file of [...records, committedFile(stateDir), desiredStateFile(stateDir), earlyRecordFile(stateDir)]) await host.remove(file);
}
