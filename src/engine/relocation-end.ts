// What a finished relocation leaves behind that the next one must not inherit, for a run that ends, or a start that
// finds the run cut off right after its done marker: the signed config's moment closed (last-issued.ts), the drop
// directory's renames forgotten (a file left there is renamed in again before it counts), and the record of the network
// committed (the next site's network, the same on paper — a DHCP template — is applied and verified there, not skipped
// as in place). The tenth to twelfth hostile re-tests of issue 36 reused each of them after the marker was removed.
import type { Host } from '../host/host';
import { committedFile, desiredStateFile } from '../network/early';
import { STATE_FILES } from '../paths';
import { closeLastIssued } from './last-issued';

export async function closeRelocation(host: Host, stateDir: string, digest: string): Promise<void> {
  await closeLastIssued(host, stateDir, digest);
  for (const file of [`${stateDir}/${STATE_FILES.dropDirRenames}`, committedFile(stateDir), desiredStateFile(stateDir)]) await host.remove(file);
}
