// What a finished relocation leaves behind that a later run must not inherit, for a run that ends, or a start that
// finds the run cut off right after its done marker: the drop directory's renames forgotten (a file left there is
// renamed in again before it counts), the record of the network committed (a later run's network, the same on paper —
// a DHCP template — is applied and verified, not skipped as in place), the steps' records. The tenth to thirteenth
// hostile re-tests of issue 36 reused each of them after the marker was removed. The signed config's moment is closed
// by `prepare` when it re-arms the node for its next relocation (last-issued.ts): until then the same config may run
// again (the marker removed by hand), as a re-run of it must.
import type { Host } from '../host/host';
import { committedFile, desiredStateFile, earlyRecordFile } from '../network/early';
import { STATE_FILES } from '../paths';

/**
 * The records of one relocation (`prepare` removes them too when it re-arms the node): the drop directory's renames,
 * the network committed and the early phase's record (it says committed), the steps' records (the rollouts'
 * baselines, the domain's progress) — the thirteenth re-test found each reused after the marker alone was removed.
 */
export const relocationRecords = (stateDir: string): string[] => [
  ...[STATE_FILES.dropDirRenames, 'rollouts.json', 'domain.json'].map((f) => `${stateDir}/${f}`),
  committedFile(stateDir),
  desiredStateFile(stateDir),
  earlyRecordFile(stateDir),
];

export async function closeRelocation(host: Host, stateDir: string): Promise<void> {
  for (const file of relocationRecords(stateDir)) await host.remove(file);
}
