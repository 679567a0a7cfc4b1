// node-forge's modules register themselves on the shared `forge` object. Importing only the ones we use
// (instead of 'node-forge', which loads all of them: 297 KB of the bundle) keeps the MachineConfig within
// its budget (reference/runtime-libs.md section 1). @types/node-forge types only the package root.
declare module 'node-forge/lib/forge' {
  import forge from 'node-forge';
  export default forge;
}
declare module 'node-forge/lib/asn1';
declare module 'node-forge/lib/util';
declare module 'node-forge/lib/oids';
declare module 'node-forge/lib/x509';
declare module 'node-forge/lib/pki';
declare module 'node-forge/lib/rsa';
