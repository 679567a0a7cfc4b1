// The site-config API the rest of the agent uses (run loop, plan, validate).
export { loadSiteConfig, validateEveryCandidate, locateSiteConfigs, type LoadResult, type CandidateReport } from './load';
export { readMachineIdentity, matchProblems, type MachineIdentity } from './identity';
export { checkAgainstCluster, type ClusterIdentity } from './cluster-check';
export { parseDuration, formatDuration } from './duration';
export { validateNmstate } from './nmstate';
export type { LoadedSiteConfig, ResolvedSiteConfig, ValidationProblem } from './types';
