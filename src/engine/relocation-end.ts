// What a finished run leaves behind that a later run must not inherit, for a run that ends, or a start that finds the
// run cut off right after its done marker: the drop directory's renames (a file left there is renamed in again before
// it counts) and the steps' records (the rollouts' baselines, the domain's progress). The tenth to thirteenth hostile
// re-tests of issue 36 reused each of them after the marker was removed. The signed config's moment and the record of
// the network committed are the next relocation's to close: `prepare` does, when it re-arms the node (relocationRecords,
// last-issued.ts); until then a re-run of the same config (the marker removed by hand) finds its network in place.
import type { Host } from '../host/host';
import { committedFile, desiredStateFile, earlyRecordFile } from '../network/early';
import { STATE_FILES } from '../paths';

const runRecords = (stateDir: string): string[] => [STATE_FILES.dropDirRenames, 'rollouts.json', 'domain.json'].map((f) => `${stateDir}/${f}`);

/**
 * The records of one relocation, which `prepare` removes when it re-arms the node: the run's, and the network committed
 * with the early phase's record (both say committed: the next site's network, the same on paper — a DHCP template —
 * would be skipped as in place, the eleventh and twelfth re-tests). The early record first: a prepare cut off between
 * the two must not leave it saying committed without the digest beside it, which the early phase trusts and the run
 * does not (the twenty-first re-test, F3).
 */
export const relocationRecords = (stateDir: string): string[] => [...runRecords(stateDir), earlyRecordFile(stateDir), committedFile(stateDir), desiredStateFile(stateDir)];

export async function closeRelocation(host: Host, stateDir: string): Promise<void> {
  for (const file of runRecords(stateDir)) await host.remove(file);
}
